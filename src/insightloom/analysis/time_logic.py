"""Time logic of trends: which axis a table is read along, its periods, partial ends, and when a weekend share fits.

Every model reads a table over time the same way through these functions (the offline Coder through
:mod:`insightloom.analysis_utils.standard.trend`, an LLM Coder through the profile's ``time_axis`` and the same
helpers):

- the axis comes from the profile's ``time_axis`` (``date``, integer ``year``, ``wide_years``: one column per year, or
  ``index``: whole-number time steps with no calendar, ``time`` 1..200, one point per step);
  a date stored as a decimal year (an exported R time series' ``time``: 1990.0, 1990.083 ...) is a ``date`` axis
  with ``encoding: decimal_year``, each value read as the month it starts (``1990.083`` is February 1990), or, when
  the values sit between months (weekly or daily series, 1/52, 1/365), ``encoding: decimal_year_day``, each value
  read as the day it starts;
- a cohort date (hire, birth, signup date; semantic ``cohort_date``) says when each row's subject started, not when
  something happened, so it is never a trend axis;
- a first or last period the data covers only in part (data from 29 January counted as January) would make any
  first-vs-last change meaningless, so comparisons skip it, or compare values per observed day when too few complete
  periods remain;
- a weekend share needs data recorded per day (or finer): on monthly or yearly data the weekday is an artefact.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

#: A time axis of whole-number steps (``time`` 1..200) and its one period.
INDEX, STEP = "index", "step"
KINDS = ("date", "year", "wide_years", INDEX)
PERIODS = ("day", "week", "month", "year")
PERIOD_FORMATS = {"day": "%Y-%m-%d", "week": "%Y-%m-%d", "month": "%Y-%m", "year": "%Y"}
#: A first or last period the data spans less of than this share is partial (a week from Wednesday is 5/7 = 0.71).
PARTIAL_COVERAGE = 0.75
#: Fewest distinct days between first and last date for a weekend share to describe a week's rhythm.
WEEKEND_MIN_SPAN_DAYS = 6
YEAR_RANGE = (1800, 2100)
_PERIOD_DAYS = {"day": 1.0, "week": 7.0}
_MIN_PERIOD_DAYS = {"month": 28.0, "year": 365.0}
_WIDE_YEAR = re.compile(r"^\D{0,4}?((?:18|19|20)\d{2}|2100)\D{0,4}$")
#: The profile's ``time_axis.encoding`` of a date stored as a decimal year on whole months, and between them.
DECIMAL_YEAR, DECIMAL_YEAR_DAY = "decimal_year", "decimal_year_day"
ENCODINGS = (DECIMAL_YEAR, DECIMAL_YEAR_DAY)
#: How far (in months) a decimal year may sit off a whole month and still be read as one (1990.0833 rounds).
_MONTH_GRID_SLACK = 0.02


@dataclass(frozen=True)
class TimeAxis:
    """The axis a trend runs along.

    Attributes:
        kind: ``date`` (a date column), ``year`` (an integer year column), ``wide_years`` (one column per year) or
            ``index`` (whole-number time steps).
        column: The date, year or step column; for ``wide_years`` the first year column.
        columns: The year columns of a wide table, in year order (empty otherwise).
        period: Bucket of the trend: day, week, month or year (always ``year`` for year kinds, ``step`` for steps).
        encoding: How a ``date`` axis stored as decimal years reads (``decimal_year``, ``decimal_year_day``; read
            by :func:`axis_dates` and :func:`date_sql`), None for a real date.
    """

    kind: str
    column: str | None
    columns: tuple[str, ...] = field(default=())
    period: str = "month"
    encoding: str | None = None

    @property
    def decimal(self) -> bool:
        """A ``date`` axis stored as decimal years."""
        return self.encoding is not None


@dataclass(frozen=True)
class Comparison:
    """Which periods a first-vs-last change compares, and why.

    Attributes:
        first: Key of the period compared from (a bucket start Timestamp, or an int year).
        last: Key of the period compared to.
        partial_first: The data's first period is partial.
        partial_last: The data's last period is partial.
        per_day: Values are compared per observed day (too few complete periods to leave the partial ones out).
    """

    first: Any
    last: Any
    partial_first: bool = False
    partial_last: bool = False
    per_day: bool = False

    @property
    def excluded(self) -> bool:
        """Whether partial periods were left out of the comparison (rather than normalised per day)."""
        return (self.partial_first or self.partial_last) and not self.per_day


def _column(table: dict[str, Any], name: str | None) -> dict[str, Any] | None:
    return next((c for c in table.get("columns", []) if c.get("name") == name), None)


def is_cohort_date(col: dict[str, Any] | None) -> bool:
    """Whether a date column dates each row's subject (hire, birth, signup), never a trend axis."""
    return bool(col) and (col or {}).get("semantic") == "cohort_date"


