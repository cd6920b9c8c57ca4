"""Headline KPIs: totals of additive measures, averages and ranges of the others, rates of 0/1 outcomes, and
rates recomputed from their parts, with a summary table of every number; and filtered KPIs: the total or average of
one measure over the rows of one category value and/or the table's last period ("revenue of West in the last
month"), computed and checked by the same tracker."""

from __future__ import annotations

import logging
import re
from typing import Any

import pandas as pd

from insightloom.analysis import choices
from insightloom.analysis.catalog import FILTER_AGGS, LAST_PERIODS, WHERE_JOIN, AnalysisSpec, quote_value
from insightloom.analysis.ids import slug
from insightloom.analysis_utils.result_notes import append_result
from insightloom.analysis_utils.standard._common import Context, context, markdown_table, rates, semantic, stem
from insightloom.analysis_utils.standard.value_claims import sentinel_finding
from insightloom.analysis_utils.trackers import (
    column_facts,
    frame,
    numeric,
    track_mean,
    track_rate,
    track_stat,
    track_total,
)
from insightloom.errors import BadInputError

logger = logging.getLogger(__name__)

# A column already named as a total reads "`total_sales` sums to ...", never "Total `total_sales` is ...".
_NAMED_TOTAL = re.compile(r"(^|[^a-z])(total|sum)", re.I)
# A filtered KPI's wording: {filters} joins the "where" (its pairs joined by WHERE_JOIN) and "last" parts.
_FILTERED = {
    "en": {
        "title": "Filtered KPI",
        "where": "for {pairs}",
        "last": "in the last {period} of `{date}`",
        "join": " ",
        "finding": "The {agg} of `{m}` {filters} is {value}.",
        "description": "{Agg} of {m} {filters}",
        "row": "{m}, {agg} {filters}",
    },
    "ko": {
        "title": "조건별 지표",
        "where": "{pairs}",
        "last": "`{date}` 기준 마지막 {period}",
        "join": ", ",
        "finding": "{filters} 행의 `{m}` {agg}은(는) {value}입니다.",
        "description": "{filters} 행의 {m} {agg}",
        "row": "{m} {agg} ({filters})",
    },
}


def run_kpi(spec: AnalysisSpec, *, language: str = "en") -> None:
    """Track each KPI measure the way its profile allows, then each rate from its parts; one section and table."""
    ctx = context(spec, language)
    if spec.filtered:
        _run_filtered(ctx)
        return
    df = frame(ctx.view)
    findings: list[str] = []
    rows: list[list[str]] = []
    for m in spec.measures:
        text_outcome = semantic(ctx.table, m) == "binary_outcome" and df[m].notna().any()
        if numeric(df[m]).notna().sum() == 0 and not text_outcome:
            continue
        _measure(ctx, m, findings, rows)
    defined = rates(ctx.table, ctx.language)
    for key in spec.rates:
        rate = defined.get(key)
        if rate is None or float(numeric(df[rate.denominator]).sum()) == 0:
            continue
        value = track_rate(ctx.view, rate.numerator, rate.denominator, ctx.prefix + key,
                           ctx.tx["d_rate"].format(label=rate.label), scale=rate.scale, unit=rate.unit)  # fmt: skip
        findings.append(ctx.tx["rate"].format(label=rate.label, num=rate.numerator, den=rate.denominator, value=value))
        rows.append([rate.label, value])
    table = markdown_table([ctx.tx["h_measure"], ctx.tx["h_value"]], rows) if rows else ""
    append_result(ctx.tx["title"], plan_item=ctx.plan_item, findings=findings, table=table)


