"""The Coder's scripts at a real script's length, written with ``coder_analysis_utils``.

A hosted Coder does not send a one-line call: it loads the view, checks the columns it is about to use, looks at
their coverage, computes the figures in pandas to see them before they are recorded, and only then records the
tracked calculations. The script here does the same around the item's standard analysis (``run_standard`` or
``run_statistics``), which still makes every analysis decision and records every cited figure, so the figures and
their checks are exactly the compact script's. Only columns the item names, and the profile lets a script analyse,
are read: an identifier or personal column is never printed.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..conversation import Conversation

_CALLS = ("run_standard", "run_statistics")
_BACKTICKED_RE = re.compile(r"`([^`]+)`")
_NOT_ANALYSED = {"identifier", "pii", "text"}  # intake.roles: never printed, never analysed

_TEMPLATE = '''\
"""{item}

Steps:
1. Load the `{view}` view through coder_analysis_utils.load_df: the table exactly as intake typed it (dates as
   timestamps, numbers as numbers), read from the job's Parquet cache, never from the raw file.
2. Check that every column this item uses is present and has the kind the data profile gives it; stop with the
   reason otherwise, so that nothing is computed from the wrong column.
3. Print the coverage of those columns (rows, missing values, distinct values), so that the notes say how many rows
   each figure covers.
4. Cross-check in pandas: the same aggregates the item asks for, printed for the notes; they are not recorded.
5. Record the item's figures as tracked calculations ({call}), which writes calculation_metadata.json, the chart
   and the notes in all_results.txt; the Validator then re-computes each recorded figure in DuckDB.
"""

from __future__ import annotations

import pandas as pd

from coder_analysis_utils import load_df, {call}

ITEM = {item!r}
VIEW = {view!r}
MEASURES = {measures!r}
CATEGORIES = {categories!r}
DATES = {dates!r}
USED = MEASURES + CATEGORIES + DATES


def check_columns(df: pd.DataFrame) -> None:
    """Stop before computing anything when a column is missing or has the wrong kind."""
    missing = [column for column in USED if column not in df.columns]
    if missing:
        raise SystemExit(f"{{VIEW}} lacks the columns {{missing}}: check the names against the data profile")
    not_numeric = [column for column in MEASURES if not pd.api.types.is_numeric_dtype(df[column])]
    if not_numeric:
        raise SystemExit(f"{{not_numeric}} should be numeric in {{VIEW}}: intake kept them as text")
    not_dates = [column for column in DATES if not pd.api.types.is_datetime64_any_dtype(df[column])]
    if not_dates:
        raise SystemExit(f"{{not_dates}} should be dates in {{VIEW}}: parse them before a time analysis")


def coverage(df: pd.DataFrame) -> None:
    """Rows, and missing and distinct values of each used column."""
    print(f"{{VIEW}}: {{len(df):,}} rows, {{len(df.columns)}} columns")
    for column in USED:
        missing = int(df[column].isna().sum())
        share = missing / len(df) if len(df) else 0.0
        print(f"  {{column}}: {{df[column].dtype}}, {{missing:,}} missing ({{share:.1%}}), "
              f"{{df[column].nunique(dropna=True):,}} distinct")


def measure_summary(df: pd.DataFrame) -> None:
    """Count, mean, spread and quartiles of each measure, and its rows outside the IQR fences."""
    for column in MEASURES:
        values = df[column].dropna()
        if values.empty:
            print(f"  {{column}}: no values")
            continue
        q1, q3 = values.quantile(0.25), values.quantile(0.75)
        fence = 1.5 * (q3 - q1)
        outside = int(((values < q1 - fence) | (values > q3 + fence)).sum())
        print(f"  {{column}}: n={{len(values):,}} sum={{values.sum():,.2f}} mean={{values.mean():,.2f}} "
              f"std={{values.std(ddof=1):,.2f}} median={{values.median():,.2f}} outside IQR fences={{outside:,}}")


def category_summary(df: pd.DataFrame) -> None:
    """The largest groups of each category, with each measure's total and mean per group."""
    for column in CATEGORIES:
        counts = df[column].value_counts(dropna=True)
        print(f"  {{column}}: {{len(counts):,}} groups; largest by rows: {{', '.join(map(str, counts.index[:5]))}}")
        for measure in MEASURES:
            table = df.groupby(column, dropna=True)[measure].agg(["sum", "mean", "count"])
            table = table.sort_values("sum", ascending=False).head(10)
            print(table.to_string(float_format=lambda v: f"{{v:,.2f}}"))


