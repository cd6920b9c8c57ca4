"""The data overview: rows, columns, missing cells and their share, the columns missing the most, and which columns
the plan leaves out and why (every profiled column is analysed or named with its reason)."""

from __future__ import annotations

import logging

import pandas as pd

from insightloom.analysis import choices, joins
from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis.planning import unanalysed_columns
from insightloom.analysis.wording import counted, pick
from insightloom.analysis_utils.result_notes import append_result
from insightloom.analysis_utils.sql import qi, ql, sql_all, sql_sum
from insightloom.analysis_utils.standard._common import Context, context, markdown_table, planned_specs, stems, view_of
from insightloom.analysis_utils.trackers import catalog_basis, frame, track_value

logger = logging.getLogger(__name__)

_LISTED = 5  # columns listed in the missing-cells table
_NAMED_TIES = 3  # more columns tied for the most missing cells are counted, not named


def run_overview(spec: AnalysisSpec, *, language: str = "en") -> None:
    """Profile the table: shape, analysed columns, missing cells (in total, share, per column), complete rows."""
    ctx = context(spec, language)
    df = frame(ctx.view)
    analysed = [str(c["name"]) for c in ctx.table.get("columns", []) if choices.usable(c)]
    cols = [c for c in analysed if c in df.columns]
    tx, p, t, lang = ctx.tx, ctx.prefix, qi(ctx.view), ctx.language
    per_col = df[cols].isna().sum()
    missing, cells = int(per_col.sum()), len(df) * len(cols)
    complete = int(df[cols].notna().all(axis=1).sum())
    # An aggregate even with no analysed column (a one-column table of ids): a bare 0 would be one row per row.
    nulls = sql_sum([f"(COUNT(*) - COUNT({qi(c)}))" for c in cols], empty="(0 * COUNT(*))")
    names = ", ".join(ql(c) for c in cols) or "NULL"
    r = {
        "rows": track_value(p + "rows", len(df), tx["d_rows"], "len(df)", ctx.view, [], "high",
                            f"SELECT COUNT(*) FROM {t}", "count", basis=catalog_basis("count", [], [])),
        "columns": track_value(p + "columns", df.shape[1], tx["d_columns"], "df.shape[1]", ctx.view, [], "medium",
                               None, "count", recipe={"op": "column_count", "view": ctx.view}),
        "analysed": track_value(p + "analysed_columns", len(cols), tx["d_analysed"], "len(analysed columns)",
                                ctx.view, [], "low",
                                f"SELECT COUNT(*) FROM (DESCRIBE {t}) WHERE column_name IN ({names})", "count"),
        "missing": track_value(p + "missing_cells", missing, tx["d_missing"], "df[analysed].isna().sum().sum()",
                               ctx.view, cols, "high", f"SELECT {nulls} FROM {t}", "count"),
        "complete": track_value(p + "complete_rows", complete, tx["d_complete"],
                                "df[analysed].notna().all(axis=1).sum()", ctx.view, cols, "medium",
                                f"SELECT COUNT(*) FROM {t} WHERE {sql_all([f'{qi(c)} IS NOT NULL' for c in cols])}",
                                "count"),
        "w_rows": counted(len(df), "row", lang),
        "w_columns": counted(df.shape[1], "column", lang),
        "w_analysed": counted(len(cols), "column", lang),
        "w_missing": counted(missing, "cell", lang),
        "w_complete": counted(complete, "row has", lang),
    }  # fmt: skip
    # "(personal data and identifier columns are left out)" only when some were.
    findings = [tx["shape" if len(cols) < df.shape[1] else "shape_all"].format(**r)]
    if cells:
        share = missing / cells * 100
        r["share"] = track_value(p + "missing_share", share, tx["d_share"],
                                 "missing cells / (rows * analysed columns) * 100", ctx.view, cols, "medium",
                                 f"SELECT 100 * CAST({nulls} AS DOUBLE) / (COUNT(*) * {len(cols)}) FROM {t}", "%",
                                 2 if 0 < share < 1 else None)  # fmt: skip
        findings.append(tx["missing"].format(**r))
    table = ""
    if missing:
        table = _missing_by_column(ctx, per_col, cols, r, findings)
    else:
        findings.append(tx["none"])
        # A complete table still gets its summary table: the shape in numbers.
        shape = [
            ("row_rows", "rows"),
            ("row_columns", "columns"),
            ("row_analysed", "analysed"),
            ("row_complete", "complete"),
        ]
        table = markdown_table([tx["h_item"], tx["h_count"]], [[tx[label], r[key]] for label, key in shape])
    coverage = _coverage(ctx, df)
    findings += [coverage] if coverage else []
    append_result(tx["title"], plan_item=ctx.plan_item, findings=findings, table=table)


#: Columns named in the coverage sentence (every one, up to this many); any beyond are counted.
_NAMED_SKIPPED = 60


