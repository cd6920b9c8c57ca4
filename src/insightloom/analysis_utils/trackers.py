"""Write once, checked twice: trackers that compute a number in pandas AND write its DuckDB check from one spec.

A hand-written script computes a value one way and its check another, and the two drift (a filter forgotten, an
integer division, NULLs counted). Each tracker here takes what to compute (view, columns, filter), computes it with
pandas, writes the SQL that computes the same thing the same way (NULLs ignored like ``skipna``, DOUBLE division,
``quantile_cont`` = pandas' linear quantiles, ties broken by name), calls ``track_calculation`` and returns the
``{{calc:id}}`` reference for the findings.

They also read what the column means from the job's profile (``aggregation``, ``semantic``, ``unit``,
``unit_scale``) and refuse an aggregation the profile forbids with :class:`AggregationRefused`, which names the
column, the profile's verdict and the fix: a total of a year, a rank or a price is never reported.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from insightloom.analysis import choices, joins, time_logic
from insightloom.analysis.time_logic import TimeAxis, bucket
from insightloom.analysis_utils.calculations import track_calculation
from insightloom.analysis_utils.jobdir import job_dir, load_df, read_profile, resolve_view
from insightloom.analysis_utils.sql import dbl, qi, ql, ref
from insightloom.report.formatting import is_currency

logger = logging.getLogger(__name__)

AUTO = "auto"  # unit/decimals default: derived from the profile and the value
_PERIODS = ("day", "week", "month", "year")
_SEMANTIC_WORDS = {
    "year": "a year",
    "period": "a period code",
    "rank": "a rank",
    "code": "a code",
    "index": "a row index",
    "cumulative": "a running total",
    "weight": "a survey or sample weight",
    "binary_outcome": "a 0/1 outcome",
    "currency": "a unit amount (a price or value per item)",
    "percent": "a percentage",
    "coordinate": "a coordinate",
    "duration": "a duration",
    "cohort_date": "a cohort date",
}
_FIXES = {
    "year": "use it as a time axis (a trend) or count rows per year with track_group_values(prefix, view, None, "
    "{col!r}, 'count') instead",
    "period": "use it as a time axis or group by it with track_group_values(..., agg='count') instead",
    "rank": "its numbers are labels: group by it with track_group_values(..., agg='count') or leave it out",
    "code": "its numbers are labels: group by it with track_group_values(..., agg='count') or leave it out",
    "index": "it only numbers the rows: count rows instead (track_value with SELECT COUNT(*))",
    "cumulative": "report its last or largest value (track_stat(view, {col!r}, id, 'max')) or its change over time",
    "weight": "use it to weight other columns, not as a measure",
    "binary_outcome": "report the share of 1s with track_rate(view, {col!r}, None, id) (its rate in %)",
    "coordinate": "correlate or map it; it is never added up or averaged as a business value",
}
_DEFAULT_FIX = "use track_mean (the average per row) instead, or recompute a rate from its parts with track_rate"


class AggregationRefused(ValueError):
    """The profile says this aggregation of the column means nothing (the message names the column and the fix)."""


@dataclass(frozen=True)
class ColumnFacts:
    """What the profile says about one column, with permissive defaults for older profiles.

    Attributes:
        view: The view the column belongs to (resolved from an alias).
        name: Column name.
        aggregation: ``sum``, ``mean`` or ``none``.
        semantic: ``year``, ``rank``, ``binary_outcome``, ... or None.
        unit: Unit of its values (a currency code, ``%``, ``count``) or None.
        unit_scale: Multiplier to the unit (1000 for "in thousands of dollars").
        positive: The value that counts as 1 in a two-valued text outcome (``yes``), else None.
        sentinels: Codes the profile found used as codes (``sentinel_values``: 99999, -1); never a value.
    """

    view: str
    name: str
    aggregation: str
    semantic: str | None
    unit: str | None
    unit_scale: int
    positive: str | None = None
    sentinels: tuple[float, ...] = ()


@dataclass(frozen=True)
class _Table:
    view: str
    source: str
    entry: dict[str, Any]


def job_profile() -> dict[str, Any]:
    """The job's profile, re-read only when the file changed (a breakdown tracks dozens of numbers)."""
    path = job_dir() / "cache" / "profile.json"
    try:
        stat = path.stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size)
    except OSError:
        return read_profile()  # raises the usual "profile is missing" error
    if _PROFILE_CACHE.get("key") != key:
        _PROFILE_CACHE.clear()
        _PROFILE_CACHE.update(key=key, profile=read_profile(path.parent.parent))
    profile: dict[str, Any] = _PROFILE_CACHE["profile"]
    return profile


