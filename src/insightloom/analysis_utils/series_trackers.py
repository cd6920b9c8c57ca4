"""Track a trend split by a category: every value of each group's series, checked by DuckDB from one CTE.

``track_split_series`` is the split trend's "write once, checked twice" tracker: one spec (view, measure, time axis
column, period, group column, aggregation) gives the pandas values and the DuckDB checks, which all read one CTE
``s(period, g, v)`` (and ``r(g, v)``, each group over all periods). Groups are ranked by their value over all periods
(largest first, ties by name), as :func:`track_group_values` ranks them. Only the ``top`` leading groups get a
series; the others are counted and the largest :data:`MAX_NAMED` of them named as left out, so a column with
hundreds of values does not explode the report.

Each leading group's value in each tracked period is tracked (a total or a count of a period with no row is 0; an
average of one has no value), and so is its first-vs-last change over the periods
:func:`insightloom.analysis.time_logic.compare_periods` chooses, the same rule as the plain trend: partial first or
last periods are left out while two complete periods remain, else the ends are compared per observed day. A series
of up to :data:`MAX_TABLE_PERIODS` periods is tracked in full; a longer one only at the periods its change compares
(its chart still draws every period).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from insightloom.analysis import time_logic
from insightloom.analysis.wording import PERIOD_WORDS, texts
from insightloom.analysis_utils.group_trackers import group_label
from insightloom.analysis_utils.sql import dbl, qi, ql
from insightloom.analysis_utils.trackers import (
    column_facts,
    frame,
    is_integral,
    measured,
    require,
    table_of,
    track_value,
    value_decimals,
    without_codes_sql,
)

logger = logging.getLogger(__name__)

AGGS = ("count", "sum", "mean")
#: Left-out groups named in the finding (the largest first); the rest are only counted.
MAX_NAMED = 10
#: A series this long or shorter is tracked at every period; a longer one at the periods its change compares.
MAX_TABLE_PERIODS = 24
_TIE = 1e-9  # relative: values this close tie (sums added in another order)


@dataclass
class SplitGroup:
    """One leading group's series.

    Attributes:
        key: The group's value in the data.
        label: The key as DuckDB's ``CAST(... AS VARCHAR)`` writes it.
        values: Its value per period (every period of the series; NaN where an average has no value).
        cells: The reference of its value per tracked period (``-`` where it has none).
        change_ref: The reference of its first-vs-last change (None when there is none: one period, or a first
            value of 0 or missing).
    """

    key: Any
    label: str
    values: dict[Any, float] = field(default_factory=dict)
    cells: dict[Any, str] = field(default_factory=dict)
    change_ref: str | None = None


@dataclass
class SplitSeries:
    """What :func:`track_split_series` tracked.

    Attributes:
        prefix: The calculation-id prefix (``amount_per_month_by_category``).
        view, measure, date, by, agg: The spec (``measure`` None counts rows).
        axis: The time axis (its ``period`` is the series' grain).
        what: What a value is, in the job's language (``total `Amount```).
        unit: Unit of the values; ``integral``: every value is a whole number of whole-number data.
        count / count_ref: Number of groups with a value; ``shown_ref``: how many have a series.
        periods: Every period key of the series, in time order; ``tracked``: those whose values are tracked.
        labels: Each period's label (``2025-05``).
        periods_ref, first_ref, last_ref: Number of periods, first and last period labels.
        comparison: The periods the change compares (``change_kind`` ``change``, ``change_complete`` or
            ``change_per_day``; empty with one period).
        groups: The leading groups, largest first.
        left_out / left_ref / left_names_ref: Groups without a series, their count and the largest of their names.
        top_ref / top_value_ref / top_tied / top_period_ref: The largest shown group(s) in the last compared
            period, its value (the cell's reference), how many tie, and the period's label (None when fewer than two
            groups are shown, all tie, or the largest value is not above 0).
    """

    prefix: str
    view: str
    measure: str | None
    date: str
    by: str
    agg: str
    axis: time_logic.TimeAxis
    what: str
    unit: str | None
    integral: bool
    count: int
    count_ref: str
    shown_ref: str
    periods: list[Any]
    tracked: list[Any]
    labels: dict[Any, str]
    periods_ref: str
    first_ref: str
    last_ref: str
    comparison: time_logic.Comparison
    change_kind: str = ""
    groups: list[SplitGroup] = field(default_factory=list)
    left_out: int = 0
    left_ref: str | None = None
    left_names_ref: str | None = None
    top_ref: str | None = None
    top_value_ref: str | None = None
    top_tied: int = 1
    top_period_ref: str | None = None

    def frame(self) -> pd.DataFrame:
        """Every period (rows, in time order) by leading group label (columns): what a chart draws."""
        data = {g.label: [g.values.get(p, math.nan) for p in self.periods] for g in self.groups}
        return pd.DataFrame(data, index=pd.Index(self.periods, name="period"))


@dataclass(frozen=True)
class _Sql:
    """The SQL twins of the pandas computation: the period key, the row filter and the value per group."""

    view: str
    key: str
    where: str
    value: str
    having: str
    by: str
    days: str  # COUNT(DISTINCT day) per period for a date axis, else ""

    def cte(self, per_day: bool) -> str:
        ranked = (f"r AS (SELECT {qi(self.by)} AS g, {self.value} AS v FROM {qi(self.view)} WHERE {self.where} "
                  f"AND {qi(self.by)} IS NOT NULL GROUP BY 1{self.having})")  # fmt: skip
        series = (f"s AS (SELECT {self.key} AS period, {qi(self.by)} AS g, {self.value} AS v FROM {qi(self.view)} "
                  f"WHERE {self.where} AND {qi(self.by)} IS NOT NULL GROUP BY 1, 2{self.having})")  # fmt: skip
        parts = [ranked, "o AS (SELECT g, row_number() OVER (ORDER BY v DESC, g) AS n FROM r)", series]
        if per_day and self.days:
            parts.append(f"d AS (SELECT {self.key} AS period, {self.days} AS days FROM {qi(self.view)} "
                         f"WHERE {self.where} GROUP BY 1)")  # fmt: skip
        return "WITH " + ", ".join(parts) + " "


def _sql(view: str, axis: time_logic.TimeAxis, measure: str | None, by: str, agg: str, scale: int,
         codes: tuple[float, ...]) -> _Sql:  # fmt: skip
    col = qi(axis.column)
    if axis.kind == "date":
        when = time_logic.date_sql(col, axis)
        key, where = f"date_trunc('{axis.period}', {when})", f"{col} IS NOT NULL"
        days = f"COUNT(DISTINCT CAST({when} AS DATE))"
    else:
        key, days = f"CAST({dbl(axis.column)} AS BIGINT)", ""
        where = f"{col} IS NOT NULL AND {dbl(axis.column)} = round({dbl(axis.column)})"
    if agg == "count" or measure is None:
        value, having = "COUNT(*)", ""
    else:
        expression = without_codes_sql(measure, codes)
        value = f"COALESCE(SUM({expression}), 0)" if agg == "sum" else f"AVG({expression})"
        value = value if scale == 1 else f"{scale} * {value}"
        having = f" HAVING COUNT({expression}) > 0" if agg == "mean" else ""
    return _Sql(view, key, where, value, having, by, days)


def _aggregate(values: pd.Series, keys: list[pd.Series], agg: str) -> pd.Series:
    grouped = values.groupby(keys, observed=True)
    if agg == "count":
        return grouped.size().astype(float)
    return grouped.sum() if agg == "sum" else grouped.mean().dropna()


def _unit(facts: Any, agg: str) -> str | None:
    if agg == "count":
        return "count"
    unit = facts.unit if facts is not None else None
    return None if agg == "mean" and unit == "count" else unit


def _period_id(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_") or "p"


def track_split_series(
    prefix: str,
    view: str | None,
    measure: str | None,
    date: str,
    by: str,
    agg: str = "sum",
    *,
    period: str | None = None,
    top: int = 5,
    language: str = "en",
) -> SplitSeries:
    """Track ``agg(measure)`` per period of ``date`` and group of ``by``: the series of the ``top`` leading groups.

    Args:
        prefix: Calculation-id prefix; ids are ``<prefix>_groups``, ``_shown``, ``_left``, ``_left_names``,
            ``_periods``, ``_first_period``, ``_last_period``, ``_<i>_<period>`` (group ``i`` of the leading groups,
            1 = largest, in one period: ``amount_per_month_by_category_1_2025_05``), ``_<i>_change``, ``_top`` and
            ``_top_period`` (the largest group's value is its cell's reference).
        view: View name or alias.
        measure: The measure column; None counts rows (``agg`` is then ``count``).
        date: The time axis column (a date, an integer year or a time step column).
        by: The group column (rows where it or the date is missing are left out).
        agg: ``count``, ``sum`` or ``mean``.
        period: The grain of a date axis (day, week, month, year); default the profile's.
        top: How many leading groups get a series.
        language: Language of the descriptions (``en`` or ``ko``).

    Raises:
        AggregationRefused: The profile forbids ``agg`` of the measure.
        ValueError: Unknown ``agg``, a wide table's year columns or no time axis, or no period has a value.
    """
    agg = "count" if measure is None else agg
    if agg not in AGGS:
        raise ValueError(f"track_split_series({prefix!r}): agg {agg!r} must be one of {', '.join(AGGS)}")
    table = table_of(view)
    axis = time_logic.axis_for(table.entry, date, period)
    if axis.kind == "wide_years":
        raise ValueError(f"track_split_series({prefix!r}): a wide table's year columns have no rows per period "
                         "to split; split a trend over a date or year column")  # fmt: skip
    facts = column_facts(view, measure) if measure else None
    if facts is not None and agg != "count":
        require(facts, agg)
    scale = facts.unit_scale if facts is not None and agg != "count" else 1
    codes = facts.sentinels if facts is not None else ()
    data = frame(view)
    keys = time_logic.period_keys(data, axis)
    rows = keys.notna() & data[by].notna()
    values = measured(data[measure], facts) if facts is not None and agg != "count" else pd.Series(1.0, data.index)
    kept, groups_of = values[rows], data.loc[rows, by]
    ranking = _aggregate(kept, [groups_of], agg) * (scale if agg != "count" else 1)
    ordered = pd.DataFrame({"key": ranking.index, "value": ranking.to_numpy(dtype=float)})
    ordered = ordered.sort_values(["value", "key"], ascending=[False, True]).reset_index(drop=True)
    if ordered.empty:
        raise ValueError(f"track_split_series({prefix!r}): no period of {date!r} has a {by!r} group with a value")
    cells = _aggregate(kept, [keys[rows], groups_of], agg) * (scale if agg != "count" else 1)
    periods = sorted(cells.index.get_level_values(0).unique())
    dates = time_logic.axis_dates(data[date], axis) if axis.kind == "date" else None
    comparison = time_logic.compare_periods(periods, dates, axis.period)
    per_day = comparison.per_day and agg != "mean" and dates is not None
    tx = texts("trend", language)
    what = tx[agg].format(m=measure)
    sql = _sql(table.view, axis, measure, by, agg, scale, codes)
    leading = list(ordered["key"].head(top))
    cte = sql.cte(per_day)
    unit = _unit(facts, agg)
    integral = agg == "count" or (agg == "sum" and measure is not None and is_integral(data.loc[rows, measure]))
    cols = list(dict.fromkeys([date, by, *([measure] if measure else [])]))
    words = {"by": by, "what": what, "over": tx["over"].format(c=date), "period": PERIOD_WORDS[language][axis.period]}

    def track(suffix: str, value: Any, description: str, formula: str, importance: str, check: str,
              shown: str | None = None, decimals: int | None = None) -> str:  # fmt: skip
        return track_value(prefix + suffix, value, description, formula, table.view, cols, importance, cte + check,
                           shown, decimals)  # fmt: skip

    labels = {p: time_logic.period_label(p, axis) for p in periods}
    label_sql = (f"strftime(period, '{time_logic.PERIOD_FORMATS[axis.period]}')" if axis.kind == "date"
                 else "CAST(period AS VARCHAR)")  # fmt: skip
    count = len(ordered)
    shown = min(top, count)
    result = SplitSeries(
        prefix, table.view, measure, date, by, agg, axis, what, unit, integral, count,
        track("_groups", count, tx["d_split_groups"].format(**words), f"number of {by} groups", "low",
              "SELECT COUNT(*) FROM r", "count"),
        track("_shown", shown, tx["d_split_shown"].format(**words), f"the {top} largest {by} groups, or all",
              "low", f"SELECT LEAST(COUNT(*), {top}) FROM r", "count"),
        periods, [], labels,
        track("_periods", len(periods), tx["d_periods"].format(**words), f"number of {axis.period} periods", "low",
              "SELECT COUNT(DISTINCT period) FROM s", "count"),
        track("_first_period", labels[periods[0]], tx["d_first"].format(**words), "first period", "low",
              f"SELECT {label_sql} FROM s ORDER BY period LIMIT 1"),
        track("_last_period", labels[periods[-1]], tx["d_last"].format(**words), "last period", "low",
              f"SELECT {label_sql} FROM s ORDER BY period DESC LIMIT 1"),
        comparison,
    )  # fmt: skip
    result.left_out = count - shown
    if result.left_out:
        named = ", ".join(group_label(k) for k in ordered["key"].iloc[shown : shown + MAX_NAMED])
        result.left_ref = track("_left", result.left_out, tx["d_split_left"].format(**words),
                                f"number of {by} groups beyond the {top} largest", "low",
                                f"SELECT GREATEST(COUNT(*) - {top}, 0) FROM r", "count")  # fmt: skip
        result.left_names_ref = track("_left_names", named, tx["d_split_left_names"].format(**words),
                                      f"{by} groups ranked {top + 1} to {top + MAX_NAMED} by value (ties: by name)",
                                      "low", "SELECT string_agg(CAST(g AS VARCHAR), ', ' ORDER BY n) FROM o "
                                      f"WHERE n > {top} AND n <= {top + MAX_NAMED}")  # fmt: skip
    long = len(periods) > MAX_TABLE_PERIODS
    result.tracked = sorted({comparison.first, comparison.last}) if long else list(periods)
    key_sql = _key_literal(axis)
    fill = agg != "mean"  # a total or count of a period with no row is 0; an average of one has no value
    formula = f"{agg}{f' of {measure}' if measure and agg != 'count' else ''} over the rows of one {by} group " \
              f"in one {axis.period}"  # fmt: skip
    for i, key in enumerate(leading, start=1):
        label = group_label(key)
        group = SplitGroup(key, label)
        for p in periods:
            found = cells.get((p, key), math.nan)
            group.values[p] = 0.0 if fill and math.isnan(found) else float(found)
        for p in result.tracked:
            value = group.values[p]
            if math.isnan(value):
                group.cells[p] = "-"
                continue
            at = f"(SELECT v FROM s WHERE period = {key_sql(p)} AND g = {ql(key)})"
            check = f"SELECT COALESCE({at}, 0)" if fill else f"SELECT {at}"
            group.cells[p] = track(f"_{i}_{_period_id(labels[p])}", value,
                                   tx["d_split_cell"].format(g=label, p=labels[p], **words), formula,
                                   "medium" if i == 1 else "low", check, unit,
                                   value_decimals(value, unit, integral))  # fmt: skip
        group.change_ref = _change(result, group, i, per_day, key_sql, fill, track, tx, words, dates, keys)
        result.groups.append(group)
    result.change_kind = ("" if len(periods) < 2 else "change_per_day" if per_day
                          else "change_complete" if comparison.excluded else "change")  # fmt: skip
    _top(result, key_sql, track, tx, words, label_sql)
    logger.debug("split series %s: %d of %d groups over %d periods", prefix, shown, count, len(periods))
    return result


def _key_literal(axis: time_logic.TimeAxis) -> Any:
    def literal(key: Any) -> str:
        if axis.kind == "date":
            return f"TIMESTAMP '{pd.Timestamp(key).isoformat(sep=' ')}'"
        return str(int(key))

    return literal


def _change(
    result: SplitSeries, group: SplitGroup, i: int, per_day: bool, key_sql: Any, fill: bool, track: Any,
    tx: dict[str, str], words: dict[str, str], dates: pd.Series | None, keys: pd.Series,
) -> str | None:  # fmt: skip
    """Track one group's change from the first to the last compared period (in %, per observed day when the
    comparison says so); None with one period, or when the first value is 0 or missing."""
    comparison = result.comparison
    if len(result.periods) < 2:
        return None
    first, last = comparison.first, comparison.last
    start, end = group.values[first], group.values[last]
    at = {k: f"(SELECT v FROM s WHERE period = {key_sql(k)} AND g = {ql(group.key)})" for k in (first, last)}
    sql = {k: f"COALESCE({v}, 0)" if fill else v for k, v in at.items()}
    key = "d_split_change"
    if per_day and dates is not None:
        days = time_logic.observed_days(dates, keys)
        start, end = start / float(days[first]), end / float(days[last])
        sql = {k: f"(({v}) / (SELECT days FROM d WHERE period = {key_sql(k)}))" for k, v in sql.items()}
        key = "d_split_change_per_day"
    elif comparison.excluded:
        key = "d_split_change_complete"
    if not start or math.isnan(start) or math.isnan(end):
        return None
    change = 100 * (end - start) / start
    return str(track(f"_{i}_change", change, tx[key].format(g=group.label, **words), "(last - first) / first * 100",
                     "medium" if i == 1 else "low", f"SELECT 100 * ({sql[last]} - {sql[first]}) / {sql[first]}",
                     "%", value_decimals(change, "%", False)))  # fmt: skip


def _top(result: SplitSeries, key_sql: Any, track: Any, tx: dict[str, str], words: dict[str, str],
         label_sql: str) -> None:  # fmt: skip
    """The largest shown group(s) in the last compared period (ties named together, by name)."""
    if len(result.groups) < 2:
        return
    at = result.comparison.last
    values = pd.Series({g.key: g.values[at] for g in result.groups}, dtype=float).dropna()
    if values.empty:
        return
    best = float(values.max())
    tied: list[Any] = sorted(k for k, v in values.items() if abs(v - best) <= _TIE * max(abs(best), 1.0))
    if len(tied) == len(result.groups):
        return  # every group shown has the same value: no largest one
    shown = ", ".join(ql(g.key) for g in result.groups)
    # A total or count of a period without rows is 0; only periods with rows are in s, so 0 never leads here.
    cells = (f"l AS (SELECT g, v FROM s WHERE period = {key_sql(at)} AND g IN ({shown})), "
             "e AS (SELECT MAX(v) AS x FROM l)")  # fmt: skip
    select = ("SELECT string_agg(CAST(g AS VARCHAR), ', ' ORDER BY g) FROM l, e "
              f"WHERE abs(v - x) <= {_TIE} * greatest(abs(x), 1)")  # fmt: skip
    if best <= 0 and result.agg != "mean":
        return  # a largest total of 0 (or below) says nothing about who leads
    label = result.labels[at]
    result.top_tied = len(tied)
    # The check adds its own CTEs after the tracker's: "WITH r ..., s ... , l ..., e ... SELECT ...".
    result.top_ref = track(
        "_top",
        ", ".join(group_label(k) for k in tied),
        tx["d_split_top"].format(p=label, **words),
        "largest group shown in the period (ties: all, by name)",
        "high",
        f", {cells} {select}",
    )
    first = next(g for g in result.groups if g.key == tied[0])
    result.top_value_ref = first.cells.get(at)
    result.top_period_ref = result.last_ref if at == result.periods[-1] else track(
        "_top_period", label, tx["d_split_period"].format(**words), "last period compared", "low",
        f"SELECT {label_sql} FROM s WHERE period = {key_sql(at)} LIMIT 1")  # fmt: skip


__all__ = ["MAX_NAMED", "MAX_TABLE_PERIODS", "SplitGroup", "SplitSeries", "track_split_series"]
