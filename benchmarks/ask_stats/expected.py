"""Expected answers of the ask statistics benchmark, computed independently of the product with pandas and SciPy.

Usage: python benchmarks/ask_stats/expected.py   # reads tables.json and questions.json, writes expected.json
       python benchmarks/ask_stats/expected.py --dir benchmarks/ask_stats/second   # the same for another set's folder

Nothing here imports ``insightloom``: the expected answers come from the data alone, by the rules below. They are
the documented rules the product's answers must follow too.

Data
    Each table is the CSV ``benchmarks/real_tables.py`` exports (``csv_text``: the first 20,000 rows, text quoted),
    its SHA-256 checked against ``tables.json``, read with ``pd.read_csv`` and its defaults: exactly the file a job
    reads. A missing value is a NaN after ``pd.read_csv``.
Rows
    A part's ``where`` (a list of ``{"column", "op", "value"}``, ``op`` one of ``== != > >= < <=``, all must hold)
    selects rows first. Then every row with a NaN in a column the statistic uses is dropped for that statistic
    (pairwise for two columns; for a group comparison, rows missing the value or the group).
Descriptive statistics (``column``)
    ``mean``; ``median``; ``std`` and ``var`` are sample statistics (ddof=1) unless the part says ``"ddof": 0``
    (the question says population); ``min``; ``max``; ``sum``; ``quantile`` ``q`` with numpy's default linear
    interpolation; ``skew`` is pandas ``.skew()`` (bias-corrected) and ``kurt`` pandas ``.kurt()`` (bias-corrected
    excess kurtosis); ``missing`` counts the column's NaN over the whole table; ``distinct`` counts its distinct
    non-missing values.
Counts and shares
    ``count_rows``: the rows meeting ``where``. ``share``: 100 × those rows / the rows with a value in every column
    the conditions name (a percentage).
Outliers (``column``)
    ``outliers_z``: values with ``|x − mean| / std > threshold`` (std with ddof=1; threshold 3 unless stated),
    strictly greater. ``outliers_iqr``: values ``x < Q1 − k·IQR`` or ``x > Q3 + k·IQR`` (k = 1.5 unless stated),
    Q1 and Q3 linear-interpolated quantiles, IQR = Q3 − Q1.
Normality (``column``)
    ``normality_p`` and the verdict ``normal``: ``scipy.stats.shapiro`` (Shapiro-Wilk) for up to 5,000 values,
    ``scipy.stats.normaltest`` (D'Agostino-Pearson K²) beyond. Normal iff p ≥ α.
Correlation (``x``, ``y``, ``method`` pearson | spearman | kendall)
    ``scipy.stats.pearsonr`` / ``spearmanr`` / ``kendalltau`` (tau-b), two-sided p: ``corr`` is the coefficient,
    ``corr_p`` its p-value. Strong iff |r| ≥ the question's threshold (0.7 unless stated); positive iff r > 0.
Two-sample t test (``column``, ``group``, levels ``a`` and ``b``, ``equal_var``)
    ``scipy.stats.ttest_ind(values where group == a, values where group == b, equal_var=…)``: pooled (Student) when
    ``equal_var`` is true, Welch otherwise; two-sided; ``ttest_t`` is positive when a's mean is higher.
χ² test of independence (``a``, ``b``)
    ``scipy.stats.chi2_contingency(pd.crosstab(a, b))`` over rows with both, with SciPy's default Yates continuity
    correction of a 2×2 table: ``chi2_stat``, ``chi2_p``, ``chi2_dof``.
One-way ANOVA (``column``, ``group``)
    ``scipy.stats.f_oneway`` over every level of the group (each level's non-missing values): ``anova_f``,
    ``anova_p``.
Simple linear regression (``y`` on ``x``)
    ``scipy.stats.linregress(x, y)``: ``slope``, ``intercept``, ``r_squared`` (rvalue²) and ``slope_p`` (the slope's
    two-sided p).
Verdicts
    ``normal`` iff p ≥ α; ``significant`` iff p < α (α = 0.05 unless stated) for ``test`` ttest | chi2 | anova |
    regression | corr; ``strong`` and ``positive`` as above.
Names
    ``group_argmax`` / ``group_argmin``: the level of ``group`` whose ``agg`` (mean | sum | median | max | min |
    count: non-missing values of ``column`` | size: rows) is highest / lowest. ``row_argmax`` / ``row_argmin``: the
    ``label`` of the row with the highest / lowest ``column``. A tie is an authoring error (raised here).
Rounding
    Half away from zero on the value's shortest repr: ``Decimal(str(value)).quantize(Decimal(1).scaleb(-d),
    ROUND_HALF_UP)``, written with exactly ``d`` decimals; a value that rounds to zero is written without a sign.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

HERE = Path(__file__).resolve().parent
TABLES = HERE / "tables.json"
QUESTIONS = HERE / "questions.json"
EXPECTED = HERE / "expected.json"
SHAPIRO_MAX = 5000
DEFAULT_ALPHA = 0.05
DEFAULT_STRONG = 0.7

if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

import real_tables  # noqa: E402  (benchmarks/real_tables.py: the export every job reads)


class AuthoringError(ValueError):
    """A question the rules cannot answer unambiguously (a tie, an unknown column, a verdict that disagrees)."""


def round_text(value: float, decimals: int) -> str:
    """``value`` rounded half away from zero to ``decimals`` places, written with exactly that many."""
    quantum = Decimal(1).scaleb(-decimals)
    rounded = Decimal(str(float(value))).quantize(quantum, rounding=ROUND_HALF_UP)
    if rounded == 0:
        rounded = abs(rounded)
    return f"{rounded:.{decimals}f}"


def table_csv(table: str) -> str:
    """The exported CSV text of ``package/item``, as ``real_tables.export_csv`` writes it."""
    package, item = table.split("/", 1)
    frame = real_tables._quiet_data(package, item)
    if frame is None:
        raise AuthoringError(f"{table} does not load offline")
    return real_tables.csv_text(frame)


def load_table(table: str, sha256: str | None = None) -> pd.DataFrame:
    """The table as a job sees it: its exported CSV read with ``pd.read_csv``; the hash checked when given."""
    text = table_csv(table)
    if sha256 is not None and real_tables.content_hash(text) != sha256:
        raise AuthoringError(f"{table}: the exported CSV no longer has the SHA-256 of tables.json")
    return pd.read_csv(io.StringIO(text))


# ---- rows ------------------------------------------------------------------------------------------------------

_OPS = {
    "==": lambda s, v: s == v,
    "!=": lambda s, v: s != v,
    ">": lambda s, v: s > v,
    ">=": lambda s, v: s >= v,
    "<": lambda s, v: s < v,
    "<=": lambda s, v: s <= v,
}


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name not in frame.columns:
        raise AuthoringError(f"no column {name!r}")
    return frame[name]


def _mask(frame: pd.DataFrame, where: list[dict[str, Any]]) -> pd.Series:
    """Rows meeting every condition (a NaN meets none)."""
    mask = pd.Series(True, index=frame.index)
    for cond in where:
        column = _column(frame, cond["column"])
        mask &= _OPS[cond["op"]](column, cond["value"]).fillna(False).astype(bool)
    return mask


def _rows(frame: pd.DataFrame, part: dict[str, Any]) -> pd.DataFrame:
    where = part.get("where") or []
    return frame[_mask(frame, where)] if where else frame


def _values(frame: pd.DataFrame, name: str) -> pd.Series:
    """The column's non-missing values (numeric)."""
    column = _column(frame, name).dropna()
    if not pd.api.types.is_numeric_dtype(column):
        raise AuthoringError(f"column {name!r} is not numeric")
    return column.astype(float)