_PROFILE_CACHE: dict[str, Any] = {}
_FRAME_CACHE: dict[tuple[str, str], tuple[tuple[int, int], pd.DataFrame]] = {}


def table_of(view: str | None) -> _Table:
    """The profile table of ``view`` (a view name or alias such as ``data``)."""
    profile = job_profile()
    name = resolve_view(view, profile)
    if joins.is_joined(name):  # the child's entry with the parents' columns; its numbers come from the child file
        joined = joins.joined_table(profile, name)
        return _Table(name, str(joined.get("file") or name), joined)
    entry: dict[str, Any] = next((t for t in profile.get("tables", []) if t.get("view") == name), {})
    return _Table(name, str(entry.get("file") or name), entry)


def frame(view: str | None) -> pd.DataFrame:
    """The cached table of ``view`` as loaded by ``load_df`` (kept while its Parquet file is unchanged)."""
    table = table_of(view)
    if joins.is_joined(table.view):
        return _joined_frame(table.view)
    path = job_dir() / str(table.entry.get("parquet") or f"cache/{table.view}.parquet")
    key = (str(job_dir()), table.view)
    try:
        stat = Path(path).stat()
        version = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        return load_df(table.view)
    cached = _FRAME_CACHE.get(key)
    if cached is None or cached[0] != version:
        if len(_FRAME_CACHE) >= 4:
            _FRAME_CACHE.clear()
        _FRAME_CACHE[key] = (version, load_df(table.view))
    return _FRAME_CACHE[key][1]


def _joined_frame(name: str) -> pd.DataFrame:
    """A joined view's frame, kept while every table it reads is unchanged (a breakdown asks for it often)."""
    view = joins.resolve(job_profile(), name)
    version: list[int] = []
    for part in (view.child, *(step.parent for step in view.steps)):
        entry = table_of(part).entry
        try:
            stat = (job_dir() / str(entry.get("parquet") or f"cache/{part}.parquet")).stat()
        except OSError:
            return load_df(name)  # raises the usual "cached table is missing" error
        version += [stat.st_mtime_ns, stat.st_size]
    key = (str(job_dir()), name)
    cached = _JOINED_CACHE.get(key)
    if cached is None or cached[0] != tuple(version):
        _JOINED_CACHE.clear()
        _JOINED_CACHE[key] = (tuple(version), load_df(name))
    return _JOINED_CACHE[key][1]


_JOINED_CACHE: dict[tuple[str, str], tuple[tuple[int, ...], pd.DataFrame]] = {}


def column_facts(view: str | None, column: str) -> ColumnFacts:
    """What the profile says about ``column`` of ``view``.

    Raises:
        ValueError: The view has no such column (the message lists the closest names).
    """
    table = table_of(view)
    col = choices.column(table.entry, column)
    if col is None:
        names = [str(c.get("name")) for c in table.entry.get("columns", [])]
        raise ValueError(f"View {table.view!r} has no column {column!r}; its columns are: {', '.join(names[:30])}")
    aggregation = str(col.get("aggregation") or _fallback_aggregation(col))
    unit = col.get("unit") if col.get("unit") else choices.measure_unit(col)
    positive = col.get("positive_value")
    return ColumnFacts(table.view, column, aggregation, col.get("semantic"), unit, int(col.get("unit_scale") or 1),
                       None if positive is None else str(positive), sentinel_codes(col))  # fmt: skip


def sentinel_codes(col: dict[str, Any]) -> tuple[float, ...]:
    """The codes of a profile column's ``sentinel_values`` (``[{"value": 99999, "count": 12}]`` -> ``(99999.0,)``)."""
    codes: list[float] = []
    for entry in col.get("sentinel_values") or []:
        value: Any = entry.get("value") if isinstance(entry, dict) else entry
        try:
            codes.append(float(value))
        except (TypeError, ValueError):
            continue  # a malformed entry is no code
    return tuple(dict.fromkeys(c for c in codes if math.isfinite(c)))