def _measure(ctx: Context, m: str, findings: list[str], rows: list[list[str]]) -> None:
    """One measure: a 0/1 outcome's rate, an additive total and mean, or a mean and range; labels are skipped."""
    tx, sid = ctx.tx, ctx.prefix + stem(ctx.table, m)
    facts = column_facts(ctx.view, m)
    if semantic(ctx.table, m) == "binary_outcome":
        positive = (choices.column(ctx.table, m) or {}).get("positive_value")  # a text outcome's ``present``
        kind = "outcome_text" if positive is not None else "outcome"
        rate = track_rate(ctx.view, m, None, sid + "_rate", tx["d_" + kind].format(m=m, positive=positive))
        findings.append(tx[kind].format(m=m, rate=rate, positive=positive))
        rows.append([tx["row_rate"].format(m=m), rate])
        return
    if facts.aggregation == "none":
        logger.info("KPI: %s is a label (aggregation none); left out", m)
        return
    r = {"m": m, "mean": track_mean(ctx.view, m, sid + "_mean", tx["d_mean"].format(m=m))}
    if facts.aggregation == "sum":
        r["total"] = track_total(ctx.view, m, sid + "_total", tx["d_total"].format(m=m))
        findings.append(tx["additive_named" if _NAMED_TOTAL.search(m) else "additive"].format(**r))
        rows.append([tx["row_total"].format(m=m), r["total"]])
    else:
        r["min"] = track_stat(ctx.view, m, sid + "_min", "min", tx["d_min"].format(m=m))
        r["max"] = track_stat(ctx.view, m, sid + "_max", "max", tx["d_max"].format(m=m))
        findings.append(tx["average"].format(**r))
    rows.append([tx["row_mean"].format(m=m), r["mean"]])
    if "min" in r:
        rows.append([tx["row_range"].format(m=m), tx["range_cell"].format(**r)])
    # The trackers leave a sentinel code (99999 for "unknown") out of every figure above; the report says so.
    sentinel = sentinel_finding(ctx, m)
    findings += [sentinel] if sentinel else []


def _typed_value(series: pd.Series, value: str) -> Any:
    """The column's own value whose text is ``value`` (a plan item holds text; a coded column holds numbers).

    Raises:
        BadInputError: No row holds that value, so its total would be a made-up 0.
    """
    found = next((v for v in series.dropna().unique() if str(v) == value), None)
    if found is None:
        raise BadInputError(f"No row of column '{series.name}' holds the value {quote_value(value)}.",
                            fix="use a value the data profile lists for that column (its top_values)")  # fmt: skip
    return found


def filtered_id(ctx: Context) -> str:
    """The id of a filtered KPI, e.g. ``revenue_total_region_west_last_month``: stable, and no headline id."""
    spec = ctx.spec
    parts = [ctx.prefix + stem(ctx.table, spec.measure), "mean" if spec.agg == "mean" else "total"]
    for col, value in spec.where:
        parts += [stem(ctx.table, col), slug(value)]
    if spec.last_period:
        parts += ["last", spec.last_period]
    return "_".join(parts)


def _run_filtered(ctx: Context) -> None:
    """One filtered KPI: the value and its DuckDB check from the same tracker call, then its section."""
    spec, tx = ctx.spec, _FILTERED[ctx.language]
    if spec.measure is None or (spec.last_period and spec.by is None):
        raise BadInputError("A filtered KPI needs a measure (and a date column for its last period).",
                            fix="copy the item's exact wording from the catalog")  # fmt: skip
    parts = []
    data = frame(ctx.view)
    where = {col: _typed_value(data[col], text) for col, text in spec.where}
    if where:
        pairs = WHERE_JOIN[ctx.language].join(f"`{col}` = {quote_value(text)}" for col, text in spec.where)
        parts.append(tx["where"].format(pairs=pairs))
    last = (str(spec.by), spec.last_period) if spec.last_period else None
    if last:
        parts.append(tx["last"].format(period=LAST_PERIODS[ctx.language][last[1]], date=last[0]))
    words = {"m": spec.measure, "agg": FILTER_AGGS[ctx.language][spec.agg or "sum"],
             "filters": tx["join"].join(parts)}  # fmt: skip
    description = tx["description"].format(Agg=words["agg"].capitalize(), **words).replace("`", "")
    track = track_mean if spec.agg == "mean" else track_total
    value = track(ctx.view, spec.measure, filtered_id(ctx), description, where=where or None, last=last)
    rows = [[tx["row"].format(**words), value]]
    table = markdown_table([ctx.tx["h_measure"], ctx.tx["h_value"]], rows)
    append_result(tx["title"], plan_item=ctx.plan_item, findings=[tx["finding"].format(value=value, **words)],
                  table=table)  # fmt: skip