def period_summary(df: pd.DataFrame) -> None:
    """The span of each date column, and each measure's monthly totals at both ends of it."""
    for column in DATES:
        dates = df[column].dropna()
        if dates.empty:
            continue
        months = dates.dt.to_period("M").nunique()
        print(f"  {{column}}: {{dates.min():%Y-%m-%d}} to {{dates.max():%Y-%m-%d}}, {{months}} months")
        for measure in MEASURES:
            monthly = df.groupby(df[column].dt.to_period("M"))[measure].sum()
            print(f"  {{measure}} per month: first {{monthly.iloc[0]:,.2f}}, last {{monthly.iloc[-1]:,.2f}}")


def pair_summary(df: pd.DataFrame) -> None:
    """Pearson and Spearman coefficients of each pair of measures."""
    for index, first in enumerate(MEASURES):
        for second in MEASURES[index + 1:]:
            pair = df[[first, second]].dropna()
            if len(pair) < 3:
                continue
            pearson = pair[first].corr(pair[second])
            spearman = pair[first].corr(pair[second], method="spearman")
            print(f"  {{first}} ~ {{second}}: pearson={{pearson:.3f}} spearman={{spearman:.3f}} n={{len(pair):,}}")


df = load_df(VIEW)
check_columns(df)
coverage(df)
print("cross-check (printed only; the recorded figures come next):")
measure_summary(df)
category_summary(df)
period_summary(df)
pair_summary(df)
{call}({call_args})
'''


def sized_script(source: str, conv: Conversation) -> str:
    """The real-length script for a compact ``run_standard``/``run_statistics`` script; any other source as it is."""
    call = _standard_call(source)
    if call is None:
        return source
    name, item, language = call
    table, columns = _table_and_columns(item, conv.json_tag("data_profile") or {})
    if table is None:
        return source
    args = repr(item) if name == "run_statistics" else f"{item!r}, language={language!r}"
    return _TEMPLATE.format(
        item=" ".join(item.split()).replace('"""', "'''"),
        view=table,
        call=name,
        call_args=args,
        measures=[c["name"] for c in columns if c.get("role") == "measure"],
        categories=[c["name"] for c in columns if c.get("role") == "category"],
        dates=[c["name"] for c in columns if c.get("role") == "date" and c.get("dtype") == "datetime"],
    )


def _standard_call(source: str) -> tuple[str, str, str] | None:
    """``(function, item, language)`` of the script's one standard call, or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS):
            continue
        if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            languages = [
                k.value.value for k in node.keywords if k.arg == "language" and isinstance(k.value, ast.Constant)
            ]
            return node.func.id, node.args[0].value, str(languages[0]) if languages else "en"
    return None


def _table_and_columns(item: str, profile: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """The view the item works on and the analysable columns it names (all of them for an item naming none)."""
    tables = [t for t in profile.get("tables", []) if isinstance(t, dict) and t.get("view")]
    if not tables:
        return None, []
    named_views = set(_BACKTICKED_RE.findall(item)) | set(re.findall(r"[^\W]+", item))  # whole names, not parts
    table = next((t for t in tables if str(t["view"]) in named_views), tables[0])
    analysable = [
        c
        for c in table.get("columns", [])
        if isinstance(c, dict) and c.get("role") not in _NOT_ANALYSED and c.get("aggregation") != "none"
    ]
    named = set(_BACKTICKED_RE.findall(item))
    chosen = [c for c in analysable if c.get("name") in named] if named else analysable
    return str(table["view"]), chosen


__all__ = ["sized_script"]