def measured(series: pd.Series, facts: ColumnFacts) -> pd.Series:
    """The column's values as floats with its sentinel codes left out (99999 meaning "unknown" is no value)."""
    values = numeric(series)
    return values.mask(values.isin(facts.sentinels)) if facts.sentinels else values


def measured_sql(facts: ColumnFacts) -> str:
    """The SQL twin of :func:`measured`: the column as DOUBLE, NULL where it holds a sentinel code."""
    return without_codes_sql(facts.name, facts.sentinels)


def without_codes_sql(column: str, codes: tuple[float, ...]) -> str:
    """``CAST(column AS DOUBLE)``, NULL where it holds one of ``codes``."""
    value = dbl(column)
    if not codes:
        return value
    listed = ", ".join(repr(float(code)) for code in codes)  # numpy scalars repr as np.float64(...)
    return f"CASE WHEN {value} IN ({listed}) THEN NULL ELSE {value} END"


def _fallback_aggregation(col: dict[str, Any]) -> str:
    # An older profile without the key: today's name rule decides, and only measures are ever summed.
    if col.get("role") not in ("measure", "rate"):
        return "none"
    return "sum" if col.get("role") == "measure" and choices.is_additive(col) else "mean"


def refusal(facts: ColumnFacts, operation: str) -> AggregationRefused:
    """The error for an aggregation the profile forbids, naming the column, the verdict and the fix."""
    what = _SEMANTIC_WORDS.get(facts.semantic or "", "averaged, never summed" if facts.aggregation == "mean" else "")
    what = what or "not a quantity"
    fix = _FIXES.get(facts.semantic or "", _DEFAULT_FIX if facts.aggregation == "mean" else _FIXES["code"])
    return AggregationRefused(
        f"Column {facts.name!r} of view {facts.view!r} is {what} (aggregation: {facts.aggregation}); "
        f"{'an' if operation[0] in 'aeiou' else 'a'} {operation} of it means nothing. "
        f"Fix: {fix.format(col=facts.name)}."
    )


def require(facts: ColumnFacts, agg: str) -> None:
    """Raise :class:`AggregationRefused` when the profile forbids ``agg`` (``sum``, ``mean``) of the column."""
    if agg == "sum" and facts.aggregation != "sum":
        raise refusal(facts, "total")
    if agg in ("mean", "quantile") and facts.aggregation == "none":
        raise refusal(facts, "average" if agg == "mean" else "distribution")


def numeric(series: pd.Series) -> pd.Series:
    """The column as floats (text that is no number becomes missing, like ``CAST ... AS DOUBLE`` of a number)."""
    return pd.to_numeric(series, errors="coerce").astype(float)


def outcome_values(series: pd.Series, positive: str | None) -> pd.Series:
    """A 0/1 outcome as floats: numbers as they are, or a text outcome's ``positive`` value as 1 (missing stays)."""
    if positive is None:
        return numeric(series)
    return (series.astype(str) == positive).astype(float).where(series.notna())


def outcome_sql(column: str, positive: str | None) -> str:
    """The SQL twin of :func:`outcome_values`."""
    if positive is None:
        return dbl(column)
    col = qi(column)
    text = f"CAST({col} AS VARCHAR)"
    if positive in ("True", "False"):  # a BOOLEAN column (XLSX, a database): pandas writes True, DuckDB true
        text, positive = f"lower({text})", positive.lower()
    return f"CASE WHEN {col} IS NULL THEN NULL WHEN {text} = {ql(positive)} THEN 1.0 ELSE 0.0 END"


def is_integral(series: pd.Series) -> bool:
    """Whether every present value is a whole number (its sums print without decimals)."""
    values = numeric(series).dropna()
    return bool(len(values)) and bool(((values % 1) == 0).all())


