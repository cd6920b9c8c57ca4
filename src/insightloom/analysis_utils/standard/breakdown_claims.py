"""The claims of a breakdown, each tracked with :func:`track_claim` and cited as ``{{claim:ID}}``.

- ``driver`` (sum, mean and rate breakdowns): epsilon squared of the measure at row level by this breakdown, ranked
  against every breakdown the plan makes of the same measure (:func:`breakdown_candidates`), so "main driver" names
  the one breakdown with the largest material effect;
- ``concentration`` (sum and count breakdowns): the top share and HHI of the group totals, by one set of thresholds;
- ``comparison`` (mean breakdowns): the highest group average against the next one (Welch), so a "highest average"
  within noise is said to be within noise.

The driver and the comparison read one row per group (n, mean and the sum of squares or the variance: the claim
kinds' ``summary`` inputs), computed with pandas here and in SQL by the check, so a table of millions of rows makes a
claim of a few rows whose test is exact.

A driver called ``main`` and a concentration found ``spread_evenly`` for the same breakdown cannot both be printed
(:mod:`insightloom.claims.contradictions`); the breakdown then states the driver and leaves the other unprinted
(it is still recorded and checked).
"""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from insightloom.analysis_utils.calculations import load_calculations
from insightloom.analysis_utils.claims import track_claim
from insightloom.analysis_utils.group_trackers import GroupValues, group_sql, measure_values
from insightloom.analysis_utils.sql import qi, ql
from insightloom.analysis_utils.standard._common import Context, breakdown_candidates, candidates_view
from insightloom.analysis_utils.trackers import frame, outcome_sql, without_codes_sql
from insightloom.claims.inputs import labels

logger = logging.getLogger(__name__)


def claim_findings(ctx: Context, groups: GroupValues) -> list[str]:
    """The breakdown's claim sentences, in reading order (each cites its claim)."""
    findings: list[str] = []
    driver = None
    if groups.measure is not None and groups.agg in ("sum", "mean", "rate"):
        ref, driver = _driver(ctx, groups)
        findings.append(ctx.tx["driver"].format(claim=ref))
    if groups.agg in ("sum", "count") and groups.count >= 2:
        ref, spread = _concentration(ctx, groups)
        if not (driver == "main" and spread == "spread_evenly"):  # the pair contradicts: print the effect size only
            findings.append(ctx.tx["concentration"].format(claim=ref))
    if groups.agg == "mean" and len(groups.ordered) >= 2 and not groups.all_tied and groups.top_tied == 1:
        findings.append(ctx.tx["comparison"].format(claim=_comparison(ctx, groups)))
    return findings


def _verdict(claim_id: str) -> str | None:
    """The verdict just recorded for ``claim_id``."""
    return next((str(c.get("value")) for c in load_calculations() if c.get("id") == claim_id), None)


def _value_sql(groups: GroupValues) -> str:
    """The measure per row as the breakdown reads it (a 0/1 outcome as 0/1, sentinel codes left out)."""
    measure = str(groups.measure)
    if groups.agg == "rate":
        return outcome_sql(measure, groups.positive)
    return without_codes_sql(measure, groups.sentinels)


def _moments(keys: pd.Series, values: pd.Series) -> pd.DataFrame:
    """Per key (labelled as the claim test labels it: 3.0 as "3"): the count, mean and sum of squared deviations of
    the present values."""
    keep = keys.notna() & values.notna()
    grouped = values[keep].astype(float).groupby(keys[keep], sort=True, observed=True)
    stats = grouped.agg(["size", "mean"])
    stats = stats.assign(m2=grouped.var(ddof=0) * stats["size"])
    return stats.set_axis(labels(stats.index.to_series()).to_numpy(), axis=0)  # label the few keys, not every row


def _moments_sql(key: str, view: str, value_sql: str) -> str:
    """The same per-group moments in DuckDB (``var_pop * count`` is the sum of squares); keys as text, so that
    breakdowns of any type stack in one UNION (a driver needs only the partition into groups)."""
    return (f"SELECT CAST({qi(key)} AS VARCHAR) AS grp, COUNT(v) AS n, AVG(v) AS mean, VAR_POP(v) * COUNT(v) AS m2 "
            f"FROM (SELECT {qi(key)}, {value_sql} AS v FROM {qi(view)} WHERE {qi(key)} IS NOT NULL) "
            "WHERE v IS NOT NULL GROUP BY 1")  # fmt: skip


