"""Track a whole breakdown at once: every group's value, share, the top and bottom groups, ties named as ties.

``track_group_values`` is the breakdown's "write once, checked twice" tracker: one spec (view, measure, group
column, aggregation) gives the pandas values and the DuckDB checks. Groups are ordered by value (largest first),
ties broken by name; groups that tie for the top or the bottom are all named (``"A, B"``), and when every group has
the same value no top or bottom group is claimed at all.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from insightloom.analysis.wording import texts
from insightloom.analysis_utils.sql import qi, ql
from insightloom.analysis_utils.trackers import (
    column_facts,
    frame,
    is_integral,
    numeric,
    outcome_sql,
    outcome_values,
    require,
    table_of,
    track_value,
    value_decimals,
    without_codes_sql,
)

logger = logging.getLogger(__name__)

AGGS = ("count", "sum", "mean", "rate")
_TIE = 1e-9  # relative: sums added in another order still tie


@dataclass(frozen=True)
class GroupRow:
    """One tracked group: its key, label, value and the references of its value and share (None without one)."""

    key: Any
    label: str
    value: float
    ref: str
    share_ref: str | None


@dataclass
class GroupValues:
    """What :func:`track_group_values` tracked.

    Attributes:
        prefix: The calculation-id prefix (``amount_by_category``).
        view, measure, by, agg: The spec (``measure`` None counts rows).
        what: The value's header in the job's language (Total, Average, Rows, Rate).
        unit: Unit of the group values.
        scale: The measure's ``unit_scale`` applied to sums and averages (1 otherwise).
        count: Number of groups; ``count_ref`` its reference.
        rows: The leading groups, tracked, best first.
        ordered: Every group (columns ``key``, ``value``), best first, ties by name.
        top_ref / bottom_ref: The tied-aware top / bottom group label(s); None when every group ties.
        top_tied / bottom_tied: How many groups share the top / bottom value.
        bottom_value_ref: The bottom value's reference (None when there is one group or all tie).
        all_tied: More than one group and all have the same value.
        sentinels: The measure's sentinel codes (profile ``sentinel_values``), left out of every value.
        integral: Every group value is a whole number of whole-number data (counts, sums of counts): printed and
            charted without decimals.
    """

    prefix: str
    view: str
    measure: str | None
    by: str
    agg: str
    what: str
    unit: str | None
    count: int
    count_ref: str
    scale: int = 1
    positive: str | None = None
    sentinels: tuple[float, ...] = ()
    integral: bool = False
    rows: list[GroupRow] = field(default_factory=list)
    ordered: pd.DataFrame = field(default_factory=pd.DataFrame)
    top_ref: str | None = None
    top_tied: int = 1
    bottom_ref: str | None = None
    bottom_value_ref: str | None = None
    bottom_tied: int = 1
    all_tied: bool = False

    def where(self, row: GroupRow) -> dict[str, Any]:
        """The equality filter selecting the group's rows (for ``track_rate(..., where=...)``)."""
        return {self.by: row.key}


def group_label(key: Any) -> str:
    """A group key as DuckDB's ``CAST(... AS VARCHAR)`` writes it (booleans in lower case)."""
    if isinstance(key, (bool, np.bool_)):
        return "true" if key else "false"
    return str(key)


def measure_values(series: pd.Series, agg: str, positive: str | None, sentinels: tuple[float, ...]) -> pd.Series:
    """A measure's values as a breakdown aggregates them: a 0/1 outcome as 0/1, else numbers without the codes."""
    if agg == "rate":
        return outcome_values(series, positive)
    values = numeric(series)
    return values.mask(values.isin(sentinels)) if sentinels else values


def _grouped(
    data: pd.DataFrame, measure: str | None, by: str, agg: str, scale: int, positive: str | None = None,
    sentinels: tuple[float, ...] = (),
) -> pd.DataFrame:  # fmt: skip
    rows = data[data[by].notna()]
    if agg == "count" or measure is None:
        groups = rows.groupby(by, observed=True).size().astype(float)
    else:
        measured = measure_values(rows[measure], agg, positive, sentinels)
        values = measured.groupby(rows[by], observed=True)
        groups = values.sum() * scale if agg == "sum" else values.mean().dropna() * (100 if agg == "rate" else scale)
    ordered = pd.DataFrame({"key": groups.index, "value": groups.to_numpy(dtype=float)})
    return ordered.sort_values(["value", "key"], ascending=[False, True]).reset_index(drop=True)


def group_sql(
    measure: str | None, agg: str, where: str | None = None, scale: int = 1, positive: str | None = None,
    sentinels: tuple[float, ...] = (),
) -> str:  # fmt: skip
    """The per-group aggregate in SQL, optionally over the rows matching ``where`` only (sentinel codes left out)."""
    if agg == "count" or measure is None:
        return f"COUNT(*) FILTER (WHERE {where})" if where else "COUNT(*)"
    expression = outcome_sql(measure, positive) if agg == "rate" else without_codes_sql(measure, sentinels)
    value = f"CASE WHEN {where} THEN {expression} END" if where else expression
    factor = 100 if agg == "rate" else scale
    sql = f"COALESCE(SUM({value}), 0)" if agg == "sum" else f"AVG({value})"
    return sql if factor == 1 else f"{factor} * {sql}"


