"""The trend split by a category: one series per leading group of a category column, each value tracked and checked.

A plan item such as "Trend of `Amount` per month over `Date` by `Category`: ..." (``AnalysisSpec(kind="trend",
split="Category")``) runs here. :func:`insightloom.analysis_utils.series_trackers.track_split_series` tracks every
value of each leading group's series (the :data:`TOP_N` largest groups over all periods; the others counted and
named as left out) and each group's first-vs-last change, with a DuckDB check each. The section holds the span, which
groups are shown, the largest group in the last compared period, a table (one row per period, one column per group,
and a last row with each group's change) and a line chart with one line per group.
"""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from insightloom.analysis import time_logic
from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis.wording import PERIOD_WORDS, counted, pick
from insightloom.analysis_utils.charts import period_axis, save_chart
from insightloom.analysis_utils.numbers_text import compact_axis
from insightloom.analysis_utils.result_notes import append_result
from insightloom.analysis_utils.series_trackers import MAX_NAMED, SplitSeries, track_split_series
from insightloom.analysis_utils.standard._common import TOP_N, axis_label, context, markdown_table, plain, stem

logger = logging.getLogger(__name__)

MAX_MARKERS = 40
#: A date axis with this many periods or fewer gets one labelled tick per period.
MAX_LABELLED = 8


def split_prefix(spec: AnalysisSpec, table: dict[str, Any], period: str) -> str:
    """The calculation-id prefix of a split trend, e.g. ``amount_per_month_by_category`` (``rows_per_...`` for
    row counts, ``avg_<m>_per_...`` for averages)."""
    agg = spec.agg or ("count" if spec.measure is None else "sum")
    m = stem(table, spec.measure)
    base = {"count": f"rows_per_{period}", "sum": f"{m}_per_{period}", "mean": f"avg_{m}_per_{period}"}[agg]
    return f"{base}_by_{stem(table, spec.split)}"


def run_split_trend(spec: AnalysisSpec, *, language: str = "en") -> None:
    """Track and write the trend of ``spec.measure`` per period over ``spec.by``, one series per group of
    ``spec.split`` (the largest :data:`TOP_N` groups; the rest named as left out).

    Raises:
        AggregationRefused: The profile forbids ``spec.agg`` of the measure.
        ValueError: No split column, a wide table's years or no time axis, or no period has a value.
    """
    if not spec.split:
        raise ValueError("run_split_trend: the spec names no column to split the trend by")
    ctx = context(spec, language)
    axis = time_logic.axis_for(ctx.table, str(spec.by), spec.period)
    agg = spec.agg or ("count" if spec.measure is None else "sum")
    measure = None if agg == "count" else spec.measure
    prefix = ctx.prefix + split_prefix(spec, ctx.table, axis.period)
    series = track_split_series(prefix, ctx.view, measure, str(spec.by), spec.split, agg, period=axis.period,
                                top=TOP_N, language=ctx.language)  # fmt: skip
    tx = ctx.tx
    period_word = PERIOD_WORDS[ctx.language][series.axis.period]
    findings = [
        pick(tx, "span", len(series.periods)).format(periods=series.periods_ref, period=period_word,
                                                     first=series.first_ref, last=series.last_ref),
        _scope(series, tx, ctx.language),
    ]  # fmt: skip
    if series.top_ref and series.top_value_ref and series.top_value_ref != "-":
        key = "split_top_tied" if series.top_tied > 1 else "split_top"
        findings.append(tx[key].format(period_label=series.top_period_ref, top=series.top_ref,
                                       value=series.top_value_ref))  # fmt: skip
    findings += _comparison_notes(series, tx)
    if len(series.tracked) < len(series.periods):
        findings.append(tx["split_ends"])
    title = tx["split_title"].format(what=series.what, period=period_word, by=series.by)
    chart = _chart(series, title, tx, period_word)
    append_result(title, plan_item=ctx.plan_item, findings=findings, table=_table(series, tx), charts=[chart])
    logger.debug("split trend %s: %d groups shown", prefix, len(series.groups))


def _scope(series: SplitSeries, tx: dict[str, str], language: str) -> str:
    """Which groups have a series: all of them, or the largest, the others counted and named as left out."""
    words = {
        "by": series.by,
        "groups": series.count_ref,
        "w_groups": counted(series.count, "group", language),
        "what": series.what,
        "shown": series.shown_ref,
        "left": series.left_ref,
        "names": series.left_names_ref,
    }
    if not series.left_out:
        return tx["split_scope_all"].format(**words)
    return tx["split_scope_top_more" if series.left_out > MAX_NAMED else "split_scope_top"].format(**words)


def _comparison_notes(series: SplitSeries, tx: dict[str, str]) -> list[str]:
    """What the change row compares when an end period is partial (left out, or compared per observed day)."""
    comparison = series.comparison
    if series.change_kind == "change_per_day":
        return [tx["split_per_day"]]
    if series.change_kind == "change_complete":
        which = "both" if comparison.partial_first and comparison.partial_last else (
            "first" if comparison.partial_first else "last")  # fmt: skip
        return [tx["partial_" + which]]
    if series.change_kind and (comparison.partial_first or comparison.partial_last):
        return [tx["partial_kept"]]
    return []


def _table(series: SplitSeries, tx: dict[str, str]) -> str:
    """One row per tracked period, one column per group shown, and a last row with each group's change."""
    header = [tx["h_period"], *(g.label for g in series.groups)]
    rows = [[series.labels[p], *(g.cells.get(p, "-") for g in series.groups)] for p in series.tracked]
    if series.change_kind and any(g.change_ref for g in series.groups):
        rows.append([tx["h_" + series.change_kind], *(g.change_ref or "-" for g in series.groups)])
    return markdown_table(header, rows)


def _chart(series: SplitSeries, title: str, tx: dict[str, str], period_word: str) -> str:
    from matplotlib.figure import Figure

    values = series.frame()
    fig = Figure(figsize=(6, 3.6))
    ax = fig.subplots()
    marker = "o" if len(values) <= MAX_MARKERS else None
    for label in values.columns:
        ax.plot(values.index, values[label].to_numpy(dtype=float), marker=marker, label=str(label))
    if series.axis.kind == "date" and len(values) <= MAX_LABELLED:
        # Few periods: one tick per period, labelled as the table labels it (a single month is no date range).
        ax.set_xticks(list(values.index), [series.labels[p] for p in values.index])
        if len(values) == 1:
            only = values.index[0]
            ax.set_xlim(only - pd.Timedelta(days=30), only + pd.Timedelta(days=30))
    else:
        period_axis(ax, series.axis.kind == "date")
    compact_axis(ax.yaxis, integer=series.integral)
    ax.set_ylabel(axis_label(series.what, series.unit))
    ax.set_title(plain(title))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", title=plain(series.by), title_fontsize="small")
    words = {"what": series.what, "period": period_word, "by": series.by, "over": tx["over"].format(c=series.date)}
    caption = tx["split_caption_top" if series.left_out else "split_caption"].format(**words)
    return save_chart(fig, f"trend_{series.prefix}", title=plain(title),
                      alt=plain(tx["split_chart_alt"].format(**words)), caption=plain(caption))  # fmt: skip
