"""A breakdown of a measure (or of rows) by a category: group values, shares, top and bottom groups, ties named,
a rate from its parts per group where the table has one, the claims an analyst would draw, a table and a bar chart.

A 0/1 outcome (profile semantic ``binary_outcome``) is broken down as its rate per group (100 * mean, in %), which
is what "survival by class" means, never as a sum of ones.

Verdicts are tracked claims (:mod:`insightloom.analysis_utils.standard.breakdown_claims`), never free text: whether
the breakdown drives the measure (epsilon squared against every breakdown of the plan), how concentrated the group
totals are (top share, HHI), and whether the highest average is above the next one beyond noise (Welch).
"""

from __future__ import annotations

import logging
from typing import Any

from matplotlib.figure import Figure

from insightloom.analysis import joins
from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis.wording import counted
from insightloom.analysis_utils.charts import save_chart
from insightloom.analysis_utils.group_trackers import GroupValues, track_group_values
from insightloom.analysis_utils.numbers_text import compact_axis
from insightloom.analysis_utils.result_notes import append_result
from insightloom.analysis_utils.sql import qi
from insightloom.analysis_utils.standard._common import (
    RATE_PREFERENCE,
    TOP_N,
    Context,
    Rate,
    axis_label,
    context,
    markdown_table,
    plain,
    rates,
    semantic,
    stem,
)
from insightloom.analysis_utils.standard.breakdown_claims import claim_findings
from insightloom.analysis_utils.trackers import frame, job_profile, numeric, track_rate, track_value, value_decimals

logger = logging.getLogger(__name__)

_BASES = {"count": "rows_by_{by}", "sum": "{m}_by_{by}", "mean": "avg_{m}_by_{by}", "rate": "{m}_rate_by_{by}"}


def breakdown_agg(ctx: Context) -> str:
    """The aggregation actually used: the plan's, except that a 0/1 outcome is always its rate per group."""
    spec = ctx.spec
    if spec.measure and semantic(ctx.table, spec.measure) == "binary_outcome":
        return "rate"
    return spec.agg if spec.measure else "count"


def breakdown_prefix(ctx: Context) -> str:
    """Calculation-id prefix, e.g. ``amount_by_category`` or ``sales_avg_price_by_region`` for a named table."""
    base = _BASES[breakdown_agg(ctx)].format(m=stem(ctx.table, ctx.spec.measure), by=stem(ctx.table, ctx.spec.by))
    return ctx.prefix + base


def _group_rate(ctx: Context) -> Rate | None:
    """The rate from parts shown per group of a sum breakdown (ROAS first, then CTR, ...), if the table has one."""
    if breakdown_agg(ctx) != "sum":
        return None
    defined = rates(ctx.table, ctx.language)
    return next((defined[k] for k in RATE_PREFERENCE if k in defined), None)


def run_breakdown(spec: AnalysisSpec, *, language: str = "en") -> None:
    """Break the measure down by the category and write the section with its table and bar chart."""
    ctx = context(spec, language)
    by = str(spec.by)
    agg, pfx = breakdown_agg(ctx), breakdown_prefix(ctx)
    groups = track_group_values(pfx, ctx.view, spec.measure, by, agg, top=TOP_N, language=ctx.language)
    rate = _group_rate(ctx)
    rate_refs = [_rate_ref(ctx, groups, rate, i) for i in range(len(groups.rows))] if rate else []
    findings = [_top_finding(ctx, groups), *_join_findings(ctx)]
    if rate and rate_refs and rate_refs[0] != "-" and not groups.all_tied:
        findings.append(ctx.tx["rate"].format(label=rate.label, value=rate_refs[0]))
    if groups.bottom_ref:
        key = "bottom_tied" if groups.bottom_tied > 1 else "bottom"
        findings.append(ctx.tx[key].format(bottom=groups.bottom_ref, value=groups.bottom_value_ref))
    findings += claim_findings(ctx, groups)
    shares = any(row.share_ref for row in groups.rows)
    header = [by, groups.what] + ([ctx.tx["h_share"]] if shares else []) + ([rate.label] if rate else [])
    table_rows = []
    for i, row in enumerate(groups.rows):
        cells = [row.label, row.ref] + ([row.share_ref or "-"] if shares else [])
        table_rows.append(cells + ([rate_refs[i]] if rate else []))
    title = ctx.tx["title_" + agg].format(m=spec.measure, by=by)
    chart = _chart(ctx, groups, title)
    append_result(title, plan_item=ctx.plan_item, findings=findings, table=markdown_table(header, table_rows),
                  charts=[chart])  # fmt: skip


