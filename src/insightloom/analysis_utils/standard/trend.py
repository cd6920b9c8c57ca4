"""The standard trend: a measure per period over a date column, an integer year column or a wide table's years.

Every number is computed in pandas and checked against one DuckDB CTE ``p(period, v[, days])`` written from the
same spec, so the first, last, peak and change all read the same periods. The time decisions (the axis, partial
first/last periods, whether a weekend share fits) come from :mod:`insightloom.analysis.time_logic`.

First against last is two points: it is reported as a change and never called a trend. The trend itself is a
tracked claim (``track_claim("trend", ...)``) over the same periods the change reads, read from the same CTE, so
its verdict (rising, falling, no clear trend or volatile) and evidence are re-computed by the Validator.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from insightloom.analysis import time_logic
from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis.wording import PERIOD_WORDS, pick
from insightloom.analysis_utils.charts import period_axis, save_chart
from insightloom.analysis_utils.claims import track_claim
from insightloom.analysis_utils.numbers_text import compact_axis
from insightloom.analysis_utils.result_notes import append_result
from insightloom.analysis_utils.sql import dbl, qi
from insightloom.analysis_utils.standard._common import Context, axis_label, context, plain, stem
from insightloom.analysis_utils.standard.split_trend import run_split_trend
from insightloom.analysis_utils.trackers import (
    column_facts,
    frame,
    is_integral,
    numeric,
    require,
    track_change,
    track_value,
    value_decimals,
)

logger = logging.getLogger(__name__)

MAX_MARKERS = 40
_TIE = 1e-9  # relative: period values this close tie for the peak


@dataclass(frozen=True)
class _Trend:
    """One trend being tracked: the spec's pieces, the per-period values and the SQL they are checked with."""

    ctx: Context
    axis: time_logic.TimeAxis
    measure: str | None
    agg: str
    prefix: str
    what: str
    unit: str | None
    integral: bool
    series: pd.Series
    days: pd.Series | None
    dates: pd.Series | None
    cte: str
    cols: list[str]

    def words(self) -> dict[str, str]:
        return {"period": self.period_word, "date": str(self.axis.column), "what": self.what, "over": self.over}

    @property
    def over(self) -> str:
        """What the trend runs over in words: the date column, or a wide table's year columns as a range."""
        if self.axis.kind == "wide_years":
            return self.ctx.tx["wide_over"].format(first=self.axis.columns[0], last=self.axis.columns[-1])
        return self.ctx.tx["over"].format(c=self.axis.column)

    @property
    def period_word(self) -> str:
        return PERIOD_WORDS[self.ctx.language][self.axis.period]

    def label(self, key: Any) -> str:
        return time_logic.period_label(key, self.axis)

    def key_sql(self, key: Any) -> str:
        if self.axis.kind == "date":
            return f"TIMESTAMP '{pd.Timestamp(key).isoformat(sep=' ')}'"
        return str(int(key))

    def label_sql(self) -> str:
        if self.axis.kind == "date":
            return f"strftime(period, '{time_logic.PERIOD_FORMATS[self.axis.period]}')"
        return "CAST(period AS VARCHAR)"

    def track(self, suffix: str, value: Any, description: str, formula: str, importance: str, sql: str,
              unit: str | None = None, decimals: int | None = None) -> str:  # fmt: skip
        return track_value(self.prefix + suffix, value, description, formula, self.ctx.view, self.cols, importance,
                           self.cte + sql, unit, decimals)  # fmt: skip

    def track_number(self, suffix: str, value: float, description: str, formula: str, importance: str,
                     sql: str) -> str:  # fmt: skip
        decimals = value_decimals(value, self.unit, self.integral)
        return self.track(suffix, value, description, formula, importance, sql, self.unit, decimals)


def _aggregate(values: pd.Series, keys: pd.Series, agg: str) -> pd.Series:
    if agg == "count":
        return values.groupby(keys).size()
    grouped = values.groupby(keys)
    return grouped.sum() if agg == "sum" else grouped.mean().dropna()