def value_decimals(value: float, unit: str | None, integral: bool) -> int | None:
    """Display decimals: whole numbers of whole-number data without decimals (a sum of counts is never
    ``808,585.00``, whatever its unit), small currency amounts with their cents."""
    if unit == "count":
        return None  # the report prints counts without decimals already
    if unit == "%":
        return 2 if 0 < abs(value) < 1 else None
    if integral and float(value).is_integer():
        return 0
    if is_currency(unit):
        return 2 if abs(value) < 100 and not float(value).is_integer() else None
    return None


def _mask(data: pd.DataFrame, where: Mapping[str, Any] | None) -> pd.Series:
    keep = pd.Series(True, index=data.index)
    for column, value in (where or {}).items():
        keep &= data[column] == value
    return keep


def where_sql(where: Mapping[str, Any] | None) -> str:
    """``"a" = 'x' AND "b" = 3`` for an equality filter (empty when there is none)."""
    return " AND ".join(f"{qi(c)} = {ql(v)}" for c, v in (where or {}).items())


def _filtered(expression: str, where: Mapping[str, Any] | None) -> str:
    return _when(expression, where_sql(where))


def _when(expression: str, condition: str) -> str:
    return f"CASE WHEN {condition} THEN {expression} END" if condition else expression


def _date_axis(view: str | None, date: str, period: str) -> TimeAxis:
    """``date`` as a date axis of ``period``: a decimal year (``time`` 1990.083) when the profile says so."""
    column = choices.column(table_of(view).entry, date) or {}
    return TimeAxis("date", date, (), period, time_logic.decimal_year_encoding(column))


def last_period_mask(data: pd.DataFrame, date: str, period: str, view: str | None = None) -> pd.Series:
    """The rows whose ``date`` falls in the table's last ``period`` (the period of its latest date).

    Raises:
        ValueError: Unknown period, or no value of ``date`` reads as a date.
    """
    if period not in _PERIODS:
        raise ValueError(f"period {period!r} must be one of {', '.join(_PERIODS)}")
    keys = bucket(time_logic.axis_dates(data[date], _date_axis(view, date, period)), period)
    if keys.notna().sum() == 0:
        raise ValueError(f"column {date!r} holds no date, so it has no last {period}")
    return keys == keys.max()


def last_period_sql(view: str, date: str, period: str) -> str:
    """The SQL twin of :func:`last_period_mask`: the row's period start equals the latest one in the view."""
    key = f"date_trunc({ql(period)}, {time_logic.date_sql(qi(date), _date_axis(view, date, period))})"
    return f"{key} = (SELECT max({key}) FROM {qi(view)})"


def _last_words(last: tuple[str, str] | None) -> str:
    return f" in the last {last[1]} of {last[0]}" if last else ""


def _scaled(sql: str, scale: float) -> str:
    return sql if scale == 1 else f"{scale:g} * {sql}"


def _where_words(where: Mapping[str, Any] | None) -> str:
    return "".join(f" where {c} = {v}" for c, v in (where or {}).items())


def _unit(unit: str | None, default: str | None) -> str | None:
    return default if unit == AUTO else unit


def _decimals(decimals: int | None | str, value: float, unit: str | None, integral: bool) -> int | None:
    return value_decimals(value, unit, integral) if decimals == AUTO else decimals  # type: ignore[return-value]


def track_value(
    calc_id: str,
    value: Any,
    description: str,
    formula: str,
    view: str | None,
    columns: list[str],
    importance: str,
    check: str | None,
    unit: str | None = None,
    decimals: int | None = None,
    recipe: dict[str, Any] | None = None,
    *,
    basis: dict[str, Any] | None = None,
) -> str:
    """``track_calculation`` with the source file taken from the view; returns the ``{{calc:id}}`` reference."""
    source = table_of(view).source
    track_calculation(calc_id, value, description, formula, source, list(columns), importance, check=check,
                      unit=unit, decimals=decimals, recipe=recipe, basis=basis)  # fmt: skip
    return ref(calc_id)