def _join_findings(ctx: Context) -> list[str]:
    """Across a joined view, where the breakdown's column comes from and how many rows found their parent row: rows
    whose key finds none are in no group (they still count in the shares' total)."""
    if not joins.is_joined(ctx.view):
        return []
    view = joins.resolve(job_profile(), ctx.view)
    step = next((s for s in view.steps if ctx.spec.by in s.columns), None)
    if step is None:
        return []
    child, parent = frame(view.child), frame(step.parent)
    share = 100 * float(child[step.child_column].isin(parent[step.parent_column]).mean()) if len(child) else 0.0
    words = {"child": view.child, "parent": step.parent, "key": step.child_column, "by": ctx.spec.by}
    check = (f"SELECT 100.0 * COUNT(*) FILTER (WHERE {qi(step.child_column)} IN (SELECT {qi(step.parent_column)} "
             f"FROM {qi(step.parent)})) / NULLIF(COUNT(*), 0) FROM {qi(view.child)}")  # fmt: skip
    matched = track_value(f"{breakdown_prefix(ctx)}_matched", share, ctx.tx["d_matched"].format(**words),
                          f"rows of {view.child} whose {step.child_column} is in {step.parent}.{step.parent_column} "
                          "/ all rows * 100", view.child, [step.child_column], "medium", check, "%",
                          value_decimals(share, "%", False))  # fmt: skip
    return [ctx.tx["joined"].format(matched=matched, **words)]


def _rate_ref(ctx: Context, groups: GroupValues, rate: Rate, i: int) -> str:
    """The rate of one leading group, or ``-`` when its denominator is 0."""
    row = groups.rows[i]
    data = frame(ctx.view)
    if float(numeric(data.loc[data[groups.by] == row.key, rate.denominator]).sum()) == 0:
        return "-"
    return track_rate(ctx.view, rate.numerator, rate.denominator, f"{groups.prefix}_{rate.key}_{i + 1}",
                      ctx.tx["d_rate"].format(label=rate.label, g=row.key), scale=rate.scale,
                      where=groups.where(row), importance="medium", unit=rate.unit)  # fmt: skip


def _top_finding(ctx: Context, groups: GroupValues) -> str:
    """The first finding: the number of groups and the top group(s), or that every group ties."""
    first = groups.rows[0]
    words: dict[str, Any] = {
        "m": groups.measure, "by": groups.by, "groups": groups.count_ref, "top": groups.top_ref, "value": first.ref,
        "share": first.share_ref or "", "w_groups": counted(groups.count, "group", ctx.language),
        "w_value": counted(first.value, "row", ctx.language),
    }  # fmt: skip
    if groups.all_tied:
        return ctx.tx["all_tied"].format(**words)
    key = f"top_{groups.agg}" + ("_tied" if groups.top_tied > 1 else "")
    return ctx.tx[key].format(**words)


CHART_GROUPS = 10


def _chart(ctx: Context, groups: GroupValues, title: str) -> str:
    """A horizontal bar chart of the leading groups (up to ten, largest on top), titled with what it shows.

    The title drawn on the chart counts the groups ("all 5 groups", "top 10 of 48"); the caption and the sidecar
    title, which the report prints as text, say the same without a count the report could not cite.
    """
    plot = groups.ordered.head(CHART_GROUPS).iloc[::-1]
    scope = "all" if len(plot) == groups.count else "top"
    words = {"title": plain(title), "groups": groups.count, "shown": len(plot), "what": groups.what, "by": groups.by}
    fig = Figure(figsize=(6, 3.6))
    ax = fig.subplots()
    ax.barh([str(k) for k in plot["key"]], plot["value"], color="#4C72B0")
    what = ctx.tx["axis_" + groups.agg].format(m=plain(groups.measure or ""))
    ax.set_xlabel(axis_label(what, "%" if groups.agg == "rate" else groups.unit))
    compact_axis(ax.xaxis, integer=groups.integral)
    ax.set_title(ctx.tx["chart_title_" + scope].format(**words))
    caption = ctx.tx["caption_" + scope].format(**words)
    return save_chart(fig, f"breakdown_{groups.prefix}", title=caption.rstrip("."),
                      alt=ctx.tx["chart_alt_" + scope].format(**words), caption=caption)  # fmt: skip