def _value_sql(measure: str | None, agg: str, scale: int) -> str:
    if agg == "count" or measure is None:
        return "COUNT(*)"
    sql = f"COALESCE(SUM({dbl(measure)}), 0)" if agg == "sum" else f"AVG({dbl(measure)})"
    return sql if scale == 1 else f"{scale} * {sql}"


def _long_cte(view: str, axis: time_logic.TimeAxis, measure: str | None, agg: str, scale: int) -> str:
    """``p(period, v, days)`` for a date or year column, grouped like :func:`time_logic.period_keys`."""
    col = qi(axis.column)
    if axis.kind == "date":
        when = time_logic.date_sql(col, axis)
        key = f"date_trunc('{axis.period}', {when})"
        days, where = f", COUNT(DISTINCT CAST({when} AS DATE)) AS days", f"{col} IS NOT NULL"
    else:
        key, days = f"CAST({dbl(axis.column)} AS BIGINT)", ""
        where = f"{col} IS NOT NULL AND {dbl(axis.column)} = round({dbl(axis.column)})"
    having = f" HAVING COUNT({qi(measure)}) > 0" if agg == "mean" and measure else ""
    value = _value_sql(measure, agg, scale)
    return f"WITH p AS (SELECT {key} AS period, {value} AS v{days} FROM {qi(view)} WHERE {where} GROUP BY 1{having}) "


def _wide_cte(view: str, axis: time_logic.TimeAxis, agg: str, scale: int) -> str:
    """``p(period, v)`` for a wide table: one SELECT per year column (cells missing in a column are ignored)."""
    parts = []
    for column in axis.columns:
        value = {"count": f"COUNT({qi(column)})", "sum": f"SUM({dbl(column)})", "mean": f"AVG({dbl(column)})"}[agg]
        value = value if scale == 1 or agg == "count" else f"{scale} * {value}"
        parts.append(f"SELECT {time_logic.year_of(column)} AS period, {value} AS v FROM {qi(view)} "
                     f"HAVING COUNT({qi(column)}) > 0")  # fmt: skip
    return "WITH p AS (" + " UNION ALL ".join(parts) + ") "


def _unit(facts: Any, agg: str) -> str | None:
    if agg == "count" or facts is None:
        return "count" if agg == "count" else None
    return None if agg == "mean" and facts.unit == "count" else facts.unit


def _build(ctx: Context) -> _Trend:
    spec = ctx.spec
    axis = time_logic.axis_for(ctx.table, str(spec.by), spec.period)
    agg = spec.agg or ("count" if spec.measure is None and axis.kind != "wide_years" else "sum")
    measure = None if agg == "count" and axis.kind != "wide_years" else spec.measure
    data = frame(ctx.view)
    facts_column = axis.columns[0] if axis.kind == "wide_years" else measure
    facts = column_facts(ctx.view, facts_column) if facts_column else None
    if facts is not None and agg != "count":
        require(facts, agg)  # an AggregationRefused names the column and the fix before anything is tracked
    scale = facts.unit_scale if facts is not None and agg != "count" else 1
    dates, days = None, None
    if axis.kind == "wide_years":
        long = time_logic.melt_wide_years(data, axis.columns)
        series = _aggregate(long["value"], long["year"], agg)
        cte, cols, base = _wide_cte(ctx.view, axis, agg, scale), list(axis.columns), f"values_per_{axis.period}"
        what = ctx.tx["wide_" + agg]
        integral = agg == "count" or is_integral(long["value"])
    else:
        keys = time_logic.period_keys(data, axis)
        values = numeric(data[measure]) if measure else pd.Series(1.0, index=data.index)
        series = _aggregate(values[keys.notna()], keys[keys.notna()], agg)
        if axis.kind == "date":
            dates = time_logic.axis_dates(data[axis.column], axis)
            days = time_logic.observed_days(dates, keys)
        cte, cols = _long_cte(ctx.view, axis, measure, agg, scale), [str(axis.column), *([measure] if measure else [])]
        m = stem(ctx.table, measure)
        base = {"count": f"rows_per_{axis.period}", "sum": f"{m}_per_{axis.period}",
                "mean": f"avg_{m}_per_{axis.period}"}[agg]  # fmt: skip
        what = ctx.tx[agg].format(m=measure)
        integral = agg == "count" or (measure is not None and agg == "sum" and is_integral(data[measure]))
    series = (series.sort_index().astype(float) * (scale if agg != "count" else 1)).rename("v")
    if series.empty:
        raise ValueError(f"run_trend: no period of {spec.by!r} has a value to trend")
    return _Trend(ctx, axis, measure, agg, ctx.prefix + base, what, _unit(facts, agg), integral, series, days, dates,
                  cte, cols)  # fmt: skip


