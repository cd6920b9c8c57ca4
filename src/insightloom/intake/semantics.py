"""Column semantics: what a column means and how it may be aggregated, decided once at intake for every model.

A role says what kind of column it is; the semantics say what an analyst may do with it. A year, a rank or a zip
code is numeric but never summed (``aggregation: none``); a price, a percentage, a score, a running total or a survey
weight is averaged, never summed (``mean``); only amounts and counts are summed. The same rules also rank the
headline measures, pair rates with their parts (CTR = clicks / impressions) and pick the time axis, so a hosted LLM
reading ``cache/profile.json`` and the offline model make the same decisions.

Every rule is a small named function over :class:`ColumnFacts`, which is built either from the typed column at
intake (:func:`facts_from_series`) or from an older profile entry (:func:`facts_from_profile`), so profiles written
before these keys existed get the same answers (minus the rules that need every value).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from insightloom.analysis import time_logic
from insightloom.analysis.ids import slug_map
from insightloom.intake.headline_context import context_points
from insightloom.intake.roles import CATEGORY_MAX_DISTINCT, distinct_count, field_name, normalize_name, present_values

logger = logging.getLogger(__name__)

AGGREGATIONS = ("sum", "mean", "none")
SEMANTICS = (
    "year", "period", "rank", "code", "index", "cumulative", "weight", "binary_outcome", "currency", "percent",
    "coordinate", "duration", "cohort_date", "time_step",
)  # fmt: skip
CURRENCIES = ("USD", "KRW", "EUR", "JPY", "GBP", "CNY")
#: Semantics that are never aggregated at all (labels that happen to be numbers).
NOT_AGGREGATED = ("year", "period", "rank", "code", "index", "time_step")
#: Semantics that may be averaged but never summed.
AVERAGED = ("cumulative", "weight", "coordinate", "percent", "binary_outcome")
#: Semantics that never lead a report.
NEVER_HEADLINE = (
    "year", "period", "rank", "code", "index", "coordinate", "weight", "percent", "cohort_date", "time_step",
)  # fmt: skip
YEAR_MIN, YEAR_MAX = 1800, 2100
#: Under a year name, whole numbers from here on are years too (``YEAR`` 1700..2008 of a sunspot series).
_NAMED_YEAR_MIN = 1500
#: Fewest distinct steps for a time-step column to be a trend axis.
_MIN_TIME_STEPS = 4
_MAX_CODE_DISTINCT = 24
_MIN_TWO_DIGIT_YEARS = 5
#: Below this, small integers under a year name are a year index or a school year (``year`` 1..15), kept as codes.
_TWO_DIGIT_YEAR_MIN = 10
_CUMULATIVE_RISING_SHARE = 0.9
_MAX_PART_COLUMNS = 30
_PART_SAMPLE_ROWS = 5000


@dataclass(frozen=True)
class ColumnFacts:
    """What the rules may look at: the name, role and a few facts about the values (None = unknown)."""

    name: str
    role: str
    numeric: bool = False
    integer: bool = False
    description: str = ""
    unit: str | None = None
    rows: int = 0
    distinct: int = 0
    low: float | None = None
    high: float | None = None
    mean: float | None = None
    #: The distinct values as text, when there are at most two.
    pair: tuple[str, ...] = ()
    #: Integers 1..n (or 0..n-1) in row order, without gaps or blanks.
    consecutive: bool | None = None
    #: Share of row-to-row steps that do not go down.
    rising_share: float | None = None
    #: The text values look like periods (``2024-01``, ``2024-Q1``).
    period_values: bool = False
    #: Integers that all read as clock times ``HHMM`` (0..2400, minutes below 60), with more than a day's hours.
    clock_values: bool = False

    @property
    def norm(self) -> str:
        """The normalised last header part (``Group / Total Score`` -> ``total score``)."""
        return normalize_name(field_name(self.name))


@dataclass(frozen=True)
class ColumnSemantics:
    """The profile keys decided here for one column."""

    role: str
    aggregation: str
    semantic: str | None = None
    unit: str | None = None
    unit_scale: int = 1
    positive_value: Any = None


# ----------------------------------------------------------------------------------------------- building facts

_PERIOD_VALUE_RE = re.compile(r"^\d{4}\s?[-/.]\s?(0?[1-9]|1[0-2])$|^\d{4}\s?-?\s?[qQ][1-4]$|^[qQ][1-4]\s?\d{4}$")


def _all_periods(present: pd.Series) -> bool:
    """Whether every value reads as a period ("2024-03", "2024 Q1"): each distinct value once, a few first, so
    that a column of free text is told apart after a thousand values, not a million."""
    distinct = pd.Series(present.unique()).astype(str)
    head = distinct.head(1000)
    return bool(head.map(lambda v: _PERIOD_VALUE_RE.match(v) is not None).all()) and bool(
        distinct.iloc[len(head) :].map(lambda v: _PERIOD_VALUE_RE.match(v) is not None).all()
    )


def facts_from_series(
    name: str, series: pd.Series, role: str, *, unit: str | None = None, description: str | None = None
) -> ColumnFacts:
    """Facts from the typed column at intake (every value is seen)."""
    present = present_values(series)
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    integer = numeric and bool(len(present)) and (pd.api.types.is_integer_dtype(series) or _whole(present))
    low = float(present.min()) if numeric and len(present) else None
    high = float(present.max()) if numeric and len(present) else None
    mean = float(present.astype("float64").mean()) if numeric and len(present) else None
    distinct = distinct_count(present)
    pair = tuple(sorted(str(v).strip() for v in present.unique())) if distinct <= 2 else ()
    text = not numeric and not pd.api.types.is_datetime64_any_dtype(series) and not pd.api.types.is_bool_dtype(series)
    return ColumnFacts(
        name=name,
        role=role,
        numeric=numeric,
        integer=integer,
        description=description or "",
        unit=unit,
        rows=len(series),
        distinct=distinct,
        low=low,
        high=high,
        mean=mean,
        pair=pair,
        consecutive=_consecutive(series) if integer else None,
        rising_share=_rising_share(present) if numeric else None,
        period_values=text and bool(len(present)) and _all_periods(present),
        clock_values=integer and distinct > _MAX_CODE_DISTINCT and _clock_values(present),
    )


def _whole(present: pd.Series) -> bool:
    return bool((present.astype("float64") % 1 == 0).all())


def _clock_values(present: pd.Series) -> bool:
    """Every value is a clock time written as ``HHMM`` (``517``, ``2359``): hours 0..24, minutes 0..59."""
    values = present.astype("int64")
    return bool(((values >= 0) & (values <= 2400) & (values % 100 < 60)).all())


def _consecutive(series: pd.Series) -> bool:
    """1..n or 0..n-1 in row order, no blanks: a row number."""
    if series.isna().any() or len(series) < 3:
        return False
    values = series.astype("int64").to_numpy()
    start = int(values[0])
    return start in (0, 1) and bool((values == range(start, start + len(values))).all())


def _rising_share(present: pd.Series) -> float | None:
    steps = present.astype("float64").diff().dropna()
    return float((steps >= 0).mean()) if len(steps) else None


def facts_from_profile(col: dict[str, Any], rows: int) -> ColumnFacts:
    """Facts from a profile entry (an older profile): ranges and counts only, row order unknown."""
    dtype = str(col.get("dtype", ""))
    numeric = "int" in dtype or "float" in dtype
    low, high = _number(col.get("min")), _number(col.get("max"))
    integer = "int" in dtype or (numeric and low is not None and high is not None and low % 1 == 0 and high % 1 == 0)
    distinct = int(col.get("distinct") or 0)
    values = [tv.get("value") for tv in col.get("top_values") or []] or list(col.get("samples") or [])
    pair = tuple(sorted(str(v).strip() for v in values)) if distinct == 2 and len(values) == 2 else ()
    consecutive = None
    if integer and low in (0.0, 1.0) and high is not None and distinct == rows and not col.get("missing"):
        consecutive = high - low + 1 == rows  # a permutation of 1..n at least; the order is not in the profile
    samples = [str(s) for s in col.get("samples") or []]
    return ColumnFacts(
        name=str(col.get("name", "")),
        role=str(col.get("role", "")),
        numeric=numeric,
        integer=integer,
        description=str(col.get("description") or ""),
        unit=col.get("unit"),
        rows=rows,
        distinct=distinct,
        low=low,
        high=high,
        mean=_number(col.get("mean")),
        pair=pair,
        consecutive=consecutive,
        period_values=not numeric and bool(samples) and all(_PERIOD_VALUE_RE.match(s) for s in samples),
    )


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


# ------------------------------------------------------------------------------------------------- name rules

_YEAR_NAME_RE = re.compile(r"(^| )(year|years|yr|yrs|yyyy|fy|fiscal year|season year)( |$)|연도|년도|^년$|회계연도")
_TIME_NAME_RE = re.compile(r"(^| )(time|period|date)( |$)|시점|기준년")
_CLOCK_NAME_RE = re.compile(r"(^| )(time|hhmm|clock)( |$)|시각")
_NUMERIC_DATE_NAME_RE = re.compile(r"(^| )(date|time|period)( |$)")
_TIME_STEP_NAME_RE = re.compile(r"^(time|t|trend|period|step|time step|time index|wave|tick)$|^시점$")
#: ``years_of_service``, ``years experience``: a length of time, not a calendar code.
_YEARS_COUNT_RE = re.compile(r"(^| )(years|yrs)( |$)")
_CALENDAR_CODE_RE = re.compile(
    r"(^| )(hour|hr|weekday|wday|dow|day of week|month|mnth|mon|season|quarter|qtr|week|day|dom|minute)( |$)"
    r"|요일|분기|^월$|^일$|시간대|계절|^시$"
)
_RANK_NAME_RE = re.compile(r"(^| )(rank|ranks|ranking|rnk|position|percentile|place|seed)( |$)|순위|등수|석차|백분위")
_CODE_NAME_RE = re.compile(
    r"(^| )(id|ids|code|codes|zip|zipcode|postal|postcode|fips|isbn|sku|no|name)( |$)|number(?! of)|코드|번호|우편|식별"
)
_CODE_WORD_RE = re.compile(
    r"(class|type|categor[a-z]*|level|tier|status|kind|flag|direction|cluster|zone|situation|weathersit)( |$)"
    r"|(^| )(dir|sit|grade|group|segment)( |$)|등급|유형|구분|분류"
)
_INDEX_NAME_RE = re.compile(r"^(index|idx|row|rownames|row id|row number|instant|unnamed 0|unnamed|)$|^(순번|연번)$")
_CUMULATIVE_NAME_RE = re.compile(r"(^| )(cumulative|cum|cumul|running|to date|ytd|mtd|accumulated)( |$)|누적|누계")
_TOTAL_PREFIX_RE = re.compile(r"^total ")
_WEIGHT_NAME_RE = re.compile(
    r"(^| )(weight|weights|wt|wgt|wts|pweight|perwt|hhwt|finalwgt|wgtp|pwgtp|sampling weight|survey weight)( |$)"
    r"|가중치"
)
_AMBIGUOUS_WEIGHT_RE = re.compile(r"weight|wt|wgt")
_NORMALISED_WEIGHT = (0.5, 2.0)
_EXPANSION_MIN = 10_000
_PHYSICAL_WEIGHT_RE = re.compile(r"(^| )(kg|kgs|lb|lbs|g|grams?|pounds?|tons?|oz)( |$)|무게|중량|체중")
_COORDINATE_NAME_RE = re.compile(
    r"^(x|y|z|lat|latitude|lon|long|lng|longitude|coord x|coord y|x coord|y coord|easting|northing)$"
    r"|(^| )(latitude|longitude|lat|lng|lon)( |$)|위도|경도|좌표"
)
_DURATION_NAME_RE = re.compile(
    r"(^| )(duration|elapsed|seconds|secs|sec|minutes|mins|hours|hrs|ms|milliseconds|runtime)( |$)"
    r"|기간|소요|시간\s*\(\s*(초|분)\s*\)|\(\s*(초|분|시간)\s*\)"
)
_COHORT_NAME_RE = re.compile(
    r"(^| )(hire|hired|hiring|birth|born|dob|join|joined|joining|signup|sign up|registration|enrol|enroll|"
    r"enrolled|enrollment|onboarding|founded|incorporation)( |$)|입사|가입|생년|생일|등록일|설립|입학"
)
_MEAN_NAME_RE = re.compile(
    r"(^| )(price|prices|unit price|fare|fares|per|capita|percap|avg|average|mean|median|score|scores|rating|"
    r"ratings|rated|stars|star|grade|age|temperature|temp|atemp|humidity|hum|windspeed|speed|density|expectancy|"
    r"exp|bmi|height|length|width|depth|pressure|salary|salaries|wage|wages|income|index|ratio|margin|yield|"
    r"elevation|altitude)( |$)"
    r"|점수|총점|평균|나이|가격|단가|평점|별점|기온|온도|습도|급여|연봉|임금|소득|1인당|인당|지수"
)
_RATING_NAME_RE = re.compile(r"(^| )(stars|star|rating|ratings|rated)( |$)|평점|별점")
_MONEY_NAME_RE = re.compile(
    r"price|fare|salary|income|wage|revenue|sales|amount|cost|spend|profit|매출|금액|판매액|가격|단가|급여|소득|연봉",
    re.I,
)
_PERCENT_NAME_RE = re.compile(r"%|(^| )(percent|percentage|pct|perc)( |$)|퍼센트|백분율")
_BINARY_PAIRS = (
    ("0", "1"), ("false", "true"), ("f", "t"), ("n", "y"), ("no", "yes"), ("fail", "pass"), ("failed", "passed"),
    ("died", "survived"), ("dead", "survived"), ("아니오", "예"), ("아니요", "예"), ("불합격", "합격"),
    ("성공", "실패"), ("무", "유"), ("absent", "present"), ("negative", "positive"), ("음성", "양성"),
)  # fmt: skip
_POSITIVE = (
    "1", "true", "t", "y", "yes", "pass", "passed", "survived", "예", "합격", "성공", "유",
    "present", "positive", "양성",
)  # fmt: skip


def is_year_name(name: str) -> bool:
    """``year``, ``yr``, ``fiscal_year``, ``연도``, ``년도``."""
    return bool(_YEAR_NAME_RE.search(normalize_name(field_name(name))))


def years_in_values(facts: ColumnFacts, earliest: float = YEAR_MIN) -> bool:
    """Integers that all lie within ``earliest``..2100 (1800 by default, four digits): values that read as years."""
    return (
        facts.numeric
        and facts.integer
        and facts.low is not None
        and facts.high is not None
        and facts.low >= earliest
        and facts.high <= YEAR_MAX
    )


def is_year(facts: ColumnFacts) -> bool:
    """A year: 4-digit integers in 1800..2100 under a year-ish or time-ish name (``year``, ``TIME``, ``연도``).

    Also the row names of an exported time series (``rownames`` 1951, 1956, ... one per row) and two-digit years
    under a bare ``year``/``yr`` name (``63`` .. ``92``, at least five of them).
    """
    if years_in_values(facts):
        named = is_year_name(facts.name) or bool(_TIME_NAME_RE.search(facts.norm))
        return named or (bool(_INDEX_NAME_RE.match(facts.norm)) and facts.distinct == facts.rows >= 3)
    return _early_years(facts) or _two_digit_years(facts)


def _early_years(facts: ColumnFacts) -> bool:
    """Whole numbers from 1500 on under a year name (``YEAR`` 1700..2008): years before the 1800 of unnamed ones."""
    return is_year_name(facts.name) and years_in_values(facts, _NAMED_YEAR_MIN)


def _two_digit_years(facts: ColumnFacts) -> bool:
    return (
        facts.norm in ("year", "yr")
        and facts.numeric
        and facts.integer
        and facts.low is not None
        and facts.high is not None
        and facts.low >= _TWO_DIGIT_YEAR_MIN
        and facts.high <= 99
        and facts.distinct >= _MIN_TWO_DIGIT_YEARS
    )


def is_time_step(facts: ColumnFacts) -> bool:
    """Whole-number time steps with no calendar under a time name (``time`` 1..200 of an exported series, ``trend``
    1..35 months of a price panel, ``TIME`` 1..25): every step from 0 or 1 to the last is present, at least four.

    A trend runs along them (``time_axis.kind: index``); they are never summed, averaged or a breakdown.
    """
    return (
        facts.numeric
        and facts.integer
        and facts.low in (0.0, 1.0)
        and facts.high is not None
        and facts.distinct >= _MIN_TIME_STEPS
        and facts.high - facts.low + 1 == facts.distinct
        and bool(_TIME_STEP_NAME_RE.match(facts.norm))
    )


def is_clock_time(facts: ColumnFacts) -> bool:
    """Clock times written as ``HHMM`` integers under a time name (``dep_time`` 517, ``sched_arr_time`` 819)."""
    return facts.clock_values and bool(_CLOCK_NAME_RE.search(facts.norm))


def is_numeric_date(facts: ColumnFacts) -> bool:
    """A date stored as a decimal year (``date`` 2000.0, 2000.083 ...): a point in time, never aggregated."""
    return (
        facts.numeric
        and not facts.integer
        and bool(_NUMERIC_DATE_NAME_RE.search(facts.norm))
        and facts.low is not None
        and facts.high is not None
        and facts.low >= YEAR_MIN
        and facts.high <= YEAR_MAX
    )


def is_calendar_code(facts: ColumnFacts) -> bool:
    """Hour 0-23, weekday 1-7, month 1-12, season or a year-ish name holding small integers (``yr`` 0/1): a code."""
    if not (facts.numeric and facts.integer) or facts.high is None or facts.low is None:
        return False
    if _YEARS_COUNT_RE.search(facts.norm):
        return False
    calendar = bool(_CALENDAR_CODE_RE.search(facts.norm)) or (is_year_name(facts.name) and not years_in_values(facts))
    return calendar and facts.low >= 0 and facts.high <= 60


def is_rank(facts: ColumnFacts) -> bool:
    """``Rank``, ``SizeRank``, ``percentile``, ``순위``: an ordering, never summed."""
    norm = facts.norm.replace("rank", " rank ").strip() if "rank" in facts.norm else facts.norm
    return facts.numeric and bool(_RANK_NAME_RE.search(" ".join(norm.split())))


def is_code_name(facts: ColumnFacts) -> bool:
    """Ids, codes, zip codes and numeric "names" (``RegionName`` holding zip codes): labels, not amounts."""
    if facts.numeric:
        return bool(_CODE_NAME_RE.search(facts.norm)) or facts.role == "identifier"
    return bool(re.search(r"(^| )(id|ids|code|codes|zip|postal|no)( |$)|코드|번호|우편", facts.norm))


def is_small_code(facts: ColumnFacts) -> bool:
    """Few small integers under a class/type/status/category name (``Pclass``, ``weathersit``, storm category)."""
    return (
        facts.numeric
        and facts.integer
        and 0 < facts.distinct <= _MAX_CODE_DISTINCT
        and facts.low is not None
        and facts.low >= 0
        and bool(_CODE_WORD_RE.search(facts.norm))
    )


def is_row_index(facts: ColumnFacts) -> bool:
    """Rows numbered 1..n (or 0..n-1), or an ``index``/``instant`` column of unique integers (not a ``1970`` column)."""
    if year_of_header(facts.name) is not None:
        return False
    if facts.consecutive:
        return True
    named = bool(_INDEX_NAME_RE.match(facts.norm))
    return named and facts.integer and facts.distinct == facts.rows and facts.rows > 0


def binary_positive(facts: ColumnFacts) -> str | None:
    """The "yes" value of a two-valued outcome (0/1, yes/no, survived/died), else None."""
    if len(facts.pair) != 2:
        return None
    pair = tuple(sorted(_plain(v) for v in facts.pair))
    for known in _BINARY_PAIRS:
        if pair == tuple(sorted(known)):
            return next(v for v in facts.pair if _plain(v) in _POSITIVE)
    return None


def _plain(value: str) -> str:
    """``1.0`` -> ``1``, ``Yes`` -> ``yes``: cells compared as lower-case text."""
    value = value.lower()
    return value[:-2] if value.endswith(".0") else value


def is_coordinate(facts: ColumnFacts) -> bool:
    """Latitude/longitude (위도/경도) and bare ``x``/``y``/``z`` numbers."""
    return facts.numeric and bool(_COORDINATE_NAME_RE.search(facts.norm))


def is_cumulative(facts: ColumnFacts) -> bool:
    """A running total: named cumulative/ytd/누적, or ``total_...`` that (almost) never goes down row to row."""
    if not facts.numeric:
        return False
    text = f"{facts.norm} {facts.description.lower()}"
    if _CUMULATIVE_NAME_RE.search(text) or "running total" in text:
        return True
    rising = facts.rising_share is not None and facts.rising_share >= _CUMULATIVE_RISING_SHARE
    return bool(_TOTAL_PREFIX_RE.search(facts.norm)) and rising and not is_mean_only(facts)


def is_weight(facts: ColumnFacts) -> bool:
    """A survey/sample weight (``perwt``, ``가중치``, ``weight`` near 1 on average), not a body weight in kg or lb.

    A bare ``weight``, ``wt`` or ``wgt`` is far more often a physical weight (a chick's grams, a car's pounds,
    ``mtcars``' thousands of pounds): it is a survey weight only when its values look like one, normalised to a
    mean near 1 or expanding each row to at least ``_EXPANSION_MIN`` people.
    """
    if not facts.numeric or not _WEIGHT_NAME_RE.search(facts.norm) or _PHYSICAL_WEIGHT_RE.search(facts.norm):
        return False
    if not _AMBIGUOUS_WEIGHT_RE.fullmatch(facts.norm) or facts.mean is None:
        return True
    normalised = _NORMALISED_WEIGHT[0] <= facts.mean <= _NORMALISED_WEIGHT[1]
    return normalised or (facts.low is not None and facts.low >= _EXPANSION_MIN)


def is_duration(facts: ColumnFacts) -> bool:
    """``duration``, ``elapsed``, ``*_seconds``, ``기간``, ``시간(초)``."""
    return facts.numeric and bool(_DURATION_NAME_RE.search(f"{facts.norm} {field_name(facts.name)}"))


def is_cohort_date(facts: ColumnFacts) -> bool:
    """A date that starts a cohort (hire, birth, join, signup, 입사일, 가입일): never a trend axis."""
    return facts.role in ("date", "pii") and bool(_COHORT_NAME_RE.search(facts.norm))


def is_mean_only(facts: ColumnFacts) -> bool:
    """Prices, unit values, per-capita values, scores, ratings, ages, temperatures, salaries: averaged, not summed.

    Also a one-word compound that starts or ends like an average (``percwhite``, ``popdensity``, ``gdppercap``) and
    a column whose definition says it is an average, a median, a rate, a ratio, a percentage or per capita.
    """
    whole = normalize_name(facts.name)  # ``Detailed Skill Scores / Coding``: the group says it is a score
    if _MEAN_NAME_RE.search(whole) or facts.role == "rate":
        return True
    if any(_MEAN_COMPOUND_RE.search(token) for token in whole.split()):
        return True
    return bool(facts.description and _MEAN_DESCRIPTION_RE.search(facts.description))


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Extensive flow quantities (money amounts, counts of events or things): the only values a SUM adds up to meaning.
_ADDITIVE_WORDS = _words(
    """amount amounts amt revenue revenues sales sale sold turnover gmv cost costs spend spending spent expense
    expenses profit profits payment payments paid budget count counts cnt num qty quantity quantities units volume
    orders clicks impressions views visits visitors sessions conversions installs downloads signups registrations
    purchases transactions trips rides riders rentals passengers customers users members subscribers subs
    subscriptions citations pages students teachers employees staff headcount households population pop births deaths
    cases controls votes goals wins losses runs hits homeruns points freq frequency total sum precip precipitation
    rainfall snowfall kill kills killed injuries injured fatalities accidents crimes arrests incidents attendance items
    pieces calls tickets shipments bookings listings inventory stock stocks balance assets marketvalue"""
)
# Levels observed at a moment (a population, an inventory): summed across entities, never across periods.
_STOCK_WORDS = _words(
    """population pop inventory listings stock stocks balance assets marketvalue employees staff headcount members
    subscribers households"""
)
# One-word compounds: ``poptotal``, ``totalsales``, ``numorders``; ``ncases`` (n + a counted thing); ``adcost``.
_ADDITIVE_PREFIXES = ("pop", "total", "num")
_ADDITIVE_SUFFIXES = ("count", "counts", "cnt", "total", "sales", "cost", "amount", "revenue", "orders", "clicks")
_STOCK_PREFIXES = ("pop",)
_ADDITIVE_KO_RE = re.compile(
    r"매출|금액|판매액|판매량|비용|광고비|수량|건수|횟수|노출|클릭|전환|주문|방문|예산|지출|수익|이익|인원|합계|^총|"
    r"인구|재고|잔액|잔고|(?<![점지계함변정분배소호])수$"
)
_STOCK_KO_RE = re.compile(r"인구|재고|잔액|잔고")
_COUNT_UNITS = _words(
    "count counts units unit pcs items item ea times orders people persons 개 건 명 회 개수 건수 회수"
)
_ADDITIVE_DESCRIPTION_RE = re.compile(
    r"\b(number of|count of|total|sum of|quantity|amount of|how many)\b|횟수|건수|수량|금액|매출|합계|비용", re.I
)
_MEAN_COMPOUND_RE = re.compile(r"^(perc|pct|avg|mean)[a-z]+$|^[a-z]+(density|rate|ratio|pct|percap|capita|share)$")
_MEAN_DESCRIPTION_RE = re.compile(
    r"\b(average|mean|median|per capita|per person|per head|percent|percentage|rate|ratio|index|proportion)\b"
    r"|평균|1인당|인당|비율|지수|단가",
    re.I,
)
# ``logwage``, ``log_income``, ``lsalary``: a log of another measure (only when the values are small, like logs).
_LOG_BASES = _ADDITIVE_WORDS | {"wage", "wages", "salary", "income", "price", "rent", "value", "gdp", "earnings"}
_LOG_MAX = 50.0


def _tokens(facts: ColumnFacts) -> list[str]:
    return facts.norm.split()


def _additive_token(token: str) -> bool:
    """A word (or one-word compound) naming an amount or a count: ``sales``, ``poptotal``, ``ncases``, ``adcost``."""
    if token in _ADDITIVE_WORDS:
        return True
    if token.startswith(_ADDITIVE_PREFIXES) and not token.startswith("popul"):  # ``popularity`` is a score
        return True
    if token.endswith(_ADDITIVE_SUFFIXES) and token != "account":
        return True
    return token.startswith("n") and token[1:] in _ADDITIVE_WORDS and len(token) > 4


def is_log_value(facts: ColumnFacts) -> bool:
    """A logarithm of a measure (``logwage``, ``log_income``, ``lsalary``, ``lcost``): averaged, never summed."""
    if not facts.numeric or facts.high is None or facts.low is None:
        return False
    if abs(facts.high) > _LOG_MAX or abs(facts.low) > _LOG_MAX:
        return False
    tokens = _tokens(facts)
    if not tokens:
        return False
    first = tokens[0]
    if first in ("log", "ln", "log10", "log2") and len(tokens) > 1:
        return True
    return any(first.startswith(p) and first[len(p) :] in _LOG_BASES for p in ("log", "ln", "l"))


def is_additive_name(facts: ColumnFacts) -> bool:
    """A name, unit or definition that says the column is an extensive flow: an amount or a count of things.

    English words (``sales``, ``amount``, ``cost``, ``qty``, ``clicks``, ``orders``, ``n``, ``total`` ...), Korean
    (``매출``, ``금액``, ``비용``, ``광고비``, ``수량``, ``건수``, ``노출수`` ...), a currency or count unit, or a
    definition saying "number of", "total", "quantity".
    """
    if facts.unit in CURRENCIES or (facts.unit or "").strip().lower() in _COUNT_UNITS:
        return True
    if facts.norm == "n" or any(_additive_token(t) for t in _tokens(facts)) or _ADDITIVE_KO_RE.search(facts.norm):
        return True
    return bool(facts.description and _ADDITIVE_DESCRIPTION_RE.search(facts.description))


def is_stock_name(facts: ColumnFacts) -> bool:
    """A level observed at a moment (population, inventory, listings, balance, assets, 인구, 재고, 잔액)."""
    tokens = _tokens(facts)
    stock = any(t in _STOCK_WORDS or (t.startswith(_STOCK_PREFIXES) and not t.startswith("popul")) for t in tokens)
    return stock or bool(_STOCK_KO_RE.search(facts.norm))


# ------------------------------------------------------------------------------------------------- units

_NAME_UNITS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\busd\b|_usd\b|\busd_|\$|\bdollars?\b|달러", re.I), "USD"),
    (re.compile(r"\bkrw\b|_krw\b|₩|(?<![가-힣])원(?![가-힣])|천원|백만원|억원|\bwon\b", re.I), "KRW"),
    (re.compile(r"\beur\b|_eur\b|€|\beuros?\b|유로", re.I), "EUR"),
    (re.compile(r"\bgbp\b|£|\bpounds? sterling\b", re.I), "GBP"),
    (re.compile(r"\bjpy\b|¥|\byen\b", re.I), "JPY"),
    (re.compile(r"%|\bpercent(age)?\b|\bpct\b|퍼센트|백분율", re.I), "%"),
)
_SCALES: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"thousands?|\bthou\b|\$000|\(000s?\)|\b000s\b|\bin k\b|천원|천 원|\(천", re.I), 1000),
    (re.compile(r"millions?|\bmn\b|\bmm\b|백만", re.I), 1_000_000),
    (re.compile(r"billions?|\bbn\b|십억", re.I), 1_000_000_000),
    (re.compile(r"억원|억 원|\(억", re.I), 100_000_000),
)
_DURATION_UNITS = (("ms", r"\bms\b|millisec"), ("s", r"\bsec|seconds|초"), ("min", r"\bmin|minutes|분"),
                   ("h", r"\bhours?\b|\bhrs\b|시간"), ("days", r"\bdays\b|일수"))  # fmt: skip


def unit_from_text(text: str) -> str | None:
    """A currency code or ``%`` written in a column name or definition (``_usd``, ``(원)``, ``pct``), else None."""
    spaced = re.sub(r"[_\-./]+", " ", text)
    for pattern, unit in _NAME_UNITS:
        if pattern.search(spaced) or pattern.search(text):
            return unit
    return None


def unit_scale_from_text(text: str) -> int:
    """1000 for ``salary_in_thousands_of_dollars`` or ``(천원)``, a million for ``millions`` ...; else 1."""
    spaced = re.sub(r"[_\-./]+", " ", text)
    for pattern, scale in _SCALES:
        if pattern.search(spaced):
            return scale
    return 1


def duration_unit(name: str) -> str | None:
    """``s``, ``min``, ``h``, ``ms`` or ``days`` when a duration's name says which."""
    spaced = re.sub(r"[_\-./]+", " ", name.lower())
    return next((unit for unit, pattern in _DURATION_UNITS if re.search(pattern, spaced)), None)


# ------------------------------------------------------------------------------------------- one column's verdict


def semantic_of(facts: ColumnFacts) -> str | None:
    """The column's ``semantic`` (see ``SEMANTICS``), first matching rule wins; None when nothing applies."""
    if facts.role == "date" or (facts.role == "pii" and not facts.numeric):
        return "cohort_date" if is_cohort_date(facts) else None
    if not facts.numeric:
        return _text_semantic(facts)
    return _numeric_semantic(facts)


def _text_semantic(facts: ColumnFacts) -> str | None:
    if facts.period_values:
        return "period"
    if is_code_name(facts):
        return "code"
    if binary_positive(facts) is not None:
        return "binary_outcome"
    return None


def _numeric_semantic(facts: ColumnFacts) -> str | None:
    checks: tuple[tuple[str, Any], ...] = (
        ("year", is_year),
        ("time_step", is_time_step),
        ("rank", is_rank),
        ("code", is_calendar_code),
        ("code", is_clock_time),
        ("period", is_numeric_date),
        ("index", is_row_index),
        ("code", is_code_name),
        ("code", is_small_code),
        ("binary_outcome", lambda f: binary_positive(f) is not None),
        ("coordinate", is_coordinate),
        ("cumulative", is_cumulative),
        ("weight", is_weight),
    )
    for semantic, rule in checks:
        if rule(facts):
            return semantic
    return None


def aggregation_of(facts: ColumnFacts, semantic: str | None, role: str) -> str:
    """``sum`` only for amounts and counts; ``mean`` for values that average; ``none`` for labels.

    The default of a measure is ``mean``: mpg, horsepower, a delay, a mass, a population observed per year or a
    year of education is averaged; ``sum`` needs an additive signal (:func:`is_additive_name`).
    """
    if semantic in NOT_AGGREGATED or semantic == "cohort_date":
        return "none"
    if semantic == "binary_outcome":
        return "mean"
    if role not in ("measure", "rate"):
        return "none"
    if semantic in AVERAGED or is_mean_only(facts) or is_log_value(facts) or _YEARS_COUNT_RE.search(facts.norm):
        return "mean"
    # Only an extensive flow adds up: a measurement, a level or a value without an additive name is averaged.
    # A duration (``trip minutes``) adds up to the time spent.
    return "sum" if semantic == "duration" or is_duration(facts) or is_additive_name(facts) else "mean"


def role_for(facts: ColumnFacts, semantic: str | None) -> str:
    """The role after the semantics: years, decimal years and small codes are categories, ranks and row numbers
    identifiers.

    No consumer that reads only ``role`` will then sum them.
    """
    if facts.role in ("pii", "date", "text") or semantic is None:
        return facts.role
    if semantic in ("year", "time_step") or (semantic == "period" and facts.numeric):
        return "category"  # a point in time (1990.083, step 7): the trend's axis, never an id nor a sum
    if semantic in ("rank", "index"):
        return "identifier"
    if semantic in ("code", "period") and facts.numeric and facts.role != "identifier":
        return "category" if 0 < facts.distinct <= CATEGORY_MAX_DISTINCT else "identifier"
    return facts.role


def unit_of(facts: ColumnFacts, semantic: str | None) -> tuple[str | None, int]:
    """The unit (an explicit unit wins, then one written in the name or the definition) and its scale."""
    text = f"{facts.name} {facts.description}"
    scale = unit_scale_from_text(text) if facts.numeric else 1
    if semantic in NOT_AGGREGATED or not facts.numeric:
        return None, 1
    unit = facts.unit or unit_from_text(facts.name) or unit_from_text(facts.description)
    if unit is None and semantic is None and is_duration(facts):
        unit = duration_unit(facts.name)
    return unit, scale if unit else 1


def column_semantics(facts: ColumnFacts) -> ColumnSemantics:
    """Every per-column key for one column."""
    semantic = semantic_of(facts)
    unit, scale = unit_of(facts, semantic)
    if semantic is None and facts.numeric:
        semantic = "currency" if unit in CURRENCIES else "percent" if unit == "%" else None
        semantic = semantic or ("duration" if is_duration(facts) else None)
    role = role_for(facts, semantic)
    positive = binary_positive(facts) if semantic == "binary_outcome" and not facts.numeric else None
    return ColumnSemantics(
        role=role,
        aggregation=aggregation_of(facts, semantic, role),
        semantic=semantic,
        unit=unit,
        unit_scale=scale,
        positive_value=positive,
    )


def table_column_semantics(facts: list[ColumnFacts], *, table_name: str = "") -> list[ColumnSemantics]:
    """Semantics of every column of one table, where the table itself adds meaning.

    A lone column of year-like values counts as the year. In a table with a time axis (or when its values rise row
    after row, a series in time order), a level (population, inventory, listings, balance) is averaged, not summed
    across periods. The file name (``table_name``) speaks for
    measures that have no name of their own: a ``percent-...`` file holds percentages, and the year columns of a
    wide table are summed only when the file names a count and they hold whole numbers (``nkill``), else averaged.
    """
    result = _with_lone_year(facts, [column_semantics(f) for f in facts])
    context = _TableContext(
        timed=any(_is_time_column(f, s) for f, s in zip(facts, result, strict=True)),
        wide=sum(1 for f in facts if f.numeric and year_of_header(f.name) is not None) >= _MIN_WIDE_YEARS,
        name=ColumnFacts(name=Path(table_name).stem if table_name else "", role="measure"),
    )
    return [_in_table(f, s, context) for f, s in zip(facts, result, strict=True)]


def _with_lone_year(facts: list[ColumnFacts], result: list[ColumnSemantics]) -> list[ColumnSemantics]:
    if any(s.semantic == "year" for s in result):
        return result
    lone = [i for i, f in enumerate(facts) if _lone_year_candidate(f, result[i])]
    if len(lone) == 1:
        f = facts[lone[0]]
        result[lone[0]] = ColumnSemantics(role=role_for(f, "year"), aggregation="none", semantic="year")
    return result


@dataclass(frozen=True)
class _TableContext:
    timed: bool
    wide: bool
    #: The file name as facts, so the name rules read it like a column name.
    name: ColumnFacts


def _is_time_column(facts: ColumnFacts, sem: ColumnSemantics) -> bool:
    return sem.semantic in ("year", "period", "time_step") or (facts.role == "date" and sem.semantic != "cohort_date")


def is_percent_table(table_name: str) -> bool:
    """A file whose name says it holds percentages (``percent-bachelors-degrees-women-usa.csv``, ``pct_share``)."""
    return bool(_PERCENT_NAME_RE.search(normalize_name(Path(table_name).stem)))


def _in_table(facts: ColumnFacts, sem: ColumnSemantics, table: _TableContext) -> ColumnSemantics:
    if sem.role not in ("measure", "rate") or sem.semantic is not None or sem.aggregation == "none":
        return sem
    if is_percent_table(table.name.name) and sem.unit is None:
        return replace(sem, semantic="percent", unit="%", aggregation="mean")
    if table.wide and year_of_header(facts.name) is not None:
        # Counts by year (``nkill``: whole numbers) add up; shares of votes (``votes.repub``: 53.2) do not.
        additive = facts.integer and is_additive_name(table.name) and not is_stock_name(table.name)
        return replace(sem, aggregation="sum" if additive else "mean")
    rising = facts.rising_share is not None and facts.rising_share >= _CUMULATIVE_RISING_SHARE
    if sem.aggregation == "sum" and (table.timed or rising) and is_stock_name(facts):
        return replace(sem, aggregation="mean")  # a level per period: its total over time means nothing
    return sem


def _lone_year_candidate(facts: ColumnFacts, sem: ColumnSemantics) -> bool:
    return (
        years_in_values(facts)
        and sem.semantic is None
        and facts.role in ("measure", "category", "identifier")
        and not _MONEY_NAME_RE.search(facts.name)
        and not re.search(r"count|qty|quantity|units|수량|건수", facts.name, re.I)
        and facts.distinct <= 300
    )


# --------------------------------------------------------------------------------------------------- rate pairs

# key -> (label en, label ko, numerator part, denominator part, scale, unit kind)
RATE_KINDS: dict[str, tuple[str, str, str, str, float, str]] = {
    "ctr": ("CTR", "클릭률(CTR)", "clicks", "impressions", 100.0, "%"),
    "conversion_rate": ("conversion rate", "전환율", "conversions", "clicks", 100.0, "%"),
    "roas": ("ROAS", "ROAS", "revenue", "cost", 1.0, "ratio"),
    "cpc": ("CPC", "클릭당 비용(CPC)", "cost", "clicks", 1.0, "cost"),
}
_PART_PATTERNS: dict[str, re.Pattern[str]] = {
    "impressions": re.compile(r"impression|^impr|노출", re.I),
    "clicks": re.compile(r"click|클릭", re.I),
    "conversions": re.compile(r"conversion|^conv|전환", re.I),
    "revenue": re.compile(r"revenue|sales|매출", re.I),
    "cost": re.compile(r"ad.?cost|ad.?spend|spend|cost|광고비|비용", re.I),
}
_RATE_WORD_RE = re.compile(r"rate|ratio|ctr|roas|cvr|percent|pct|%|율|률|비율", re.I)


def _summable(col: dict[str, Any]) -> bool:
    return col.get("role") == "measure" and col.get("aggregation", "sum") == "sum"


def rate_pairs(columns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Well-known rates whose parts are summable measure columns: CTR, conversion rate, ROAS, CPC.

    Each is ``scale * SUM(numerator) / SUM(denominator)``; CPC takes the cost column's unit.
    """
    cols = [c for c in columns if _summable(c)]
    parts: dict[str, str] = {}
    for part, pattern in _PART_PATTERNS.items():
        found = next(
            (
                str(c["name"])
                for c in cols
                if str(c["name"]) not in parts.values()
                and pattern.search(str(c["name"]))
                and not _RATE_WORD_RE.search(str(c["name"]))
            ),
            None,
        )
        if found:
            parts[part] = found
    pairs = []
    for key, (en, ko, num, den, scale, unit_kind) in RATE_KINDS.items():
        if num in parts and den in parts:
            unit: str | None = unit_kind
            if unit_kind == "cost":
                unit = next((c.get("unit") for c in cols if c["name"] == parts["cost"]), None)
            pairs.append({"key": key, "label": en, "label_ko": ko, "numerator": parts[num],
                          "denominator": parts[den], "scale": scale, "unit": unit})  # fmt: skip
    return pairs


# --------------------------------------------------------------------------------------------- headline measures

_MEASURE_HINTS: tuple[tuple[re.Pattern[str], int, str], ...] = (
    (re.compile(r"revenue|sales|amount|(^|[^a-z])rev([^a-z]|$)|매출|금액|판매액", re.I), 40, "money-like name"),
    (re.compile(r"price|fare|salary|income|wage|profit|가격|단가|급여|소득|연봉", re.I), 40, "money-like name"),
    (re.compile(r"cost|spend|비용|광고비", re.I), 30, "cost-like name"),
    (
        re.compile(
            r"(^|[^a-z])(real)?(gdp|gnp|gsp|gni)([^a-z]|$)|gross (domestic|national|state) product|consumption"
            r"|국내총생산|총생산|소비",
            re.I,
        ),
        35,
        "an economy's output or spending",
    ),  # fmt: skip
    (re.compile(r"total|합계|총|(^|[^a-z])cnt([^a-z]|$)", re.I), 25, "a total"),
    (re.compile(r"score(?!d)|점수", re.I), 15, "a score"),  # not ``runs_scored``
    (re.compile(r"qty|quantity|units|수량|clicks?|클릭|conversions?|전환", re.I), 10, "a count"),
)
_OUTCOME_NAME_RE = re.compile(
    r"(^| )(survived|survival|churn|churned|default|defaulted|outcome|target|label|converted|conversion|success|"
    r"passed|pass|died|death|clicked|purchased|approved|fraud|won|win|wins|response|responded|retained|admitted|"
    r"participation|participated)( |$)"
    r"|생존|이탈|합격|성공|전환여부|구매여부"
)
_SUMMARY_RE = re.compile(r"total|overall|avg|average|mean|summary|합계|총|평균|종합", re.I)
#: The other side's figure (``opponents_runs_scored``, ``hits_allowed``): it ranks after the rows' own.
_OPPONENT_RE = re.compile(r"(^| )(opponents?|opp|allowed|against|conceded)( |$)|상대")
#: Tables about schools, students or exams, where the test scores are what is measured (``CASchools``).
_SCHOOL_TABLE_RE = re.compile(
    r"school|student|pupil|exam|class|course|college|universit|education|academ|학교|학생|시험"
)
_TEST_SCORE_RE = re.compile(r"^(read|reading|math|maths|writing|science|literacy|numeracy|test|exam)$|score(?!d)")
_POPULATION_RE = re.compile(r"^(pop|population|pop\d+)$|인구")
_SUBJECT_MIN = 3
_ABBREVIATION_MIN = 5
_GROUP_REPEATS = 2


@dataclass
class _Scored:
    index: int
    name: str
    score: float = 0.0
    reasons: list[str] = field(default_factory=list)

    def add(self, points: float, reason: str | None = None) -> None:
        self.score += points
        if reason and points > 0 and reason not in self.reasons:
            self.reasons.append(reason)


def headline_candidate(col: dict[str, Any], rows: int, wide_years: list[str]) -> bool:
    """A measure that may lead: analysable, varying, not all blank, not a label, position or weight; a two-valued
    text outcome (``survived`` yes/no) leads as its rate."""
    text_outcome = col.get("semantic") == "binary_outcome" and col.get("positive_value") is not None
    return (
        (col.get("role") == "measure" or text_outcome)
        and col.get("semantic") not in NEVER_HEADLINE
        and not (col.get("semantic") is None and _RATE_WORD_RE.search(str(col.get("name", ""))))
        and (col.get("distinct") or 0) > 1
        and (col.get("missing") or 0) < rows
        and col.get("name") not in wide_years
    )


def table_subject(column: str, table_name: str) -> bool:
    """The table is named after the column (``Affairs.csv`` and ``affairs``, ``Wage.csv`` and ``wage``).

    Only the very word: ``flights.csv`` and its ``flight`` number, or ``Salaries.csv`` and ``salary``, do not count
    (a singular of the file's plural is as often the rows' own number as their subject). A file word of five or
    more letters that starts the column is its abbreviation (``Vocab.csv`` and ``vocabulary``).
    """
    col = normalize_name(field_name(column)).replace(" ", "")
    words = normalize_name(re.sub(r"\d+", " ", Path(table_name).stem)).split() if table_name else []
    if len(col) >= _SUBJECT_MIN and col in words:
        return True
    return any(len(word) >= _ABBREVIATION_MIN and col.startswith(word) for word in words)  # ``Vocab``: vocabulary


def _numbered_groups(col: dict[str, Any]) -> bool:
    """Values 1..k, each a group's number (``airline`` 1..6 in ``Airline.csv``), not an amount."""
    low, high, distinct = _number(col.get("min")), _number(col.get("max")), int(col.get("distinct") or 0)
    return low == 1 and high == distinct and "int" in str(col.get("dtype", "int"))


def _context_points(scored: _Scored, col: dict[str, Any], table_name: str) -> None:
    """What the table around the column says: its subject, the other side's figures, a school's test scores."""
    norm = normalize_name(field_name(scored.name))
    if table_subject(scored.name, table_name) and not _numbered_groups(col):
        scored.add(45, "the table is named after it")
    if _OPPONENT_RE.search(norm):
        scored.add(-15)
    if _SCHOOL_TABLE_RE.search(normalize_name(Path(table_name).stem)) and _TEST_SCORE_RE.search(norm):
        scored.add(45, "a test score in a table about schools or students")
    if _POPULATION_RE.search(norm) and col.get("aggregation") != "sum":
        scored.add(-15)  # a population observed over time is the base of per-capita values, not the subject


def _score(scored: _Scored, col: dict[str, Any], rows: int, parts: dict[str, list[str]], table_name: str) -> None:
    name = scored.name
    if _numbered_groups(col) and rows >= _GROUP_REPEATS * int(col.get("distinct") or 0):
        scored.add(-25)  # ``Chick`` 1..50 over 578 rows: a group's number, not an amount
    if col.get("unit") and col.get("semantic") != "duration":
        scored.add(50, f"currency ({col['unit']})" if col["unit"] in CURRENCIES else f"unit {col['unit']}")
    outcome_name = bool(_OUTCOME_NAME_RE.search(normalize_name(name)))
    # A yes/no column the table is named after is what the rows are about (``Kyphosis`` in ``kyphosis.csv``).
    outcome = col.get("semantic") == "binary_outcome" and (outcome_name or table_subject(name, table_name))
    if outcome:
        scored.add(50, "0/1 outcome: its mean is a rate")
    elif outcome_name:
        scored.add(40, "an outcome (what the rows achieved: wins, deaths, conversions)")
    _context_points(scored, col, table_name)
    if _RATING_NAME_RE.search(normalize_name(field_name(name))):
        scored.add(35, "the rating the rows are about")
    if name in parts:
        scored.add(30, "total of " + " + ".join(parts[name]))
    scored.add(10 if _SUMMARY_RE.search(name) else 0, "a summary column")
    last = field_name(name)  # flattened XLSX headers: the meaning sits in the last part
    hint = next(((points, why) for pattern, points, why in _MEASURE_HINTS if pattern.search(last)), None)
    if hint:
        scored.add(*hint)
    scored.add(10.0 * (1.0 - (col.get("missing") or 0) / rows) if rows else 0.0)
    low, high, mean = _number(col.get("min")), _number(col.get("max")), _number(col.get("mean"))
    if low is not None and high is not None:
        scored.add(min(5.0, (high - low) / (abs(mean or 0.0) + 1.0)))
    if (col.get("distinct") or 0) <= 2 and not outcome:
        scored.add(-50)
    if col.get("semantic") == "cumulative":
        scored.add(-20)


#: The count column of a frequency table (``Class, Sex, Survived, Freq``): each row stands for that many cases.
_FREQUENCY_RE = re.compile(r"freq|frequency|n|count|cnt|weight_count", re.I)


def headline_measures(
    columns: list[dict[str, Any]], rows: int, *, parts: dict[str, list[str]] | None = None, table_name: str = ""
) -> list[dict[str, str]]:
    """The measures that may lead a report, best first, each with the reason it ranks where it does.

    Currency and money-like columns first, then 0/1 outcomes, ratings and totals of other columns; never ids,
    codes, ranks, years, coordinates, weights or percentages. ``parts`` maps a total to the columns it adds up;
    ``table_name`` (the file) names the table's subject (``Affairs.csv``: ``affairs``).
    """
    wide = wide_year_columns(columns)
    weighted = any(_FREQUENCY_RE.fullmatch(str(c.get("name", ""))) and c.get("role") == "measure" for c in columns)
    context = context_points([str(c.get("name", "")) for c in columns], table_name)
    ranked = []
    for index, col in enumerate(columns):
        if not headline_candidate(col, rows, wide):
            continue
        if weighted and col.get("role") != "measure":
            continue  # a frequency table: a yes/no column counts its cells, not people; the frequency leads
        scored = _Scored(index, str(col["name"]))
        _score(scored, col, rows, parts or {}, table_name)
        for points, reason in context.get(scored.name, []):
            scored.add(points, reason)
        ranked.append(scored)
    ranked.sort(key=lambda s: (-s.score, s.index))
    return [{"column": s.name, "reason": "; ".join(s.reasons) or "a complete numeric measure"} for s in ranked]


def total_of_parts(frame: pd.DataFrame, names: list[str]) -> dict[str, list[str]]:
    """Columns that equal the row-wise sum of two others (``cnt = casual + registered``), checked on every row."""
    sample = frame[[n for n in names if n in frame.columns][:_MAX_PART_COLUMNS]].head(_PART_SAMPLE_ROWS)
    sample = sample.loc[:, sample.notna().all() & (sample != 0).any()].astype("float64")
    if sample.shape[1] < 3 or len(sample) < 2:
        return {}
    data, cols = sample.to_numpy(), [str(c) for c in sample.columns]
    tolerance = 1e-9 * (abs(data).max() + 1)
    found: dict[str, list[str]] = {}
    for t, total in enumerate(cols):
        for a, part in enumerate(cols):
            if a == t:
                continue
            rest = data[:, t] - data[:, a]  # what the second part must be, row by row
            hits = [b for b in (abs(data - rest[:, None]) <= tolerance).all(axis=0).nonzero()[0] if b not in (a, t)]
            if hits:
                found[total] = [part, cols[int(hits[0])]]
                break
    return found


# ----------------------------------------------------------------------------------------------------- time axis

_WIDE_YEAR_RE = re.compile(r"^[A-Za-z]{0,2}_?(\d{4})$")
_MIN_WIDE_YEARS = 3


def year_of_header(name: str) -> int | None:
    """The year a column header names (``1970``, ``y2001``, ``X1999``, ``yr_2005``), else None."""
    match = _WIDE_YEAR_RE.match(str(name).strip())
    year = int(match.group(1)) if match else None
    return year if year is not None and YEAR_MIN <= year <= YEAR_MAX else None


def wide_year_columns(columns: list[dict[str, Any]]) -> list[str]:
    """Numeric columns whose headers are years, when there are at least three of them (a wide time series)."""
    found = [
        str(c["name"])
        for c in columns
        if c.get("role") in ("measure", "rate") and year_of_header(str(c.get("name", ""))) is not None
    ]
    return found if len(found) >= _MIN_WIDE_YEARS else []


def period_for_span(low: Any, high: Any) -> str:
    """Trend bucket from a date span: days up to ~6 weeks, weeks up to ~6 months, months up to 3 years, then years."""
    try:
        span = (pd.Timestamp(high) - pd.Timestamp(low)).days
    except (TypeError, ValueError):
        return "month"
    if span != span:  # NaT
        return "month"
    return "day" if span <= 45 else "week" if span <= 183 else "month" if span <= 1096 else "year"


def time_axis(columns: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The table's time axis: a (non-cohort) date column, else an integer year column, else a date stored as a
    decimal year (``encoding: decimal_year`` on whole months, ``decimal_year_day`` finer), else wide year columns,
    else whole-number time steps (``kind: index``, ``time`` 1..200)."""
    for col in columns:
        if col.get("role") == "date" and col.get("semantic") != "cohort_date" and col.get("distinct", 2) >= 2:
            return {"kind": "date", "column": col["name"], "period": period_for_span(col.get("min"), col.get("max"))}
    for col in columns:
        if col.get("semantic") == "year" and (col.get("distinct") or 0) >= 2:
            return {"kind": "year", "column": col["name"], "period": "year"}
    for col in columns:
        encoding = time_logic.decimal_year_encoding(col)
        if encoding and (col.get("distinct") or 0) >= 2:
            period = time_logic.decimal_year_period(col.get("min"), col.get("max"), encoding)
            return {"kind": "date", "column": col["name"], "period": period, "encoding": encoding}
    wide = wide_year_columns(columns)
    if wide:
        return {"kind": "wide_years", "column": None, "columns": wide, "period": "year"}
    for col in columns:
        if col.get("semantic") == "time_step":
            return {"kind": time_logic.INDEX, "column": col["name"], "period": time_logic.STEP}
    return None


# ------------------------------------------------------------------------------------------------- whole tables


@dataclass(frozen=True)
class TableSemantics:
    """The per-table keys decided here."""

    rate_pairs: list[dict[str, Any]]
    headline_measures: list[dict[str, str]]
    time_axis: dict[str, Any] | None
    calc_id_stems: dict[str, str]
    #: Averaged columns that turned out to be parts of a summed total (``casual`` of ``cnt = casual + registered``).
    summed_parts: list[str] = field(default_factory=list)


def additive_parts(columns: list[dict[str, Any]], parts: dict[str, list[str]]) -> list[str]:
    """The parts of a summed total that are not summed yet: what adds up to an amount or count is one too."""
    summed = {str(c["name"]) for c in columns if _summable(c)}
    return sorted({p for total, names in parts.items() if total in summed for p in names if p not in summed})


def table_semantics(
    columns: list[dict[str, Any]], rows: int, frame: pd.DataFrame | None = None, *, table_name: str = ""
) -> TableSemantics:
    """Rate pairs, ranked headline measures, the time axis and calc id stems of one table's columns.

    ``columns`` are profile entries that already carry the per-column keys; ``frame`` (at intake) lets the
    ranking see which column is the total of others, and the parts of a summed total are summed too
    (``summed_parts``).
    """
    plain = [str(c["name"]) for c in columns if c.get("role") == "measure" and c.get("aggregation") in ("sum", "mean")
             and c.get("semantic") is None]  # fmt: skip
    parts = total_of_parts(frame, plain) if frame is not None else {}
    summed = additive_parts(columns, parts)
    columns = [{**c, "aggregation": "sum"} if c.get("name") in summed else c for c in columns]
    parts = {
        total: names for total, names in parts.items() if total in {str(c["name"]) for c in columns if _summable(c)}
    }
    return TableSemantics(
        summed_parts=summed,
        rate_pairs=rate_pairs(columns),
        headline_measures=headline_measures(columns, rows, parts=parts, table_name=table_name),
        time_axis=time_axis(columns),
        calc_id_stems=slug_map([str(c["name"]) for c in columns]),
    )


def with_semantics(table: dict[str, Any]) -> dict[str, Any]:
    """The table entry with every semantics key present: computed from the entry itself where a profile predates them.

    Returns the same dict when nothing is missing, else a copy (the caller's profile is not changed).
    """
    columns = table.get("columns", [])
    if "headline_measures" in table and all("aggregation" in c for c in columns):
        return table
    rows = int(table.get("rows") or 0)
    filled = []
    for col in columns:
        if "aggregation" in col:
            filled.append(col)
            continue
        sem = column_semantics(facts_from_profile(col, rows))
        filled.append({**col, **semantics_dict(sem)})
    result = {**table, "columns": filled}
    if "headline_measures" not in table:
        derived = table_semantics(filled, rows, table_name=str(table.get("file") or ""))
        result.update(rate_pairs=derived.rate_pairs, headline_measures=derived.headline_measures,
                      time_axis=derived.time_axis)  # fmt: skip
        result["columns"] = [{"calc_id_stem": derived.calc_id_stems[str(c["name"])], **c} for c in filled]
    return result


def semantics_dict(sem: ColumnSemantics) -> dict[str, Any]:
    """The profile keys of one column's semantics (``unit_scale`` and ``positive_value`` only when they apply)."""
    out: dict[str, Any] = {"role": sem.role, "aggregation": sem.aggregation, "semantic": sem.semantic,
                           "unit": sem.unit}  # fmt: skip
    if sem.unit_scale != 1:
        out["unit_scale"] = sem.unit_scale
    if sem.positive_value is not None:
        out["positive_value"] = sem.positive_value
    return out
