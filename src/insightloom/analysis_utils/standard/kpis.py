"""Headline KPIs: totals of additive measures, averages and ranges of the others, rates of 0/1 outcomes, and
rates recomputed from their parts, with a summary table of every number."""

from __future__ import annotations

import logging
import re

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis_utils.result_notes import append_result
from insightloom.analysis_utils.standard._common import Context, context, markdown_table, rates, semantic, stem
from insightloom.analysis_utils.trackers import (
    column_facts,
    frame,
    numeric,
    track_mean,
    track_rate,
    track_stat,
    track_total,
)

logger = logging.getLogger(__name__)

# A column already named as a total reads "`total_sales` sums to ...", never "Total `total_sales` is ...".
_NAMED_TOTAL = re.compile(r"(^|[^a-z])(total|sum)", re.I)


def run_kpi(spec: AnalysisSpec, *, language: str = "en") -> None:
    """Track each KPI measure the way its profile allows, then each rate from its parts; one section and table."""
    ctx = context(spec, language)
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
        rate = track_rate(ctx.view, m, None, sid + "_rate", tx["d_outcome"].format(m=m))
        findings.append(tx["outcome"].format(m=m, rate=rate))
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