def _coverage(ctx: Context, df: pd.DataFrame) -> str | None:
    """One sentence naming each column no analysis of the plan reads, with its reason (None when all are read).

    Columns left out for one reason are named together with the reason once; a mostly missing column's share is a
    tracked number of its own, and every other reason is a fact of the profile in words.
    """
    tx, p, t = ctx.tx, ctx.prefix, qi(ctx.view)
    # A breakdown across a joined view (orders+customers) reads columns of each table it joins.
    specs = [spec for spec in planned_specs() if ctx.view in (view_of(spec) or "").split(joins.JOIN_SEP)]
    skipped = unanalysed_columns(ctx.table, specs)
    if not skipped:
        return None
    named = skipped[:_NAMED_SKIPPED]
    slugs = stems(ctx.table, [name for name, _ in named])
    by_reason: dict[str, list[str]] = {}
    parts: dict[str, str] = {}  # first column of its reason -> its clause, so clauses keep the table's order
    for name, reason in named:
        if reason == "missing" and name in df.columns and len(df):
            share = float(df[name].isna().mean() * 100)
            sql = f"SELECT 100 * CAST(COUNT(*) - COUNT({qi(name)}) AS DOUBLE) / COUNT(*) FROM {t}"
            ref = track_value(p + "missing_share_in_" + slugs[name], share,
                              tx["d_missing_share_in"].format(c=name), f"df[{name!r}].isna().mean() * 100",
                              ctx.view, [name], "low", sql, "%", 2 if 0 < share < 1 else None)  # fmt: skip
            parts[name] = tx["why_missing"].format(c=name, share=ref)
            continue
        by_reason.setdefault("unplanned" if reason == "missing" else reason, []).append(name)
    for reason, names in by_reason.items():
        clause = (
            tx["why_" + reason].format(c=names[0])
            if len(names) == 1
            else tx["why_group"].format(cols=", ".join(f"`{n}`" for n in names), why=tx["why_group_" + reason])
        )
        parts[names[0]] = clause  # fmt: skip
    order = {name: i for i, (name, _) in enumerate(named)}
    items = [parts[first] for first in sorted(parts, key=order.__getitem__)]
    rest = len(skipped) - _NAMED_SKIPPED
    if rest > 0:
        names_sql = ", ".join(ql(name) for name, _ in skipped)
        more = track_value(p + "unanalysed_more", rest, tx["d_unanalysed_more"], "columns left out beyond those named",
                           ctx.view, [], "low", f"SELECT COUNT(*) - {_NAMED_SKIPPED} FROM (DESCRIBE {t}) "
                           f"WHERE column_name IN ({names_sql})", "count")  # fmt: skip
        items.append(tx["why_more"].format(more=more, w_more=counted(rest, "column", ctx.language)))
    return tx["coverage"].format(items=tx["why_join"].join(items))


def _missing_by_column(
    ctx: Context, per_col: pd.Series, cols: list[str], r: dict[str, str], findings: list[str]
) -> str:
    """Track the columns with missing cells (how many, which has most, the leading few) and return their table."""
    tx, p, t = ctx.tx, ctx.prefix, qi(ctx.view)
    counts = pd.DataFrame({"column": [str(c) for c in per_col.index], "n": per_col.to_numpy()})
    counts = counts[counts["n"] > 0].sort_values(["n", "column"], ascending=[False, True])
    has_null = sql_sum([f"(CASE WHEN COUNT(*) > COUNT({qi(c)}) THEN 1 ELSE 0 END)" for c in cols])
    r["with_missing"] = track_value(p + "columns_with_missing", len(counts), tx["d_with_missing"],
                                    "(df[analysed].isna().sum() > 0).sum()", ctx.view, cols, "low",
                                    f"SELECT {has_null} FROM {t}", "count")  # fmt: skip
    r["w_with_missing"] = counted(len(counts), "column has", ctx.language)
    union = " UNION ALL ".join(f"SELECT {ql(c)} AS name, COUNT(*) - COUNT({qi(c)}) AS n FROM {t}" for c in cols)
    most = f"WITH m AS ({union}) "
    # Columns tied for the most missing cells are all named (by name), never one of them as "the" column.
    tied = counts[counts["n"] == counts["n"].iloc[0]]
    r["top"] = track_value(p + "most_missing_column", ", ".join(tied["column"]), tx["d_top"],
                           "column(s) with the most missing cells (ties: all, by name)", ctx.view, cols, "low",
                           most + "SELECT string_agg(name, ', ' ORDER BY name) FROM m "
                           "WHERE n = (SELECT MAX(n) FROM m)")  # fmt: skip
    findings.append(_most_missing_finding(ctx, counts, tied, cols, most, r))
    slugs = stems(ctx.table, cols)
    rows = []
    for name, n in zip(counts["column"].head(_LISTED), counts["n"].head(_LISTED), strict=True):
        cid = p + "missing_in_" + slugs[name]
        rows.append([name, track_value(cid, int(n), tx["d_missing_in"].format(c=name), f"df[{name!r}].isna().sum()",
                                       ctx.view, [name], "low", f"SELECT COUNT(*) - COUNT({qi(name)}) FROM {t}",
                                       "count", basis=catalog_basis("missing", [name], []))])  # fmt: skip
    return markdown_table([tx["h_column"], tx["h_missing"]], rows)


def _most_missing_finding(
    ctx: Context, counts: pd.DataFrame, tied: pd.DataFrame, cols: list[str], most: str, r: dict[str, str]
) -> str:
    """The sentence naming the column(s) missing the most: one column, a named tie, a counted tie or all equal."""
    tx, p = ctx.tx, ctx.prefix
    if len(tied) == 1:
        return pick(tx, "by_column", len(counts)).format(**r)
    r["top_n"] = track_value(p + "most_missing_cells", int(tied["n"].iloc[0]), tx["d_top_n"], "max over analysed "
                             "columns of df[c].isna().sum()", ctx.view, cols, "low", most + "SELECT MAX(n) FROM m",
                             "count")  # fmt: skip
    if len(tied) == len(counts):
        return tx["by_column_all_tied"].format(**r)
    if len(tied) > _NAMED_TIES:
        r["tied"] = track_value(p + "most_missing_tied", len(tied), tx["d_tied"], "number of analysed columns "
                                "with the most missing cells", ctx.view, cols, "low",
                                most + "SELECT COUNT(*) FROM m WHERE n = (SELECT MAX(n) FROM m)", "count")  # fmt: skip
        return tx["by_column_tied_many"].format(**r)
    return tx["by_column_tied"].format(**r)