def _pair(frame: pd.DataFrame, x: str, y: str) -> tuple[np.ndarray, np.ndarray]:
    both = frame[[_column(frame, x).name, _column(frame, y).name]].dropna()
    return both[x].astype(float).to_numpy(), both[y].astype(float).to_numpy()


def _groups(frame: pd.DataFrame, column: str, group: str) -> dict[Any, pd.Series]:
    both = frame[[_column(frame, column).name, _column(frame, group).name]].dropna()
    return {level: values[column].astype(float) for level, values in both.groupby(group, sort=True)}


# ---- the statistics --------------------------------------------------------------------------------------------


def normality_p(values: pd.Series) -> float:
    """Shapiro-Wilk's p for up to 5,000 values, D'Agostino-Pearson's beyond."""
    if len(values) <= SHAPIRO_MAX:
        return float(stats.shapiro(values.to_numpy()).pvalue)
    return float(stats.normaltest(values.to_numpy()).pvalue)


def correlation(frame: pd.DataFrame, part: dict[str, Any]) -> tuple[float, float]:
    """The coefficient and two-sided p of ``method`` between ``x`` and ``y``."""
    x, y = _pair(frame, part["x"], part["y"])
    method = part.get("method", "pearson")
    if method == "pearson":
        result = stats.pearsonr(x, y)
    elif method == "spearman":
        result = stats.spearmanr(x, y)
    elif method == "kendall":
        result = stats.kendalltau(x, y)
    else:
        raise AuthoringError(f"unknown correlation method {method!r}")
    return float(result.statistic), float(result.pvalue)


