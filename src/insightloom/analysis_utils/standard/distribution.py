"""The standard distribution: quartiles, the 90th percentile, spread, IQR outliers, whether they move the mean (an
``outlier`` claim), a sentinel code left out (a ``sentinel`` claim) and a readable histogram."""

from __future__ import annotations

import logging

import pandas as pd

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis.wording import pick
from insightloom.analysis_utils.charts import draw_histogram, save_chart
from insightloom.analysis_utils.result_notes import append_result
from insightloom.analysis_utils.sql import qi
from insightloom.analysis_utils.standard._common import Context, axis_label, context, plain, stem
from insightloom.analysis_utils.standard.value_claims import outlier_claim, sentinel_finding
from insightloom.analysis_utils.trackers import (
    ColumnFacts,
    catalog_basis,
    column_facts,
    frame,
    is_integral,
    measured,
    measured_sql,
    require,
    track_stat,
    track_value,
)

logger = logging.getLogger(__name__)

QUANTILES = (("median", 0.5), ("p90", 0.9), ("q1", 0.25), ("q3", 0.75))


def run_distribution(spec: AnalysisSpec, *, language: str = "en") -> None:
    """Track and write the distribution of ``spec.measure``: median, p90, quartiles, std, IQR outliers, histogram.

    Raises:
        AggregationRefused: The profile marks the column as a label (a year, code or rank).
        ValueError: The column has no value.
    """
    ctx = context(spec, language)
    m = str(spec.measure)
    facts = column_facts(ctx.view, m)
    require(facts, "quantile")
    prefix, tx = ctx.prefix + stem(ctx.table, m), ctx.tx
    s = measured(frame(ctx.view)[m], facts).dropna()  # a sentinel code (99999 for "unknown") is no value
    if s.empty:
        raise ValueError(f"run_distribution: column {m!r} has no value")
    r = {"m": m}
    for key, q in QUANTILES:
        r[key] = track_stat(ctx.view, m, f"{prefix}_{key}", "quantile", tx["d_" + key].format(m=m), q=q,
                            importance="high" if key == "median" else "medium")  # fmt: skip
    findings = [tx["center"].format(**r), tx["spread"].format(**r)]
    sentinel = sentinel_finding(ctx, m)
    findings += [sentinel] if sentinel else []
    if len(s) > 1:
        # A low-importance detail with a recipe, no check: the Validator re-derives it when its tiers pick it.
        r["std"] = track_stat(ctx.view, m, prefix + "_std", "std", tx["d_std"].format(m=m), importance="low")
        findings.append(tx["std"].format(**r))
    findings.append(_outliers(ctx, facts, prefix, s, r))
    chart = _chart(ctx, facts, prefix, s * facts.unit_scale)
    append_result(tx["title"].format(m=m), plan_item=ctx.plan_item, findings=findings, charts=[chart])
    logger.debug("distribution %s over %d values", prefix, len(s))


def _outliers(ctx: Context, facts: ColumnFacts, prefix: str, s: pd.Series, r: dict[str, str]) -> str:
    """Values beyond the 1.5 IQR fences: how many and their share, each with its DuckDB check, and the claim of
    whether they move the mean."""
    m = facts.name
    q1, q3 = s.quantile(0.25), s.quantile(0.75)
    outliers = int(((s < q1 - 1.5 * (q3 - q1)) | (s > q3 + 1.5 * (q3 - q1))).sum())
    col, view, tx = measured_sql(facts), qi(ctx.view), ctx.tx
    # The fences are scalar subqueries, never joined in: a table with its own ``Q1`` column (DuckDB names are
    # case-insensitive) would make a joined ``q1`` ambiguous.
    fences = (f"WITH q AS (SELECT quantile_cont({col}, 0.25) AS q1, quantile_cont({col}, 0.75) AS q3 FROM {view}), "
              "f AS (SELECT q1 - 1.5 * (q3 - q1) AS lo, q3 + 1.5 * (q3 - q1) AS hi FROM q) ")  # fmt: skip
    outside = f"({col} < (SELECT lo FROM f) OR {col} > (SELECT hi FROM f))"
    r["outliers"] = track_value(prefix + "_outliers", outliers, tx["d_outliers"].format(m=m),
                                "values below Q1 - 1.5 IQR or above Q3 + 1.5 IQR", ctx.view, [m], "medium",
                                fences + f"SELECT COUNT(*) FROM {view} WHERE {outside}", "count",
                                basis=catalog_basis("iqr_outliers", [m], [facts], k=1.5))  # fmt: skip
    share = 100 * outliers / len(s)
    r["share"] = track_value(prefix + "_outlier_share", share, tx["d_outlier_share"].format(m=m),
                             "outliers / non-missing values * 100", ctx.view, [m], "medium",
                             fences + f"SELECT 100 * CAST(COUNT(*) FILTER (WHERE {outside}) AS DOUBLE) / COUNT({col}) "
                             f"FROM {view}", "%", 2 if 0 < share < 1 else None)  # fmt: skip
    r["claim"] = outlier_claim(ctx, prefix, m)
    return pick(tx, "outliers", outliers).format(**r)


def _chart(ctx: Context, facts: ColumnFacts, prefix: str, s: pd.Series) -> str:
    from matplotlib.figure import Figure

    m = facts.name
    fig = Figure(figsize=(6, 3.4))
    ax = fig.subplots()
    scale = draw_histogram(ax, s, integer=is_integral(s))
    ax.axvline(float(s.median()), color="#C44E52", linestyle="--")
    ax.set_xlabel(axis_label(m, None if facts.unit == "count" else facts.unit))
    ax.set_ylabel(ctx.tx["axis_rows"])
    title = plain(ctx.tx["title"].format(m=m))
    ax.set_title(title)
    caption = ctx.tx["caption" if scale == "linear" else f"caption_{scale}"].format(m=m)
    return save_chart(fig, f"distribution_{prefix}", title=title, alt=plain(ctx.tx["chart_alt"].format(m=m)),
                      caption=plain(caption))  # fmt: skip