def _driver(ctx: Context, groups: GroupValues) -> tuple[str, str | None]:
    """The driver claim of this breakdown among the plan's breakdowns of the same measure."""
    measure = str(groups.measure)
    candidates = breakdown_candidates(ctx, groups.measure)
    view = candidates_view(ctx, groups.measure)  # the table, or it joined with the parents some candidates are in
    data = frame(view)
    values = measure_values(data[measure], groups.agg, groups.positive, groups.sentinels)
    rows: list[tuple[Any, ...]] = []
    parts = []
    for name in candidates:
        moments = _moments(data[name], values)
        rows += [(name, key, int(n), float(mean), float(m2)) for key, (n, mean, m2) in moments.iterrows()]
        parts.append(
            f"SELECT {ql(name)} AS breakdown, grp, n, mean, m2 FROM ({_moments_sql(name, view, _value_sql(groups))})"
        )
    claim_id = f"claim_driver_{groups.prefix}"
    words = {"m": measure, "by": groups.by, "candidates": ", ".join(candidates)}
    ref = track_claim(
        "driver",
        claim_id,
        view,
        " UNION ALL ".join(parts),
        {"measure": measure, "by": groups.by, "candidates": candidates},
        rows=rows,
        description=ctx.tx["d_driver"].format(**words),
        formula=ctx.tx["f_driver"].format(**words),
        columns=[*candidates, measure],
    )
    return ref, _verdict(claim_id)


def _concentration(ctx: Context, groups: GroupValues) -> tuple[str, str | None]:
    """The concentration claim of the group totals (or counts)."""
    by = groups.by
    aggregate = group_sql(groups.measure, groups.agg, None, groups.scale, groups.positive, groups.sentinels)
    sql = f"SELECT {qi(by)} AS grp, {aggregate} AS v FROM {qi(ctx.view)} WHERE {qi(by)} IS NOT NULL GROUP BY 1"
    rows = [(key, float(value)) for key, value in zip(groups.ordered["key"], groups.ordered["value"], strict=True)]
    claim_id = f"claim_concentration_{groups.prefix}"
    measure = groups.measure or ctx.tx["row_count"]
    words = {"m": measure, "by": by, "what": groups.what.lower()}
    ref = track_claim(
        "concentration",
        claim_id,
        ctx.view,
        sql,
        {"measure": measure, "by": by, "agg": groups.agg},
        rows=rows,
        description=ctx.tx["d_concentration"].format(**words),
        formula=ctx.tx["f_concentration"],
        columns=[by, *([groups.measure] if groups.measure else [])],
    )
    return ref, _verdict(claim_id)


def _comparison(ctx: Context, groups: GroupValues) -> str:
    """The comparison claim of the highest group average against the second highest."""
    measure, by = str(groups.measure), groups.by
    top, second = groups.ordered["key"].iloc[0], groups.ordered["key"].iloc[1]
    data = frame(ctx.view)
    values = measure_values(data[measure], "mean", None, groups.sentinels) * groups.scale
    pair = data[by].isin([top, second])
    moments = _moments(data.loc[pair, by], values[pair])
    rows = [
        (key, int(n), float(mean), float(m2) / (n - 1) if n > 1 else None) for key, (n, mean, m2) in moments.iterrows()
    ]
    scaled = _value_sql(groups) if groups.scale == 1 else f"{groups.scale} * {_value_sql(groups)}"
    sql = (f"SELECT {qi(by)} AS grp, COUNT(v) AS n, AVG(v) AS mean, VAR_SAMP(v) AS var "
           f"FROM (SELECT {qi(by)}, {scaled} AS v FROM {qi(ctx.view)} WHERE {qi(by)} IN ({ql(top)}, {ql(second)})) "
           "WHERE v IS NOT NULL GROUP BY 1")  # fmt: skip
    words = {"m": measure, "a": top, "b": second}
    return track_claim(
        "comparison",
        f"claim_comparison_{groups.prefix}_top",
        ctx.view,
        sql,
        {"measure": measure, "by": by, "a": _plain(top), "b": _plain(second), "unit": groups.unit},
        rows=rows,
        description=ctx.tx["d_comparison"].format(**words),
        formula=ctx.tx["f_comparison"],
        columns=[by, measure],
    )


def _plain(key: Any) -> Any:
    """A group key as a JSON-safe parameter (numpy scalars to Python)."""
    return key.item() if hasattr(key, "item") and not isinstance(key, (str, pd.Timestamp)) else key