def ttest(frame: pd.DataFrame, part: dict[str, Any]) -> tuple[float, float]:
    groups = _groups(frame, part["column"], part["group"])
    if part["a"] not in groups or part["b"] not in groups:
        raise AuthoringError(f"levels {part['a']!r} / {part['b']!r} not both in {part['group']!r}")
    result = stats.ttest_ind(groups[part["a"]], groups[part["b"]], equal_var=bool(part["equal_var"]))
    return float(result.statistic), float(result.pvalue)


def chi2(frame: pd.DataFrame, part: dict[str, Any]) -> tuple[float, float, int]:
    both = frame[[_column(frame, part["a"]).name, _column(frame, part["b"]).name]].dropna()
    result = stats.chi2_contingency(pd.crosstab(both[part["a"]], both[part["b"]]))
    return float(result.statistic), float(result.pvalue), int(result.dof)


def anova(frame: pd.DataFrame, part: dict[str, Any]) -> tuple[float, float]:
    groups = _groups(frame, part["column"], part["group"])
    result = stats.f_oneway(*groups.values())
    return float(result.statistic), float(result.pvalue)


def regression(frame: pd.DataFrame, part: dict[str, Any]) -> Any:
    x, y = _pair(frame, part["x"], part["y"])
    return stats.linregress(x, y)


def number(frame: pd.DataFrame, part: dict[str, Any]) -> float:
    """The full-precision value of a number part."""
    op = part["op"]
    rows = _rows(frame, part)
    if op == "missing":
        return float(_column(frame, part["column"]).isna().sum())
    if op == "distinct":
        return float(_column(rows, part["column"]).nunique(dropna=True))
    if op == "count_rows":
        return float(len(rows))
    if op == "share":
        named = [cond["column"] for cond in part["where"]]
        return 100.0 * len(rows) / len(frame.dropna(subset=named))
    if op in {"corr", "corr_p"}:
        return correlation(rows, part)[op == "corr_p"]
    if op in {"ttest_t", "ttest_p"}:
        return ttest(rows, part)[op == "ttest_p"]
    if op in {"chi2_stat", "chi2_p", "chi2_dof"}:
        return float(chi2(rows, part)[("chi2_stat", "chi2_p", "chi2_dof").index(op)])
    if op in {"anova_f", "anova_p"}:
        return anova(rows, part)[op == "anova_p"]
    if op in {"slope", "intercept", "r_squared", "slope_p"}:
        fit = regression(rows, part)
        return float(
            {"slope": fit.slope, "intercept": fit.intercept, "r_squared": fit.rvalue**2, "slope_p": fit.pvalue}[op]
        )
    values = _values(rows, part["column"])
    if op == "mean":
        return float(values.mean())
    if op == "median":
        return float(values.median())
    if op == "std":
        return float(values.std(ddof=part.get("ddof", 1)))
    if op == "var":
        return float(values.var(ddof=part.get("ddof", 1)))
    if op in {"min", "max", "sum"}:
        return float(getattr(values, op)())
    if op == "quantile":
        return float(values.quantile(part["q"]))
    if op == "skew":
        return float(values.skew())
    if op == "kurt":
        return float(values.kurt())
    if op == "outliers_z":
        z = (values - values.mean()) / values.std(ddof=1)
        return float((z.abs() > part.get("threshold", 3)).sum())
    if op == "outliers_iqr":
        q1, q3 = values.quantile(0.25), values.quantile(0.75)
        k = part.get("k", 1.5)
        return float(((values < q1 - k * (q3 - q1)) | (values > q3 + k * (q3 - q1))).sum())
    if op == "normality_p":
        return normality_p(values)
    raise AuthoringError(f"unknown number op {op!r}")