def _track_aggregate(
    agg: str, view: str | None, column: str, calc_id: str, description: str, where: Mapping[str, Any] | None,
    importance: str, unit: str | None, decimals: int | None | str, last: tuple[str, str] | None = None,
) -> str:  # fmt: skip
    """The shared body of :func:`track_total` (``sum``) and :func:`track_mean` (``mean``)."""
    facts = column_facts(view, column)
    require(facts, agg)
    data = frame(view)
    keep, condition = _mask(data, where), where_sql(where)
    if last is not None:  # the last period of the WHOLE table, whatever ``where`` keeps
        keep &= last_period_mask(data, *last, view=view)
        condition = " AND ".join(c for c in (condition, last_period_sql(facts.view, *last)) if c)
    values = measured(data.loc[keep, column], facts)
    words = _where_words(where) + _last_words(last)
    if agg == "mean" and values.notna().sum() == 0:
        raise ValueError(f"track_mean({calc_id!r}): column {column!r} has no value{words} to average")
    value = float(values.sum() if agg == "sum" else values.mean()) * facts.unit_scale
    kept = _when(measured_sql(facts), condition)
    sql = f"COALESCE(SUM({kept}), 0)" if agg == "sum" else f"AVG({kept})"
    check = f"SELECT {_scaled(sql, facts.unit_scale)} FROM {qi(facts.view)}"
    # A mean of counts is no count (3.5 orders per row prints with decimals).
    shown = _unit(unit, None if agg == "mean" and facts.unit == "count" else facts.unit)
    integral = agg == "sum" and is_integral(values)
    columns = list(dict.fromkeys([column, *(where or {}), *(last[:1] if last else ())]))
    formula = f"df[{column!r}].{agg}(){words}" + _without_words(facts)
    basis = None if last is not None else catalog_basis(agg, [column], [facts], where)
    return track_value(calc_id, value, description, formula, facts.view, columns,
                       importance, check, shown, _decimals(decimals, value, shown, integral), basis=basis)  # fmt: skip


def catalog_basis(
    op: str, columns: list[str], facts: list[ColumnFacts], rows: Mapping[str, Any] | None = None, **params: Any
) -> dict[str, Any] | None:
    """The statistics-catalog basis of a tracked value (what follow-up answers match on), or None when the value
    is not the catalog's plain statistic: a sentinel code left out, or a unit scale applied. ``rows`` are the
    rows kept (column -> value); ``params`` the step's parameters (a share's ``where`` condition)."""
    if any(f.sentinels or f.unit_scale != 1 for f in facts):
        return None
    from insightloom.analysis_utils.statistics import basis_of
    from insightloom.statistics.request import Filter, Step

    filters = tuple(Filter(str(c), "=", v if isinstance(v, int | float) and not isinstance(v, bool) else str(v))
                    for c, v in (rows or {}).items())  # fmt: skip
    return basis_of(Step(op, tuple(columns)).with_params(**params), filters, "value")


def _without_words(facts: ColumnFacts) -> str:
    """The formula's note that sentinel codes were left out (empty when the column has none)."""
    return _codes_note(facts.sentinels)


def _codes_note(codes: Iterable[float]) -> str:
    listed = list(dict.fromkeys(codes))  # in the order given, once each
    return ("  # without the code(s) " + ", ".join(f"{code:.15g}" for code in listed)) if listed else ""


def track_total(
    view: str | None,
    column: str,
    calc_id: str,
    description: str | None = None,
    *,
    where: Mapping[str, Any] | None = None,
    last: tuple[str, str] | None = None,
    importance: str = "high",
    unit: str | None = AUTO,
    decimals: int | None | str = AUTO,
) -> str:
    """Track the sum of ``column`` (NULLs ignored; an empty sum is 0), optionally over the rows matching ``where``
    and, with ``last=(date column, period)``, in the table's last day, week, month or year of that date column.

    ``unit``/``decimals`` default to the profile's unit (scaled by ``unit_scale``) and the display rule (whole sums
    without decimals, small currency amounts with cents).

    Raises:
        AggregationRefused: The profile says the column may not be summed (a year, rank, price, rate, ...).
        ValueError: ``last`` names an unknown period or a column holding no date.
    """
    text = description or f"Sum of {column}"
    return _track_aggregate("sum", view, column, calc_id, text, where, importance, unit, decimals, last)