def _groups_cte(
    view: str, measure: str | None, by: str, agg: str, scale: int, positive: str | None = None,
    sentinels: tuple[float, ...] = (),
) -> str:  # fmt: skip
    counted = without_codes_sql(measure, sentinels) if measure and agg == "mean" else qi(measure)
    having = f" HAVING COUNT({counted}) > 0" if agg in ("mean", "rate") and measure else ""
    aggregate = group_sql(measure, agg, scale=scale, positive=positive, sentinels=sentinels)
    return (f"WITH g AS (SELECT {qi(by)} AS g, {aggregate} AS v FROM {qi(view)} "
            f"WHERE {qi(by)} IS NOT NULL GROUP BY 1{having}) ")  # fmt: skip


def _tied(ordered: pd.DataFrame, value: float) -> pd.DataFrame:
    close = np.abs(ordered["value"].to_numpy() - value) <= _TIE * max(abs(value), 1.0)
    return ordered[close].sort_values("key")


def _tied_sql(cte: str, extreme: str) -> str:
    return (cte + f", e AS (SELECT {extreme}(v) AS x FROM g) SELECT string_agg(CAST(g AS VARCHAR), ', ' ORDER BY g) "
            f"FROM g, e WHERE abs(v - x) <= {_TIE} * greatest(abs(x), 1)")  # fmt: skip


def track_group_values(
    prefix: str,
    view: str | None,
    measure: str | None,
    by: str,
    agg: str = "sum",
    *,
    top: int = 5,
    shares: bool = True,
    language: str = "en",
) -> GroupValues:
    """Track ``agg(measure)`` per group of ``by``: the leading groups, their shares, the top and bottom groups.

    Args:
        prefix: Calculation-id prefix; ids are ``<prefix>_groups``, ``_top``, ``_1``.. ``_<top>``, ``_share_<i>``,
            ``_bottom`` and ``_bottom_value``.
        view: View name or alias.
        measure: The measure column; None counts rows (``agg`` is then ``count``).
        by: The group column (rows where it is missing are left out of the groups, not of the shares' total).
        agg: ``count``, ``sum``, ``mean`` or ``rate`` (a 0/1 outcome: 100 * its average per group, in %).
        top: How many leading groups to track.
        shares: Track each leading group's share of the whole (sum and count only).
        language: Language of the descriptions (``en`` or ``ko``).

    Raises:
        AggregationRefused: The profile forbids ``agg`` of the measure (a sum of a price, an average of a code).
        ValueError: Unknown ``agg``, or no group has a value.
    """
    agg = "count" if measure is None else agg
    if agg not in AGGS:
        raise ValueError(f"track_group_values({prefix!r}): agg {agg!r} must be one of {', '.join(AGGS)}")
    table = table_of(view)
    facts = column_facts(view, measure) if measure else None
    if facts is not None and agg != "count":
        require(facts, "sum" if agg == "sum" else "mean")
    scale = facts.unit_scale if facts is not None and agg in ("sum", "mean") else 1
    data = frame(view)
    positive = facts.positive if facts is not None else None
    codes = facts.sentinels if facts is not None and agg in ("sum", "mean") else ()
    ordered = _grouped(data, measure, by, agg, scale, positive, codes)
    if ordered.empty:
        raise ValueError(f"track_group_values({prefix!r}): no {by!r} group has a value")
    tx = texts("breakdown", language)
    what = tx["h_value_" + agg]
    cols = [by] if agg == "count" else [by, str(measure)]
    unit = _group_unit(facts, agg)
    integral = agg == "count" or (agg == "sum" and measure is not None and is_integral(data[measure]))
    nonnull = [str(measure)] if agg in ("mean", "rate") else []
    words = {"by": by, "m": measure or "", "what": what}
    result = GroupValues(prefix, table.view, measure, by, agg, what, unit, len(ordered), "", scale, positive=positive,
                         sentinels=codes, integral=integral)  # fmt: skip
    result.ordered = ordered
    result.count_ref = track_value(
        f"{prefix}_groups", len(ordered), tx["d_groups"].format(**words),
        f"number of {by} groups" + (f" with a {measure} value" if nonnull else ""), table.view, [by, *nonnull],
        "medium", None, "count", recipe={"op": "count_groups", "view": table.view, "by": by, "nonnull": nonnull},
    )  # fmt: skip
    cte = _groups_cte(table.view, measure, by, agg, scale, positive, codes)
    first, last = float(ordered["value"].iloc[0]), float(ordered["value"].iloc[-1])
    result.all_tied = len(ordered) > 1 and len(_tied(ordered, first)) == len(ordered)
    if not result.all_tied:
        tied = _tied(ordered, first)
        result.top_tied = len(tied)
        top_basis = _basis(result, "group_max", part="group", single=len(tied) == 1)
        result.top_ref = track_value(f"{prefix}_top", ", ".join(group_label(k) for k in tied["key"]),
                                     tx["d_top"].format(**words), "largest group(s) (ties: all, by name)", table.view,
                                     cols, "high", _tied_sql(cte, "MAX"), basis=top_basis)  # fmt: skip
    whole = (
        float(len(data))
        if agg == "count"
        else float(measure_values(data[str(measure)], agg, positive, codes).sum()) * scale
    )
    for i, (key, value) in enumerate(zip(ordered["key"].head(top), ordered["value"].head(top), strict=True), start=1):
        result.rows.append(_track_row(result, i, key, float(value), whole if shares else 0.0, integral, tx, cols))
    if len(ordered) > 1 and not result.all_tied:
        low = _tied(ordered, last)
        result.bottom_tied = len(low)
        single = len(low) == 1
        result.bottom_ref = track_value(f"{prefix}_bottom", ", ".join(group_label(k) for k in low["key"]),
                                        tx["d_bottom"].format(**words), "smallest group(s) (ties: all, by name)",
                                        table.view, cols, "medium", _tied_sql(cte, "MIN"),
                                        basis=_basis(result, "group_min", part="group", single=single))  # fmt: skip
        result.bottom_value_ref = track_value(f"{prefix}_bottom_value", last, tx["d_bottom_value"].format(**words),
                                              "value of the smallest group", table.view, cols, "medium",
                                              cte + "SELECT MIN(v) FROM g", unit,
                                              value_decimals(last, unit, integral),
                                              basis=_basis(result, "group_min", single=single))  # fmt: skip
    logger.debug("tracked %d of %d groups for %s", len(result.rows), len(ordered), prefix)
    return result