def _unique_extreme(series: pd.Series, highest: bool) -> Any:
    best = series.max() if highest else series.min()
    winners = series[series == best]
    if len(winners) != 1:
        raise AuthoringError(f"a tie for the {'highest' if highest else 'lowest'}: {list(winners.index)}")
    return winners.index[0]


def name(frame: pd.DataFrame, part: dict[str, Any]) -> str:
    """The expected name of a name part."""
    op = part["op"]
    rows = _rows(frame, part)
    highest = op.endswith("argmax")
    if op in {"group_argmax", "group_argmin"}:
        agg = part["agg"]
        if agg == "size":
            per_group = rows.dropna(subset=[part["group"]]).groupby(part["group"]).size()
        else:
            both = rows[[part["column"], part["group"]]].dropna()
            per_group = both.groupby(part["group"])[part["column"]].agg(agg)
        return str(_unique_extreme(per_group, highest))
    if op in {"row_argmax", "row_argmin"}:
        both = rows[[part["column"], part["label"]]].dropna()
        return str(both.loc[_unique_extreme(both[part["column"]], highest), part["label"]])
    raise AuthoringError(f"unknown name op {op!r}")


def verdict(frame: pd.DataFrame, part: dict[str, Any]) -> tuple[bool, float]:
    """The expected yes/no of a verdict part, and the statistic it rests on (a p-value or a coefficient)."""
    op = part["op"]
    rows = _rows(frame, part)
    alpha = part.get("alpha", DEFAULT_ALPHA)
    if op == "normal":
        p = normality_p(_values(rows, part["column"]))
        return p >= alpha, p
    if op in {"strong", "positive"}:
        r = correlation(rows, part)[0]
        return (abs(r) >= part.get("threshold", DEFAULT_STRONG)) if op == "strong" else (r > 0), r
    if op == "significant":
        test = part["test"]
        if test == "ttest":
            p = ttest(rows, part)[1]
        elif test == "chi2":
            p = chi2(rows, part)[1]
        elif test == "anova":
            p = anova(rows, part)[1]
        elif test == "regression":
            p = float(regression(rows, part).pvalue)
        elif test == "corr":
            p = correlation(rows, part)[1]
        else:
            raise AuthoringError(f"unknown test {test!r}")
        return p < alpha, p
    raise AuthoringError(f"unknown verdict op {op!r}")


# ---- the questions ---------------------------------------------------------------------------------------------


