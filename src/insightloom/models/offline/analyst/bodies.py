"""Python source of the offline Coder's scripts: a shared prelude plus one body per analysis kind.

The scripts are real, self-contained programs: constants written by :mod:`scripts` at the top, then pandas and
matplotlib work, ``track_calculation`` for every reported number, almost always with a DuckDB check computing the
same value the same way (NULLs ignored like pandas' skipna, DOUBLE division, ``quantile_cont`` = pandas linear
quantiles, sample standard deviation, ties broken by name), and ``append_result`` with findings that cite numbers
only as ``{{calc:<id>}}``.

A few details deliberately carry no check but a machine-readable ``recipe`` instead (the number of columns, of groups
in a breakdown, a standard deviation): those go through the Validator's tiered LLM verification, where the Validator
writes its own script from the recipe, or stay ``unverified`` when the tiers do not select them.
"""

from __future__ import annotations

IMPORTS = """\
import pandas as pd

from coder_analysis_utils import (
    append_result, load_df, save_chart, sql_all, sql_sum, to_python_type, track_calculation,
)
"""

CHART_IMPORTS = """\
import pandas as pd
from matplotlib.figure import Figure

from coder_analysis_utils import (
    append_result, load_df, save_chart, sql_all, sql_sum, to_python_type, track_calculation,
)
"""

HELPERS = '''

def qi(name):
    """Quote an identifier for DuckDB (Korean names and spaces are fine inside double quotes)."""
    return '"' + str(name).replace('"', '""') + '"'


def ql(value):
    """A SQL literal for a group key, typed like the column so the comparison needs no cast."""
    value = to_python_type(value)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def dbl(column):
    return f"CAST({qi(column)} AS DOUBLE)"


def ref(calc_id):
    return "{{calc:" + calc_id + "}}"


def track(calc_id, value, description, formula, columns, importance, check, unit=None, decimals=None, recipe=None):
    """Track one number with its DuckDB check (or, for a detail left to the Validator, a recipe) and return its
    {{calc:id}} reference for the findings."""
    track_calculation(calc_id, value, description, formula, SOURCE, list(columns), importance,
                      check=check, unit=unit, decimals=decimals, recipe=recipe)
    return ref(calc_id)


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(str(cell).replace("|", "/") for cell in row) + " |" for row in rows]
    return "\\n".join(lines)


def compact(value, _position=None):
    """Tick label without scientific offsets: 3.4B, 12.5K, 0.85."""
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


def plain_axis(axis):
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(compact))


T = qi(VIEW)
'''