def run_trend(spec: AnalysisSpec, *, language: str = "en") -> None:
    """Track and write the trend of ``spec.measure`` per period over ``spec.by`` (the job's profile decides the axis).

    ``spec.by`` is a date column (bucketed by ``spec.period``), an integer year column, or one of a wide table's
    year columns (the table's ``time_axis`` then melts them all). Findings: the span, the first-vs-last change (partial
    first/last periods left out, or compared per observed day, and said so), the trend claim over those same periods
    (cited as ``{{claim:ID}}``), the peak, and the weekend share on daily data; a line chart. A trend split by a
    category (``spec.split``) is :func:`run_split_trend`'s.

    Raises:
        AggregationRefused: The profile forbids ``spec.agg`` of the measure (a total of a price, say).
        ValueError: The axis is a cohort date or no time axis, or no period has a value.
    """
    if spec.split:
        run_split_trend(spec, language=language)
        return
    ctx = context(spec, language)
    trend = _build(ctx)
    tx, series = ctx.tx, trend.series
    r = {"period": trend.period_word, "what": trend.what}
    count = len(series)
    r["periods"] = trend.track(
        "_periods",
        count,
        tx["d_periods"].format(**trend.words()),
        f"number of {trend.axis.period} periods",
        "low",
        "SELECT COUNT(*) FROM p",
        "count",
    )
    r["first"] = trend.track(
        "_first_period",
        trend.label(series.index[0]),
        tx["d_first"].format(**trend.words()),
        "first period",
        "low",
        f"SELECT {trend.label_sql()} FROM p ORDER BY period LIMIT 1",
    )
    r["last"] = trend.track(
        "_last_period",
        trend.label(series.index[-1]),
        tx["d_last"].format(**trend.words()),
        "last period",
        "low",
        f"SELECT {trend.label_sql()} FROM p ORDER BY period DESC LIMIT 1",
    )
    findings = [pick(tx, "span", count).format(**r)]
    comparison = time_logic.compare_periods(list(series.index), trend.dates, trend.axis.period)
    findings += _change(trend, comparison, r)
    findings += _claim(trend, comparison)
    findings.append(_peak(trend))
    findings += _weekend(trend)
    title = tx["title"].format(what=trend.what, period=trend.period_word)
    chart = _chart(trend, title)
    append_result(title, plan_item=ctx.plan_item, findings=findings, charts=[chart])
    logger.debug("trend %s: %d periods", trend.prefix, count)