def track_mean(
    view: str | None,
    column: str,
    calc_id: str,
    description: str | None = None,
    *,
    where: Mapping[str, Any] | None = None,
    last: tuple[str, str] | None = None,
    importance: str = "high",
    unit: str | None = AUTO,
    decimals: int | None | str = AUTO,
) -> str:
    """Track the average of ``column`` over its present values (optionally of the rows matching ``where`` and in the
    last period of a date column, ``last=(date column, period)``, as :func:`track_total`).

    Raises:
        AggregationRefused: The profile says the column is a label (a year, code, rank, index).
        ValueError: No value is present.
    """
    text = description or f"Average {column} per row"
    return _track_aggregate("mean", view, column, calc_id, text, where, importance, unit, decimals, last)


_STATS = {"min": "MIN({c})", "max": "MAX({c})", "median": "quantile_cont({c}, 0.5)"}


def track_stat(
    view: str | None,
    column: str,
    calc_id: str,
    stat: str,
    description: str | None = None,
    *,
    q: float | None = None,
    importance: str = "medium",
    unit: str | None = AUTO,
    decimals: int | None | str = AUTO,
) -> str:
    """Track ``min``, ``max``, ``median``, ``quantile`` (linear, ``q``) or ``std`` (sample) of ``column``.

    ``std`` carries a recipe instead of a check: the Validator re-derives it independently when its tiers pick it.

    Raises:
        AggregationRefused: A quantile or std of a column the profile marks as a label (aggregation ``none``).
        ValueError: Unknown stat, or no value present.
    """
    facts = column_facts(view, column)
    if stat not in (*_STATS, "quantile", "std"):
        raise ValueError(f"track_stat({calc_id!r}): stat {stat!r} must be min, max, median, quantile or std")
    if stat not in ("min", "max"):
        require(facts, "quantile")
    values = measured(frame(view)[column], facts).dropna()
    if values.empty:
        raise ValueError(f"track_stat({calc_id!r}): column {column!r} has no value")
    recipe = None
    expression = measured_sql(facts)
    if stat == "std":
        value, check, formula = float(values.std()), None, f"df[{column!r}].std()  # sample, ddof=1"
        if facts.sentinels:  # the recipe reads the raw column: check the values without the codes in SQL instead
            check = f"SELECT stddev_samp({expression}) FROM {qi(facts.view)}"
        else:
            recipe = {"op": "std", "view": facts.view, "column": column}
    elif stat == "quantile":
        share = float(q if q is not None else 0.5)
        value, formula = float(values.quantile(share)), f"df[{column!r}].quantile({share})  # linear"
        check = f"SELECT quantile_cont({expression}, {share}) FROM {qi(facts.view)}"
    else:
        value = float({"min": values.min, "max": values.max, "median": values.median}[stat]())
        check, formula = (
            f"SELECT {_STATS[stat].format(c=expression)} FROM {qi(facts.view)}",
            f"df[{column!r}].{stat}()",
        )
    formula += _without_words(facts)
    value *= facts.unit_scale
    if check is not None and facts.unit_scale != 1:
        check = check.replace("SELECT ", f"SELECT {facts.unit_scale} * ", 1)
    shown = _unit(unit, None if facts.unit == "count" else facts.unit)
    # A minimum, maximum or quantile of whole numbers that is itself whole prints without decimals (19, not 19.00).
    integral = stat != "std" and is_integral(values)
    params = {"q": float(q if q is not None else 0.5)} if stat == "quantile" else {}
    median = stat == "quantile" and params["q"] == 0.5
    op = "median" if median else stat
    basis = catalog_basis(op, [column], [facts], None, **({} if median else params))
    return track_value(calc_id, value, description or f"{stat} of {column}", formula, facts.view, [column],
                       importance, check, shown, _decimals(decimals, value, shown, integral), recipe,
                       basis=basis)  # fmt: skip


def _part(data: pd.DataFrame, column: str | None, where: Mapping[str, Any] | None) -> float:
    rows = data.loc[_mask(data, where)]
    return float(len(rows)) if column is None else float(numeric(rows[column]).sum())


def _part_sql(column: str | None, where: Mapping[str, Any] | None) -> str:
    if column is None:
        condition = where_sql(where)
        return f"COUNT(*) FILTER (WHERE {condition})" if condition else "COUNT(*)"
    return f"COALESCE(SUM({_filtered(dbl(column), where)}), 0)"