def year_of(name: Any) -> int | None:
    """The year a wide table's column name stands for (``1960``, ``y2001``, ``2019년``), else None."""
    match = _WIDE_YEAR.match(str(name).strip())
    return int(match.group(1)) if match else None


def period_for_span(days: float | None) -> str:
    """Trend bucket from a date span: days up to ~6 weeks, weeks up to ~6 months, months up to 3 years, then years."""
    if days is None:
        return "month"
    return "day" if days <= 45 else "week" if days <= 183 else "month" if days <= 1096 else "year"


def decimal_year_dates(values: pd.Series, encoding: str = DECIMAL_YEAR) -> pd.Series:
    """Decimal years as the month each starts: the year, plus the fraction in twelfths rounded half up
    (``1990.0`` January, ``1990.083`` February, ``1990.25`` April); NaT where a value is no number.

    With ``decimal_year_day`` each value is the day it starts: the fraction of the year's days rounded half up
    (``1981.00274`` is 2 January 1981, ``1990.13462`` is 19 February 1990).
    """
    years = pd.to_numeric(values, errors="coerce").astype(float)
    whole = years.apply(np.floor)
    finite = years.apply(np.isfinite)
    if encoding == DECIMAL_YEAR_DAY:
        starts = pd.to_datetime(pd.DataFrame({"year": whole.where(finite), "month": 1, "day": 1}), errors="coerce")
        lengths = np.where(starts.dt.is_leap_year, 366.0, 365.0)
        offsets = ((years - whole) * lengths + 0.5).apply(np.floor).where(finite)
        return starts + pd.to_timedelta(offsets, unit="D")
    months = (whole * 12 + ((years - whole) * 12 + 0.5).apply(np.floor)).where(finite)
    parts = pd.DataFrame({"year": months // 12, "month": months % 12 + 1, "day": 1}, index=values.index)
    return pd.to_datetime(parts, errors="coerce")


def decimal_year_sql(column_sql: str, encoding: str = DECIMAL_YEAR) -> str:
    """The SQL twin of :func:`decimal_year_dates` for a DOUBLE expression: the month (or day) start, as a TIMESTAMP
    (NULL where the value is NULL or not finite)."""
    whole = f"floor({column_sql})"
    start = f"make_date(CAST({whole} AS INTEGER), 1, 1)"
    if encoding == DECIMAL_YEAR_DAY:
        length = f"CAST(date_diff('day', {start}, CAST({start} + INTERVAL 1 YEAR AS DATE)) AS DOUBLE)"
        days = f"CAST(floor(({column_sql} - {whole}) * {length} + 0.5) AS INTEGER)"
        date = f"CAST({start} + to_days({days}) AS TIMESTAMP)"
    else:
        months = f"CAST(floor(({column_sql} - {whole}) * 12 + 0.5) AS INTEGER)"
        date = f"CAST({start} + to_months({months}) AS TIMESTAMP)"
    return f"(CASE WHEN isfinite({column_sql}) THEN {date} END)"


def axis_dates(values: pd.Series, axis: TimeAxis) -> pd.Series:
    """A date axis' values as datetimes (decimal years read as months or days, anything else parsed as dates)."""
    if axis.encoding:
        return decimal_year_dates(values, axis.encoding)
    return pd.to_datetime(values, errors="coerce")


def date_sql(column_sql: str, axis: TimeAxis) -> str:
    """A date axis' column as a TIMESTAMP in SQL, the twin of :func:`axis_dates` (``column_sql`` is quoted)."""
    if axis.encoding:
        return decimal_year_sql(f"CAST({column_sql} AS DOUBLE)", axis.encoding)
    return f"CAST({column_sql} AS TIMESTAMP)"


def _span_days(col: dict[str, Any]) -> float | None:
    try:
        return float((pd.Timestamp(col["max"]) - pd.Timestamp(col["min"])).days)
    except (KeyError, TypeError, ValueError):
        return None


def decimal_year_period(low: Any, high: Any, encoding: str = DECIMAL_YEAR) -> str:
    """The trend bucket of a decimal-year span: as for dates, but never finer than a month when each value is read
    as the month it starts (``decimal_year``)."""
    try:
        start, end = decimal_year_dates(pd.Series([float(low), float(high)]), encoding)
        period = period_for_span(float((end - start).days))
    except (TypeError, ValueError):
        period = "month"
    return _decimal_period(period, encoding)


def at_least_month(period: str) -> str:
    """A decimal year's bucket: a day or week bucket becomes the month (each value stands for a whole month)."""
    return "month" if period in ("day", "week") else period


def decimal_year_encoding(col: dict[str, Any]) -> str | None:
    """How a numeric column the profile calls a ``period`` (a date stored as a decimal year, ``time`` 1990.083)
    reads: ``decimal_year`` when its sampled values sit on whole months, else ``decimal_year_day`` (weekly or daily
    series, 1/52, 1/365, are never read as months); None for any other column."""
    dtype = str(col.get("dtype", "")).lower()
    if col.get("semantic") != "period" or not ("float" in dtype or "int" in dtype or "double" in dtype):
        return None
    samples = [float(v) for v in col.get("samples") or [] if isinstance(v, int | float) and math.isfinite(float(v))]
    monthly = all(abs((v % 1) * 12 - round((v % 1) * 12)) <= _MONTH_GRID_SLACK for v in samples)
    return DECIMAL_YEAR if monthly else DECIMAL_YEAR_DAY


def _decimal_period(period: str | None, encoding: str) -> str:
    """A decimal-year axis' bucket: never finer than a month when each value is read as the month it starts."""
    return at_least_month(period or "month") if encoding == DECIMAL_YEAR else period or "month"


def _from_profile(table: dict[str, Any], axis: dict[str, Any]) -> TimeAxis | None:
    kind = axis.get("kind")
    if kind not in KINDS:
        return None
    if kind == "wide_years":
        years = {str(c): year_of(c) for c in axis.get("columns") or []}
        columns = sorted((c for c, y in years.items() if y is not None), key=lambda c: years[c] or 0)
        return TimeAxis("wide_years", columns[0], tuple(columns), "year") if len(columns) >= 2 else None
    column = axis.get("column")
    col = _column(table, column)
    if col is None or is_cohort_date(col):
        return None
    if kind == INDEX:
        return TimeAxis(INDEX, column, (), STEP)
    encoding = axis.get("encoding") if kind == "date" and axis.get("encoding") in ENCODINGS else None
    if encoding:
        stated = str(axis.get("period") or "")
        period = _decimal_period(stated or decimal_year_period(col.get("min"), col.get("max"), encoding), encoding)
    else:
        period = "year" if kind == "year" else str(axis.get("period") or period_for_span(_span_days(col)))
    return TimeAxis(kind, column, (), period if period in PERIODS else "month", encoding)


def trend_axis(table: dict[str, Any]) -> TimeAxis | None:
    """The axis a table's trend runs along, or None when it has none.

    Reads the profile's ``time_axis``; a profile without that key falls back to the first date column with two or
    more distinct values that is not a cohort date.
    """
    if "time_axis" in table:
        axis = table.get("time_axis")
        return _from_profile(table, axis) if isinstance(axis, dict) else None
    for col in table.get("columns", []):
        if col.get("role") == "date" and (col.get("distinct") or 2) >= 2 and not is_cohort_date(col):
            return TimeAxis("date", col["name"], (), period_for_span(_span_days(col)))
    return None


def _is_year_column(col: dict[str, Any]) -> bool:
    if col.get("semantic") == "year":
        return True
    low, high = col.get("min"), col.get("max")
    integer = "int" in str(col.get("dtype", "")).lower()
    try:
        return integer and YEAR_RANGE[0] <= float(low) <= float(high) <= YEAR_RANGE[1]  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def axis_for(table: dict[str, Any], column: str, period: str | None = None) -> TimeAxis:
    """The axis of a trend the plan names by ``column`` (a date column, a year column or a wide table's year column).

    Raises:
        ValueError: The column is a cohort date, or no time axis at all; the message names the fix.
    """
    profiled = trend_axis(table)
    if profiled is not None and profiled.kind == "wide_years" and column in profiled.columns:
        return profiled
    col = _column(table, column) or {}
    if is_cohort_date(col):
        raise ValueError(
            f"Column '{column}' is a cohort date (when each row's subject started, e.g. a hire or birth date), not "
            "a time axis. Fix: break the data down by its year as a category, or trend over an event date."
        )
    encoding = decimal_year_encoding(col)
    if encoding:
        chosen = period or (profiled.period if profiled and profiled.column == column else None)
        chosen = chosen or decimal_year_period(col.get("min"), col.get("max"), encoding)
        return TimeAxis("date", column, (), _decimal_period(chosen, encoding), encoding)
    if col.get("role") == "date" or str(col.get("dtype", "")).startswith("datetime"):
        chosen = period or (profiled.period if profiled and profiled.column == column else None)
        return TimeAxis("date", column, (), chosen or period_for_span(_span_days(col)))
    if _is_year_column(col):
        return TimeAxis("year", column, (), "year")
    if col.get("semantic") == "time_step":
        return TimeAxis(INDEX, column, (), STEP)
    raise ValueError(
        f"Column '{column}' is neither a date, a year, a time step nor one of a wide table's year columns. "
        "Fix: trend over the profile's time_axis column."
    )


def bucket(dates: pd.Series, period: str) -> pd.Series:
    """The start of each date's period (day, Monday of the week, first of the month or of the year)."""
    if period == "day":
        return dates.dt.normalize()
    if period == "week":
        return dates.dt.normalize() - pd.to_timedelta(dates.dt.day_of_week, unit="D")
    return dates.dt.to_period("M" if period == "month" else "Y").dt.start_time


def grain_days(dates: pd.Series) -> float:
    """How often the data is recorded: the median gap, in days, between its distinct dates (1 for daily data)."""
    days = pd.Series(pd.to_datetime(dates, errors="coerce").dropna().dt.normalize().unique()).sort_values()
    if len(days) < 2:
        return 1.0
    gaps = days.diff().dropna().dt.days
    return max(1.0, float(gaps.median()))


def _period_end(start: pd.Timestamp, period: str) -> pd.Timestamp:
    if period in _PERIOD_DAYS:
        return start + pd.Timedelta(days=_PERIOD_DAYS[period])
    return start + (pd.DateOffset(months=1) if period == "month" else pd.DateOffset(years=1))


def partial_ends(dates: pd.Series, period: str) -> tuple[bool, bool]:
    """Whether the first and the last period hold only part of their time (a day never does).

    The data covers a period from its first date to one recording step (:func:`grain_days`) past its last date, so
    monthly data dated on the 1st covers its months in full, while daily data from 29 January covers 3 of 31 days.
    """
    clean = pd.to_datetime(dates, errors="coerce").dropna()
    step = grain_days(clean) if not clean.empty else 1.0
    if clean.empty or step >= _PERIOD_DAYS.get(period, _MIN_PERIOD_DAYS.get(period, 1.0)):
        return False, False  # one row per period or coarser: every row stands for a whole period
    grain = pd.Timedelta(days=step)
    low, high = clean.min().normalize(), clean.max().normalize() + grain
    first = bucket(pd.Series([low]), period).iloc[0]
    last = bucket(pd.Series([clean.max()]), period).iloc[0]

    def share(start: pd.Timestamp, end: pd.Timestamp, lo: pd.Timestamp, hi: pd.Timestamp) -> float:
        covered = (min(end, hi) - max(start, lo)).total_seconds()
        return covered / (end - start).total_seconds()

    first_share = share(first, _period_end(first, period), low, high)
    last_share = share(last, _period_end(last, period), low, high)
    return first_share < PARTIAL_COVERAGE, last_share < PARTIAL_COVERAGE


def compare_periods(keys: list[Any], dates: pd.Series | None, period: str) -> Comparison:
    """Choose the periods a first-vs-last change compares (``keys`` in time order, at least one).

    Partial first/last periods are left out while two complete periods remain; otherwise the ends are compared per
    observed day. Year columns and wide year tables have no partial periods (a year value stands for its year).
    """
    partial_first, partial_last = partial_ends(dates, period) if dates is not None else (False, False)
    if len(keys) < 2:
        return Comparison(keys[0], keys[-1])
    inner = keys[(1 if partial_first else 0) : len(keys) - (1 if partial_last else 0)]
    if len(inner) >= 2 or not (partial_first or partial_last):
        return Comparison(inner[0], inner[-1], partial_first, partial_last)
    return Comparison(keys[0], keys[-1], partial_first, partial_last, per_day=True)


def weekend_share_allowed(dates: pd.Series, period: str | None = None) -> bool:
    """Whether a weekend share means something: data recorded per day or finer, over at least a week.

    Monthly or yearly data (one date per month, a year column) has no weekday rhythm, so its weekday is an
    artefact of the calendar. ``period`` is the trend bucket and is not needed to decide.
    """
    clean = pd.to_datetime(dates, errors="coerce").dropna()
    if clean.empty:
        return False
    if (clean.max() - clean.min()).days < WEEKEND_MIN_SPAN_DAYS:
        return False
    logger.debug("weekend share check for %s periods", period)
    return grain_days(clean) <= 1.0


def melt_wide_years(df: pd.DataFrame, columns: tuple[str, ...] | list[str]) -> pd.DataFrame:
    """A wide table's year columns as long rows ``(year, value)``, missing cells dropped, in year order."""
    frames = [
        pd.DataFrame({"year": year_of(c), "value": pd.to_numeric(df[c], errors="coerce")}) for c in columns if c in df
    ]
    if not frames:
        return pd.DataFrame({"year": pd.Series(dtype="int64"), "value": pd.Series(dtype="float64")})
    return pd.concat(frames, ignore_index=True).dropna(subset=["value"]).astype({"year": "int64"})


def period_keys(df: pd.DataFrame, axis: TimeAxis) -> pd.Series:
    """Each row's period key: a bucket start for dates, the integer year (or step) for year (or step) columns."""
    if axis.kind == "date":
        return bucket(axis_dates(df[axis.column], axis), axis.period)
    years = pd.to_numeric(df[axis.column], errors="coerce")
    return years.where(years.notna() & (years == years.round())).astype("Int64")


def period_label(key: Any, axis: TimeAxis) -> str:
    """A period as the report prints it: ``2025-03`` for a month, ``1970`` (never ``1,970.00``) for a year."""
    if axis.kind == "date":
        return pd.Timestamp(key).strftime(PERIOD_FORMATS[axis.period])
    return str(int(key))


def observed_days(dates: pd.Series, keys: pd.Series) -> pd.Series:
    """Distinct calendar days with data per period key (the per-day divisor for partial periods)."""
    days = pd.to_datetime(dates, errors="coerce").dt.normalize()
    return days.groupby(keys).nunique()