def _change(trend: _Trend, comparison: time_logic.Comparison, r: dict[str, str]) -> list[str]:
    """The first-vs-last finding(s): plain, over complete periods only, or per observed day.

    A change is two points: it is reported as a change and never called a trend (:func:`_claim` says that).
    """
    tx, series = trend.ctx.tx, trend.series
    partial = comparison.partial_first or comparison.partial_last
    if comparison.per_day and trend.agg != "mean" and trend.days is not None:
        return [_per_day(trend, comparison, r)]
    notes = [tx["partial_kept"]] if partial and not comparison.excluded else []
    if comparison.excluded:
        which = "both" if comparison.partial_first and comparison.partial_last else (
            "first" if comparison.partial_first else "last")  # fmt: skip
        return [_complete(trend, comparison, r), tx["partial_" + which]]
    r["first_value"] = trend.track_number("_first_value", float(series.iloc[0]),
                                          tx["d_first_value"].format(what=trend.what), "value in the first period",
                                          "high", "SELECT v FROM p ORDER BY period LIMIT 1")  # fmt: skip
    r["last_value"] = trend.track_number("_last_value", float(series.iloc[-1]),
                                         tx["d_last_value"].format(what=trend.what), "value in the last period",
                                         "high", "SELECT v FROM p ORDER BY period DESC LIMIT 1")  # fmt: skip
    if len(series) > 1 and series.iloc[0] != 0:
        first_sql, last_sql = (
            "(SELECT v FROM p ORDER BY period LIMIT 1)",
            "(SELECT v FROM p ORDER BY period DESC LIMIT 1)",
        )
        change = 100 * (series.iloc[-1] - series.iloc[0]) / series.iloc[0]
        r["change"] = trend.track("_change", float(change), tx["d_change"].format(what=trend.what),
                                  "(last - first) / first * 100", "high",
                                  f"SELECT 100 * ({last_sql} - {first_sql}) / {first_sql}", "%")  # fmt: skip
        r["direction"] = _direction(tx, float(change))
        return [tx["change"].format(**r), *notes]
    return [tx["flat"].format(**r), *notes]


def _claim_inputs(trend: _Trend, comparison: time_logic.Comparison) -> tuple[str, pd.Series, str]:
    """The periods the trend claim reads, as the change reads them, with their SQL and the finding's template key.

    Partial first/last periods the change leaves out are left out here too; when the change compares per observed
    day, so does the claim (every period's value divided by its observed days).
    """
    series = trend.series
    if comparison.per_day and trend.agg != "mean" and trend.days is not None:
        values = (series / trend.days.reindex(series.index).astype(float)).rename("v")
        return "SELECT v / days AS v FROM p ORDER BY period", values, "claim_per_day"
    if comparison.excluded:
        first, last = trend.key_sql(comparison.first), trend.key_sql(comparison.last)
        values = series.loc[comparison.first : comparison.last]
        return f"SELECT v FROM p WHERE period BETWEEN {first} AND {last} ORDER BY period", values, "claim_complete"
    return "SELECT v FROM p ORDER BY period", series, "claim"


def _claim(trend: _Trend, comparison: time_logic.Comparison) -> list[str]:
    """The trend claim over every period the change reads (not its two ends): rising, falling, no clear trend or
    volatile, with its evidence; the finding cites it as ``{{claim:ID}}``. One period has no trend to judge."""
    tx, words = trend.ctx.tx, trend.words()
    sql, values, key = _claim_inputs(trend, comparison)
    if len(values) < 2:
        return []
    per_day = key == "claim_per_day"
    unit = None if per_day and trend.unit == "count" else trend.unit
    # params name what the claim is about (measure, breakdown: contradictions) and how its sentence reads
    params: dict[str, Any] = {"measure": trend.measure or "rows", "by": str(trend.axis.column),
                              "period": trend.axis.period, "agg": "mean" if per_day else trend.agg,
                              "unit": unit, "what": trend.what, "over": trend.over}  # fmt: skip
    ref = track_claim(
        "trend",
        "claim_trend_" + trend.prefix,
        trend.ctx.view,
        trend.cte + sql,
        params,
        # A wide table's years are melted in pandas but unioned per column in SQL; its claim reads the SQL's rows.
        rows=None if trend.axis.kind == "wide_years" else pd.DataFrame({"v": values.to_numpy(dtype=float)}),
        description=tx["d_trend"].format(**words),
        formula=tx["f_trend"].format(**words),
        columns=trend.cols,
        importance="high",
    )
    return [tx[key].format(claim=ref, **words)]


def _direction(tx: dict[str, str], change: float) -> str:
    return tx["up"] if change > 0 else tx["down"] if change < 0 else tx["same"]