def track_share(
    view: str | None,
    column: str | None,
    calc_id: str,
    *,
    where: Mapping[str, Any],
    description: str | None = None,
    importance: str = "medium",
) -> str:
    """Track the share (in %) of the rows matching ``where`` in the total of ``column`` (None: in all rows).

    Raises:
        AggregationRefused: The column may not be summed, so a share of its total means nothing.
        ValueError: The total is 0.
    """
    table = table_of(view)
    if column is not None:
        require(column_facts(view, column), "sum")
    data = frame(view)
    whole = _part(data, column, None)
    if whole == 0:
        raise ValueError(f"track_share({calc_id!r}): the total is 0, so no share exists")
    value = 100 * _part(data, column, where) / whole
    ratio = f"100 * CAST({_part_sql(column, where)} AS DOUBLE) / NULLIF({_part_sql(column, None)}, 0)"
    check = f"SELECT {ratio} FROM {qi(table.view)}"
    what = "rows" if column is None else f"sum({column})"
    return track_value(calc_id, value, description or f"Share of{_where_words(where)} in the total",
                       f"{what}{_where_words(where)} / {what} overall * 100", table.view,
                       [*(where or {}), *([column] if column else [])], importance, check, "%",
                       value_decimals(value, "%", False))  # fmt: skip


def track_rate(
    view: str | None,
    numerator: str,
    denominator: str | None,
    calc_id: str,
    description: str | None = None,
    *,
    scale: float = 100.0,
    where: Mapping[str, Any] | None = None,
    importance: str = "high",
    unit: str | None = "%",
    decimals: int | None = 2,
) -> str:
    """Track ``scale * SUM(numerator) / SUM(denominator)``, recomputed from its parts rather than averaged.

    With ``denominator=None`` it is the rate of a 0/1 outcome: ``scale *`` the average of ``numerator`` (the share
    of 1s among present values; for a two-valued text outcome, of the profile's ``positive_value``). ``where``
    restricts both parts to matching rows.

    Raises:
        ValueError: The denominator is 0 (or no outcome value is present).
    """
    table = table_of(view)
    data = frame(view)
    rows = data.loc[_mask(data, where)]
    if denominator is None:
        positive = column_facts(view, numerator).positive
        num = outcome_values(rows[numerator], positive)
        den = float(num.notna().sum())
        top = float(num.sum())
        check = f"SELECT {scale:g} * AVG({_filtered(outcome_sql(numerator, positive), where)}) FROM {qi(table.view)}"
        formula = f"{scale:g} * mean({numerator}){_where_words(where)}"
    else:
        top, den = float(numeric(rows[numerator]).sum()), float(numeric(rows[denominator]).sum())
        check = (f"SELECT {scale:g} * SUM({_filtered(dbl(numerator), where)}) / "
                 f"NULLIF(SUM({_filtered(dbl(denominator), where)}), 0) FROM {qi(table.view)}")  # fmt: skip
        formula = f"{scale:g} * sum({numerator}) / sum({denominator}){_where_words(where)}"
    if den == 0:
        raise ValueError(f"track_rate({calc_id!r}): the denominator is 0{_where_words(where)}, so no rate exists")
    columns = [*(where or {}), numerator, *([denominator] if denominator else [])]
    basis = None
    if denominator is None and not where and scale == 100:  # an outcome's rate is the share of its yes value
        yes = positive if positive is not None else 1.0
        basis = catalog_basis("share", [], [column_facts(view, numerator)], None, where=((numerator, "=", yes),))
    return track_value(calc_id, scale * top / den, description or f"{numerator} / {denominator}", formula, table.view,
                       columns, importance, check, unit, decimals, basis=basis)  # fmt: skip


def _value_at(data: pd.DataFrame, keys: pd.Series, key: Any, measure: str | None, agg: str) -> float:
    rows = data.loc[keys == key]
    if agg == "count" or measure is None:
        return float(len(rows))
    values = numeric(rows[measure])
    return float(values.sum()) if agg == "sum" else float(values.mean())


def _agg_sql(measure: str | None, agg: str, condition: str) -> str:
    if agg == "count" or measure is None:
        return f"COUNT(*) FILTER (WHERE {condition})"
    value = f"CASE WHEN {condition} THEN {dbl(measure)} END"
    return f"COALESCE(SUM({value}), 0)" if agg == "sum" else f"AVG({value})"


