"""The standard correlation: Pearson r of two measures, the variance it explains, the correlation claim (strength,
Spearman beside it, and whether a few extreme points drive it), and a scatter (or hexbin) chart.

The numeric sentence carries no strength word: "strong" or "driven by a few extreme values" is the claim's verdict,
recorded and checked like a number, and the finding cites it as ``{{claim:ID}}``.
"""

from __future__ import annotations

import logging

import pandas as pd

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis.wording import pick
from insightloom.analysis_utils.charts import draw_scatter, save_chart
from insightloom.analysis_utils.claims import track_claim
from insightloom.analysis_utils.numbers_text import compact_axis
from insightloom.analysis_utils.result_notes import append_result
from insightloom.analysis_utils.sql import qi
from insightloom.analysis_utils.standard._common import Context, context, plain, stem
from insightloom.analysis_utils.trackers import column_facts, measured_pair, require, track_corr, track_value

logger = logging.getLogger(__name__)


def run_correlation(spec: AnalysisSpec, *, language: str = "en") -> None:
    """Track and write the Pearson correlation of ``spec.measures[0]`` and ``[1]`` over rows where both are present.

    Raises:
        AggregationRefused: A column the profile marks as a label (a year, code or rank): its numbers are not
            quantities, so a correlation with them means nothing.
    """
    ctx = context(spec, language)
    x, y = spec.measures[:2]
    for name in (x, y):
        require(column_facts(ctx.view, name), "mean")
    prefix = ctx.prefix + f"corr_{stem(ctx.table, x)}_{stem(ctx.table, y)}"
    pair, sql_x, sql_y = measured_pair(ctx.view, x, y)
    tx, r = ctx.tx, {"x": x, "y": y}
    both = f"({sql_x}) IS NOT NULL AND ({sql_y}) IS NOT NULL"
    r["n"] = track_value(prefix + "_n", len(pair), tx["d_n"].format(x=x, y=y), "rows where both values are present",
                         ctx.view, [x, y], "low", f"SELECT COUNT(*) FROM {qi(ctx.view)} WHERE {both}",
                         "count")  # fmt: skip
    coef = float(pair[x].corr(pair[y])) if len(pair) >= 3 else float("nan")
    if coef != coef:  # NaN: a constant column or too few rows
        findings = [pick(tx, "none", len(pair)).format(**r)]
    else:
        r["r"] = track_corr(ctx.view, x, y, prefix + "_r", tx["d_r"].format(x=x, y=y))
        r["r2"] = track_value(prefix + "_r2", coef**2 * 100, tx["d_r2"].format(x=x, y=y), "r ** 2 * 100", ctx.view,
                              [x, y], "medium", f"SELECT 100 * power(corr({sql_x}, {sql_y}), 2) FROM {qi(ctx.view)}",
                              "%")  # fmt: skip
        findings = [tx["r"].format(**r), _claim(ctx, prefix, pair, sql_x, sql_y)]
    chart = _chart(ctx, prefix, pair[x], pair[y])
    append_result(tx["title"].format(x=x, y=y), plan_item=ctx.plan_item, findings=findings, charts=[chart])
    logger.debug("correlation %s over %d rows", prefix, len(pair))


def _claim(ctx: Context, prefix: str, pair: pd.DataFrame, sql_x: str, sql_y: str) -> str:
    """The correlation claim over the rows where both values are present; the finding that cites it."""
    x, y = ctx.spec.measures[:2]
    both = f"({sql_x}) IS NOT NULL AND ({sql_y}) IS NOT NULL"
    sql = f"SELECT {sql_x} AS x, {sql_y} AS y FROM {qi(ctx.view)} WHERE {both}"
    ref = track_claim(
        "correlation",
        "claim_" + prefix,
        ctx.view,
        sql,
        {"measure": y, "by": x, "x": x, "y": y},
        rows=pair[[x, y]].astype(float),
        description=ctx.tx["d_claim"].format(x=x, y=y),
        formula=ctx.tx["f_claim"],
        columns=[x, y],
        importance="high",
    )
    return ctx.tx["claim"].format(x=x, y=y, claim=ref)


def _chart(ctx: Context, prefix: str, xs: object, ys: object) -> str:
    from matplotlib.figure import Figure

    x, y = ctx.spec.measures[:2]
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    binned = draw_scatter(ax, xs, ys)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    compact_axis(ax.xaxis)
    compact_axis(ax.yaxis)
    title = plain(ctx.tx["title"].format(x=x, y=y))
    ax.set_title(title)
    caption = ctx.tx["caption_binned" if binned else "caption"].format(x=x, y=y)
    return save_chart(fig, f"correlation_{prefix}", title=title, alt=plain(ctx.tx["chart_alt"].format(x=x, y=y)),
                      caption=plain(caption))  # fmt: skip