def _complete(trend: _Trend, comparison: time_logic.Comparison, r: dict[str, str]) -> str:
    """The change between the first and last complete periods (partial ends left out)."""
    tx, words = trend.ctx.tx, trend.words()
    first, last = comparison.first, comparison.last
    at = {k: f"(SELECT v FROM p WHERE period = {trend.key_sql(k)})" for k in (first, last)}
    values = {"first": float(trend.series[first]), "last": float(trend.series[last])}
    for end, side, key in (("first", "from", first), ("last", "to", last)):
        where = f"WHERE period = {trend.key_sql(key)}"
        r[end] = trend.track(f"_{side}_period", trend.label(key), tx[f"d_{side}"].format(**words),
                             f"{end} complete period", "low", f"SELECT {trend.label_sql()} FROM p {where}")  # fmt: skip
        r[f"{end}_value"] = trend.track_number(f"_{side}_value", values[end], tx[f"d_{side}_value"].format(**words),
                                               f"value in the {end} complete period", "high",
                                               f"SELECT {at[key]}")  # fmt: skip
    if not values["first"]:
        return tx["flat"].format(**r)
    if trend.axis.kind != "wide_years" and not trend.axis.decimal:
        # The product's change tracker writes the same value and check from the spec (grouped like the trend).
        r["change"] = track_change(trend.ctx.view, trend.measure, str(trend.axis.column), first, last,
                                   trend.prefix + "_change", tx["d_change_complete"].format(**words), agg=trend.agg,
                                   period=trend.axis.period if trend.axis.kind == "date" else None)  # fmt: skip
    else:
        r["change"] = trend.track("_change", 100 * (values["last"] - values["first"]) / values["first"],
                                  tx["d_change_complete"].format(**words), "(last - first) / first * 100", "high",
                                  f"SELECT 100 * ({at[last]} - {at[first]}) / {at[first]}", "%")  # fmt: skip
    r["direction"] = _direction(tx, values["last"] - values["first"])
    return tx["change_complete"].format(**r)


def _per_day(trend: _Trend, comparison: time_logic.Comparison, r: dict[str, str]) -> str:
    """The change per observed day between the first and last periods (too few complete periods to drop them)."""
    tx, words, days = trend.ctx.tx, trend.words(), trend.days
    assert days is not None  # date axes only
    first, last = comparison.first, comparison.last
    per = {k: float(trend.series[k]) / float(days[k]) for k in (first, last)}
    at = {k: f"(SELECT v / days FROM p WHERE period = {trend.key_sql(k)})" for k in (first, last)}
    unit = None if trend.unit == "count" else trend.unit
    r["first_value"] = trend.track("_first_per_day", per[first], tx["d_first_per_day"].format(**words),
                                   "value in the first period / its observed days", "high", f"SELECT {at[first]}",
                                   unit, value_decimals(per[first], unit, False))  # fmt: skip
    r["last_value"] = trend.track("_last_per_day", per[last], tx["d_last_per_day"].format(**words),
                                  "value in the last period / its observed days", "high", f"SELECT {at[last]}",
                                  unit, value_decimals(per[last], unit, False))  # fmt: skip
    change = 100 * (per[last] - per[first]) / per[first] if per[first] else 0.0
    r["change"] = trend.track("_change", change, tx["d_change_per_day"].format(**words),
                              "(last per day - first per day) / first per day * 100", "high",
                              f"SELECT 100 * ({at[last]} - {at[first]}) / NULLIF({at[first]}, 0)", "%")  # fmt: skip
    r["direction"] = _direction(tx, change)
    return tx["change_per_day"].format(**r)