def track_change(
    view: str | None,
    measure: str | None,
    by: str,
    first: Any,
    last: Any,
    calc_id: str,
    description: str | None = None,
    *,
    agg: str = "sum",
    period: str | None = None,
    importance: str = "high",
) -> str:
    """Track the change in % of ``agg(measure)`` from the rows where ``by == first`` to those where ``by == last``.

    With ``period`` (day, week, month, year), ``by`` is a date column and ``first``/``last`` are period starts
    (Timestamps): rows are grouped like ``date_trunc(period, by)``. ``measure=None`` counts rows.

    Raises:
        AggregationRefused: The profile forbids ``agg`` of the measure.
        ValueError: The first value is 0 or missing, or the period is unknown.
    """
    table = table_of(view)
    if measure is not None and agg != "count":
        require(column_facts(view, measure), agg)
    data = frame(view)
    if period is not None and period not in _PERIODS:
        raise ValueError(f"track_change({calc_id!r}): period {period!r} must be one of {', '.join(_PERIODS)}")
    if period:
        axis = _date_axis(view, by, period)
        keys = bucket(time_logic.axis_dates(data[by], axis), period)
        sql_key = f"date_trunc('{period}', {time_logic.date_sql(qi(by), axis)})"
        literal = {k: f"TIMESTAMP '{pd.Timestamp(k).isoformat(sep=' ')}'" for k in (first, last)}
    else:
        keys, sql_key, literal = data[by], qi(by), {k: ql(k) for k in (first, last)}
    start, end = (_value_at(data, keys, k, measure, agg) for k in (first, last))
    if not start or math.isnan(start) or math.isnan(end):
        raise ValueError(f"track_change({calc_id!r}): the value at {first} is 0 or missing, so no % change exists")
    a, b = (_agg_sql(measure, agg, f"{sql_key} = {literal[k]}") for k in (first, last))
    check = f"SELECT 100 * (({b}) - ({a})) / ({a}) FROM {qi(table.view)}"
    columns = [by, *([measure] if measure else [])]
    return track_value(calc_id, 100 * (end - start) / start, description or f"Change from {first} to {last}",
                       "(last - first) / first * 100", table.view, columns, importance, check, "%")  # fmt: skip


def measured_pair(view: str | None, x: str, y: str) -> tuple[pd.DataFrame, str, str]:
    """The rows where both ``x`` and ``y`` hold a value (sentinel codes left out, like every mean), and the SQL of
    each column as the check reads it (:func:`measured_sql`): a few rows coded 99999 in both would fake r = 1."""
    fx, fy = column_facts(view, x), column_facts(view, y)
    data = frame(view)
    pair = pd.DataFrame({x: measured(data[x], fx), y: measured(data[y], fy)}).dropna()
    return pair, measured_sql(fx), measured_sql(fy)


def track_corr(
    view: str | None,
    x: str,
    y: str,
    calc_id: str,
    description: str | None = None,
    *,
    importance: str = "high",
) -> str:
    """Track the Pearson correlation of ``x`` and ``y`` over the rows where both are present.

    Raises:
        ValueError: Fewer than 3 such rows, or a column that does not vary (no correlation exists).
    """
    table = table_of(view)
    pair, sql_x, sql_y = measured_pair(view, x, y)
    coef = float(pair[x].corr(pair[y])) if len(pair) >= 3 else float("nan")
    if math.isnan(coef):
        raise ValueError(f"track_corr({calc_id!r}): {x!r} and {y!r} do not vary over enough rows for a correlation")
    check = f"SELECT corr({sql_x}, {sql_y}) FROM {qi(table.view)}"
    codes = sorted({*column_facts(view, x).sentinels, *column_facts(view, y).sentinels})
    formula = f"df[{x!r}].corr(df[{y!r}])  # Pearson" + _codes_note(codes)
    text = description or f"Pearson correlation of {x} and {y}"
    basis = catalog_basis("pearson", [x, y], [column_facts(view, x), column_facts(view, y)])
    return track_value(calc_id, coef, text, formula, table.view, [x, y], importance, check, None, 2, basis=basis)