OVERVIEW = """

def main():
    df = load_df(VIEW)
    cols = [c for c in ANALYSED if c in df.columns]
    rows, ncols = len(df), df.shape[1]
    per_col = df[cols].isna().sum()
    missing = int(per_col.sum())
    cells = rows * len(cols)
    complete = int(df[cols].notna().all(axis=1).sum())
    nulls = sql_sum([f"(COUNT(*) - COUNT({qi(c)}))" for c in cols])
    not_null = sql_all([f"{qi(c)} IS NOT NULL" for c in cols])
    names = ", ".join(ql(c) for c in cols) or "NULL"
    r = {
        "rows": track(P + "rows", rows, TX["d_rows"], "len(df)", [], "high", f"SELECT COUNT(*) FROM {T}", "count"),
        "columns": track(P + "columns", ncols, TX["d_columns"], "df.shape[1]", [], "medium", None, "count",
                         recipe={"op": "column_count", "view": VIEW}),
        "analysed": track(P + "analysed_columns", len(cols), TX["d_analysed"], "len(analysed columns)", [], "low",
                          f"SELECT COUNT(*) FROM (DESCRIBE {T}) WHERE column_name IN ({names})", "count"),
        "missing": track(P + "missing_cells", missing, TX["d_missing"], "df[analysed].isna().sum().sum()", cols,
                         "high", f"SELECT {nulls} FROM {T}", "count"),
        "complete": track(P + "complete_rows", complete, TX["d_complete"], "df[analysed].notna().all(axis=1).sum()",
                          cols, "medium", f"SELECT COUNT(*) FROM {T} WHERE {not_null}", "count"),
    }
    findings = [TX["shape"].format(**r)]
    if cells:
        share = missing / cells * 100
        r["share"] = track(P + "missing_share", share, TX["d_share"], "missing cells / (rows * analysed columns) * 100",
                           cols, "medium", f"SELECT 100 * CAST({nulls} AS DOUBLE) / (COUNT(*) * {len(cols)}) FROM {T}",
                           "%", 2 if 0 < share < 1 else None)
        findings.append(TX["missing"].format(**r))
    table = ""
    if missing:
        frame = pd.DataFrame({"column": [str(c) for c in per_col.index], "n": per_col.to_numpy()})
        frame = frame[frame["n"] > 0].sort_values(["n", "column"], ascending=[False, True])
        has_null = sql_sum([f"(CASE WHEN COUNT(*) > COUNT({qi(c)}) THEN 1 ELSE 0 END)" for c in cols])
        r["with_missing"] = track(P + "columns_with_missing", len(frame), TX["d_with_missing"],
                                  "(df[analysed].isna().sum() > 0).sum()", cols, "low",
                                  f"SELECT {has_null} FROM {T}", "count")
        union = " UNION ALL ".join(f"SELECT {ql(c)} AS name, COUNT(*) - COUNT({qi(c)}) AS n FROM {T}" for c in cols)
        r["top"] = track(P + "most_missing_column", frame["column"].iloc[0], TX["d_top"],
                         "column with the most missing cells (ties: name)", cols, "low",
                         f"SELECT name FROM ({union}) ORDER BY n DESC, name LIMIT 1")
        findings.append(TX["by_column"].format(**r))
        rows_md = []
        for name, n in zip(frame["column"].head(5), frame["n"].head(5), strict=True):
            cid = P + "missing_in_" + SLUGS[name]
            rows_md.append([name, track(cid, int(n), TX["d_missing_in"].format(c=name), f"df[{name!r}].isna().sum()",
                                        [name], "low", f"SELECT COUNT(*) - COUNT({qi(name)}) FROM {T}", "count")])
        table = markdown_table([TX["h_column"], TX["h_missing"]], rows_md)
    else:
        findings.append(TX["none"])
    append_result(TX["title"], plan_item=PLAN_ITEM, findings=findings, table=table)


if __name__ == "__main__":
    main()
"""

KPI = """

def main():
    df = load_df(VIEW)
    findings = []
    for m in MEASURES:
        info = INFO[m]
        s = pd.to_numeric(df[m], errors="coerce")
        if s.notna().sum() == 0:
            continue
        sid, unit = P + info["slug"], info["unit"]
        mean_unit = None if unit == "count" else unit
        r = {"m": m}
        r["mean"] = track(sid + "_mean", float(s.mean()), TX["d_mean"].format(m=m), f"df[{m!r}].mean()", [m],
                          "high", f"SELECT AVG({dbl(m)}) FROM {T}", mean_unit)
        if info["additive"]:
            r["total"] = track(sid + "_total", float(s.sum()), TX["d_total"].format(m=m), f"df[{m!r}].sum()", [m],
                               "high", f"SELECT COALESCE(SUM({dbl(m)}), 0) FROM {T}", unit, info["decimals"])
            findings.append(TX["additive"].format(**r))
        else:
            r["min"] = track(sid + "_min", float(s.min()), TX["d_min"].format(m=m), f"df[{m!r}].min()", [m],
                             "medium", f"SELECT MIN({dbl(m)}) FROM {T}", mean_unit)
            r["max"] = track(sid + "_max", float(s.max()), TX["d_max"].format(m=m), f"df[{m!r}].max()", [m],
                             "medium", f"SELECT MAX({dbl(m)}) FROM {T}", mean_unit)
            findings.append(TX["average"].format(**r))
    for key, rate in RATES.items():
        num, den = rate["num"], rate["den"]
        numerator = float(pd.to_numeric(df[num], errors="coerce").sum())
        denominator = float(pd.to_numeric(df[den], errors="coerce").sum())
        if denominator == 0:
            continue
        value = rate["scale"] * numerator / denominator
        check = f"SELECT {rate['scale']} * SUM({dbl(num)}) / NULLIF(SUM({dbl(den)}), 0) FROM {T}"
        cid = P + key
        formula = f"{rate['scale']:g} * sum({num}) / sum({den})"
        value_ref = track(cid, value, TX["d_rate"].format(label=rate["label"]), formula, [num, den], "high", check,
                          rate["unit"], 2)
        findings.append(TX["rate"].format(label=rate["label"], num=num, den=den, value=value_ref))
    append_result(TX["title"], plan_item=PLAN_ITEM, findings=findings)


if __name__ == "__main__":
    main()
"""