def _peak(trend: _Trend) -> str:
    """The peak period and value; periods tied for the peak are counted (the earliest named), and when every period
    has the same value no peak is claimed. Ties are within a relative tolerance, so sums added in another order (pandas
    vs DuckDB) still tie and both routes name the same period."""
    tx, series = trend.ctx.tx, trend.series
    peak_value = float(series.max())
    tied = series.index[np.abs(series.to_numpy() - peak_value) <= _TIE * abs(peak_value)]
    at_peak = f"abs(v - (SELECT MAX(v) FROM p)) <= {_TIE} * abs((SELECT MAX(v) FROM p))"
    words = trend.words()
    all_tied = len(series) > 1 and len(tied) == len(series)
    peak_ref = "" if all_tied else trend.track(
        "_peak_period", trend.label(tied[0]), tx["d_peak"].format(**words),
        "period with the highest value (ties: earliest)", "medium",
        f"SELECT {trend.label_sql()} FROM p WHERE {at_peak} ORDER BY period LIMIT 1",
    )  # fmt: skip
    value_ref = trend.track_number("_peak_value", peak_value, tx["d_peak_value"].format(what=trend.what),
                                   "highest value per period", "medium", "SELECT MAX(v) FROM p")  # fmt: skip
    if all_tied:
        return tx["peak_all"].format(what=trend.what, value=value_ref)
    if len(tied) == 1:
        return tx["peak"].format(peak=peak_ref, value=value_ref)
    tied_ref = trend.track("_peak_tied", len(tied), tx["d_peak_tied"].format(**words),
                           "number of periods at the highest value", "low",
                           f"SELECT COUNT(*) FROM p WHERE {at_peak}", "count")  # fmt: skip
    return tx["peak_tied"].format(peak=peak_ref, value=value_ref, tied=tied_ref)


def _weekend(trend: _Trend) -> list[str]:
    """The weekend share, on data recorded per day or finer only (never monthly or yearly data)."""
    dates = trend.dates
    if trend.axis.decimal:  # a decimal year is rounded to its month or day: its weekday is not recorded
        return []
    if trend.agg == "mean" or dates is None or not time_logic.weekend_share_allowed(dates, trend.axis.period):
        return []
    data = frame(trend.ctx.view)
    weekend = dates.dt.day_of_week >= 5
    if trend.agg == "count":
        part, whole = float(weekend.sum()), float(dates.notna().sum())
    else:
        values = numeric(data[str(trend.measure)])
        part, whole = float(values[weekend].sum()), float(values[dates.notna()].sum())
    if not whole:
        return []
    col = qi(trend.axis.column)
    is_weekend = f"dayofweek(CAST({col} AS TIMESTAMP)) IN (0, 6)"
    amount = "CAST(1 AS DOUBLE)" if trend.agg == "count" else dbl(str(trend.measure))
    sql = (f"SELECT 100 * SUM(CASE WHEN {is_weekend} THEN {amount} END) / NULLIF(SUM({amount}), 0) "
           f"FROM {qi(trend.ctx.view)} WHERE {col} IS NOT NULL")  # fmt: skip
    share = track_value(trend.prefix + "_weekend_share", 100 * part / whole,
                        trend.ctx.tx["d_weekend"].format(what=trend.what), "weekend (Sat, Sun) / all * 100",
                        trend.ctx.view, trend.cols, "medium", f"SELECT COALESCE(({sql}), 0)", "%")  # fmt: skip
    return [trend.ctx.tx["weekend"].format(share=share, what=trend.what)]


def _chart(trend: _Trend, title: str) -> str:
    from matplotlib.figure import Figure

    series, tx = trend.series, trend.ctx.tx
    fig = Figure(figsize=(6, 3.4))
    ax = fig.subplots()
    ax.plot(series.index, series.to_numpy(), marker="o" if len(series) <= MAX_MARKERS else None, color="#4C72B0")
    period_axis(ax, trend.axis.kind == "date")
    compact_axis(ax.yaxis, integer=trend.integral)
    ax.set_ylabel(axis_label(trend.what, trend.unit))
    ax.set_title(plain(title))
    ax.grid(alpha=0.3)
    words = trend.words()
    return save_chart(fig, f"trend_{trend.prefix}", title=plain(title), alt=plain(tx["chart_alt"].format(**words)),
                      caption=plain(tx["caption"].format(**words)))  # fmt: skip