def expect_question(question: dict[str, Any], frame: pd.DataFrame) -> dict[str, Any]:
    """The expected parts of one question (empty for an unsupported one, after checking its phrases)."""
    if question["kind"] == "unsupported":
        text = question["question"].lower()
        absent = [p for p in question["must_name"] if p.lower() not in text]
        if not question["must_name"] or absent:
            raise AuthoringError(f"{question['id']}: must_name phrases not in the question: {absent}")
        return {"kind": "unsupported", "must_name": question["must_name"], "parts": []}
    parts = []
    for part in question["parts"]:
        if part["type"] == "number":
            value = number(frame, part)
            if not math.isfinite(value):
                raise AuthoringError(f"{question['id']}: {part['op']} is not finite")
            parts.append(
                {"type": "number", "op": part["op"], "value": value, "rounded": round_text(value, part["decimals"])}
            )
        elif part["type"] == "name":
            parts.append({"type": "name", "op": part["op"], "value": name(frame, part)})
        elif part["type"] == "verdict":
            yes, basis = verdict(frame, part)
            if "yes" in part and bool(part["yes"]) != yes:
                raise AuthoringError(f"{question['id']}: questions.json says yes={part['yes']}, the data say {yes}")
            parts.append({"type": "verdict", "op": part["op"], "yes": yes, "basis": basis})
        else:
            raise AuthoringError(f"{question['id']}: unknown part type {part['type']!r}")
    return {"kind": "answerable", "parts": parts}


def compute(questions: list[dict[str, Any]], tables: list[dict[str, Any]]) -> dict[str, Any]:
    """Question id -> its expected parts, every table loaded once and hash-checked."""
    hashes = {entry["table"]: entry["sha256"] for entry in tables}
    frames: dict[str, pd.DataFrame] = {}
    out: dict[str, Any] = {}
    for question in questions:
        table = question["table"]
        if table not in hashes:
            raise AuthoringError(f"{question['id']}: table {table} is not in tables.json")
        if table not in frames:
            frames[table] = load_table(table, hashes[table])
        try:
            out[question["id"]] = {"table": table, **expect_question(question, frames[table])}
        except (KeyError, AuthoringError) as exc:
            raise AuthoringError(f"{question['id']}: {exc}") from exc
    return out


def regenerate(
    tables_path: Path = TABLES,
    questions_path: Path = QUESTIONS,
    out_path: Path = EXPECTED,
    made_by: str = "python benchmarks/ask_stats/expected.py",
) -> dict[str, Any]:
    """Compute every question's expected answer and write ``expected.json``."""
    tables = json.loads(tables_path.read_text(encoding="utf-8"))["tables"]
    questions = json.loads(questions_path.read_text(encoding="utf-8"))["questions"]
    body = {
        "made_by": made_by,
        "rules": "the module docstring of benchmarks/ask_stats/expected.py",
        "versions": {"pandas": pd.__version__, "numpy": np.__version__, "scipy": _scipy_version()},
        "questions": compute(questions, tables),
    }
    out_path.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return body


def _scipy_version() -> str:
    import scipy

    return str(scipy.__version__)


def table_entry(table: str, domain: str) -> dict[str, Any]:
    """A frozen table of ``tables.json``: real_tables' entry (rows, columns, SHA-256 of the export) and a domain."""
    package, item = table.split("/", 1)
    frame = real_tables._quiet_data(package, item)
    if frame is None:
        raise AuthoringError(f"{table} does not load offline")
    entry = real_tables._entry(table, frame)
    entry["domain"] = domain
    entry["id_sha256"] = hashlib.sha256(table.encode("utf-8")).hexdigest()
    return entry


def regenerate_dir(folder: Path) -> dict[str, Any]:
    """``regenerate`` for the question set in ``folder`` (its tables.json and questions.json; writes its
    expected.json). This module's own folder is the first set, written exactly as with no ``--dir``."""
    folder = folder.resolve()
    if folder == HERE:
        return regenerate()
    try:
        shown = folder.relative_to(HERE.parent.parent).as_posix()
    except ValueError:
        shown = str(folder)
    return regenerate(
        folder / TABLES.name,
        folder / QUESTIONS.name,
        folder / EXPECTED.name,
        made_by=f"python benchmarks/ask_stats/expected.py --dir {shown}",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--dir", type=Path, default=HERE, help="the question set's folder (tables.json, questions.json); default: here"
    )
    args = parser.parse_args(argv)
    body = regenerate_dir(args.dir)
    print(f"wrote {len(body['questions'])} questions' expected answers to {args.dir.resolve() / EXPECTED.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