def _basis(
    result: GroupValues, op: str, where: dict[str, Any] | None = None, part: str = "value", *, single: bool = True
) -> Any:
    """The statistics-catalog basis of a breakdown's value (None for a rate, a scaled or sentinel-cleaned one, or a
    top or bottom shared by tied groups)."""
    if not single or result.agg not in ("sum", "mean", "count") or result.scale != 1 or result.sentinels:
        return None
    from insightloom.analysis_utils.statistics import basis_of
    from insightloom.statistics.request import Filter, Step

    columns = () if result.agg == "count" or result.measure is None else (str(result.measure),)
    if op in ("group_max", "group_min"):
        return basis_of(Step(op, columns, result.by).with_params(agg=result.agg), (), part)
    filters = tuple(Filter(str(c), "=", v if isinstance(v, int | float) and not isinstance(v, bool) else str(v))
                    for c, v in (where or {}).items())  # fmt: skip
    return basis_of(Step(op, columns), filters, part)


def _group_unit(facts: Any, agg: str) -> str | None:
    if agg == "count":
        return "count"
    if agg == "rate":
        return "%"
    unit = facts.unit if facts is not None else None
    return None if agg == "mean" and unit == "count" else unit


def _group_formula(result: GroupValues) -> str:
    """One formula for every group of a breakdown (the description names the group), so the appendix shows it once."""
    of = f" of {result.measure}" if result.measure and result.agg != "count" else ""
    return f"{result.agg}{of} over the rows of the {result.by} group"


def _track_row(
    result: GroupValues, i: int, key: Any, value: float, whole: float, integral: bool, tx: dict[str, str],
    cols: list[str],
) -> GroupRow:  # fmt: skip
    """Track one leading group's value (and its share of ``whole`` when that is not 0)."""
    where = f"{qi(result.by)} = {ql(key)}"
    level = "high" if i == 1 else "medium"
    scale = result.scale
    words = {"by": result.by, "g": key, "what": result.what, "m": result.measure or ""}
    aggregate = group_sql(result.measure, result.agg, where, scale, result.positive, result.sentinels)
    value_ref = track_value(f"{result.prefix}_{i}", value, tx["d_value"].format(**words), _group_formula(result),
                            result.view, cols, level, f"SELECT {aggregate} FROM {qi(result.view)}",
                            result.unit, value_decimals(value, result.unit, integral),
                            basis=_basis(result, result.agg, {result.by: key}))  # fmt: skip
    share_ref = None
    if result.agg in ("sum", "count") and whole:
        share = 100 * value / whole
        part, total = (
            group_sql(result.measure, result.agg, where, scale, sentinels=result.sentinels),
            group_sql(result.measure, result.agg, None, scale, sentinels=result.sentinels),
        )
        share_ref = track_value(f"{result.prefix}_share_{i}", share, tx["d_share"].format(**words),
                                f"{_group_formula(result)} / {result.agg} over all rows * 100", result.view, cols,
                                level,
                                f"SELECT 100 * CAST({part} AS DOUBLE) / NULLIF({total}, 0) FROM {qi(result.view)}",
                                "%", value_decimals(share, "%", False))  # fmt: skip
    return GroupRow(key, group_label(key), value, value_ref, share_ref)
