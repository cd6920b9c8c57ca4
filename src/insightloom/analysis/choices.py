"""Choose what to analyse from a data profile: main measures, main categories, the time axis, rates from parts.

The column meaning is decided once, at intake (:mod:`insightloom.intake.semantics`): the profile's
``headline_measures``, ``aggregation``, ``rate_pairs`` and ``time_axis``. These functions read those keys, so a
hosted model reading the profile and the offline model choose alike; a profile written before the keys existed gets
them computed from its own entries (:func:`annotated`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from insightloom.analysis import joins, time_logic
from insightloom.errors import JoinRefused
from insightloom.intake import semantics

logger = logging.getLogger(__name__)

EXCLUDED_ROLES = ("pii", "identifier")
MAX_KPI_MEASURES = 4
MAX_BREAKDOWNS = 3
#: Breakdowns the request may ask for by naming columns in backticks (a long plan on a wide table).
MAX_REQUESTED_BREAKDOWNS = 40
MAX_GROUPS = 50

_COUNT_LIKE = re.compile(
    r"qty|quantity|count|units|clicks?|impressions?|conversions?|orders|수량|건수|노출|클릭|전환수", re.I
)
_CATEGORY_HINT = re.compile(
    r"category|region|channel|segment|type|department|dept|division|team|store|product|group|status|grade|gender|"
    r"role|매체|카테고리|지역|채널|부서|유형|분류|성별|연령|상품|직무|등급",
    re.I,
)
#: Semantics that are never a breakdown: positions, row numbers, running totals and the time axis itself.
_NOT_BREAKDOWN = ("rank", "index", "cumulative", "year", "period", "time_step")


@dataclass(frozen=True)
class RateDef:
    """A rate recomputed from its parts: ``scale * SUM(numerator) / SUM(denominator)``."""

    key: str
    numerator: str
    denominator: str
    scale: float
    unit: str | None


RATE_KINDS = semantics.RATE_KINDS


def usable(col: dict[str, Any]) -> bool:
    """Whether a column may be analysed at all (never ids or personal data)."""
    return col.get("role") not in EXCLUDED_ROLES


def tables(profile: dict[str, Any]) -> list[dict[str, Any]]:
    """Distinct tables of the profile, the ``data`` alias's table first (a sheet listed twice counts once)."""
    seen: set[tuple[Any, ...]] = set()
    result: list[dict[str, Any]] = []
    primary = (profile.get("aliases") or {}).get("data")
    ordered = sorted(profile.get("tables", []), key=lambda t: t.get("view") != primary)
    for table in ordered:
        key = (table.get("parquet") or table.get("view"),)
        if key not in seen:
            seen.add(key)
            result.append(table)
    return result


def find_table(profile: dict[str, Any], view: str) -> dict[str, Any] | None:
    """The table with view name (or alias) ``view``; a joined view (``orders+customers``) gets its joined entry, or
    None when the relationships refuse it (:func:`insightloom.analysis.joins.joined_table` says why)."""
    if joins.is_joined(view):
        try:
            return joins.joined_table(profile, view)
        except JoinRefused:
            return None
    view = (profile.get("aliases") or {}).get(view, view)
    return next((t for t in profile.get("tables", []) if t.get("view") == view), None)


def column(table: dict[str, Any], name: str | None) -> dict[str, Any] | None:
    """The profile entry of column ``name``."""
    return next((c for c in table.get("columns", []) if c.get("name") == name), None)


def annotated(table: dict[str, Any]) -> dict[str, Any]:
    """The table with its semantics keys (computed from the entry itself for an older profile)."""
    return semantics.with_semantics(table)


def _column_entry(col: dict[str, Any]) -> dict[str, Any]:
    if "aggregation" in col:
        return col
    return annotated({"rows": 0, "columns": [col], "headline_measures": []})["columns"][0]


def _mentioned(name: str, request: str) -> bool:
    return len(name) >= 2 and name.lower() in (request or "").lower()


def is_additive(col: dict[str, Any]) -> bool:
    """Whether sums of the column mean something (amounts, counts): the profile's ``aggregation`` is ``sum``."""
    return _column_entry(col).get("aggregation") == "sum"


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None


def is_numbered(col: dict[str, Any]) -> bool:
    """Whether an integer column holds exactly the numbers 1..k (``site`` 1..7, ``pair`` 1..21, ``Time`` 1..19).

    Such numbers name groups or count off periods; a correlation with them, or their distribution, measures the
    numbering, not a quantity. A count (``Qty`` 1..9, an additive column) is a quantity whatever its values.
    """
    low, high, distinct = _number(col.get("min")), _number(col.get("max")), int(col.get("distinct") or 0)
    numbered = "int" in str(col.get("dtype", "")) and low == 1 and high == distinct >= 3
    return numbered and not is_count_like(col) and not is_additive(col)


#: Columns that annotate a value rather than measure anything (``Value Footnotes``, ``flag``, ``note``).
_ANNOTATION = re.compile(r"(?:^|[^a-z])(?:foot\s*notes?|notes?|flags?|remarks?|symbols?|comments?)(?:[^a-z]|$)", re.I)


def is_label_column(col: dict[str, Any]) -> bool:
    """Whether a numeric column's values are labels rather than amounts: a code, rank, year or row index, a
    numbering of groups or periods (:func:`is_numbered`), or a footnote or flag annotating another column."""
    if _ANNOTATION.search(str(col.get("name", ""))):
        return True
    return _column_entry(col).get("aggregation") == "none" or is_numbered(col)


def is_count_like(col: dict[str, Any]) -> bool:
    """Whether the column counts things (its totals print as plain counts)."""
    return bool(_COUNT_LIKE.search(str(col.get("name", ""))))


def measure_unit(col: dict[str, Any]) -> str | None:
    """Unit of sums and means of the column: its currency code, ``count`` for count-like columns, else None."""
    if col.get("unit"):
        return str(col["unit"])
    return "count" if is_count_like(col) and "int" in str(col.get("dtype", "")) else None


def headline(table: dict[str, Any]) -> list[dict[str, str]]:
    """The profile's ranked headline measures (``column`` and ``reason``), best first."""
    return list(annotated(table).get("headline_measures") or [])


def measures(table: dict[str, Any], request: str = "") -> list[str]:
    """Measure columns worth analysing, best first: the headline ranking, columns the request names moved first."""
    ranked = [h["column"] for h in headline(table)]
    return sorted(ranked, key=lambda name: not _mentioned(name, request))


def _category_score(col: dict[str, Any], rows: int, request: str) -> float:
    name = str(col.get("name", ""))
    distinct = int(col.get("distinct") or 0)
    score = 100.0 if _mentioned(name, request) else 0.0
    score += 30.0 if _CATEGORY_HINT.search(name) else 0.0
    score += 20.0 if 3 <= distinct <= 20 else 8.0 if distinct == 2 else 5.0
    missing = (col.get("missing") or 0) / rows if rows else 0.0
    score -= 10.0 * missing if missing > 0.05 else 0.0  # a few blanks do not make a dimension less useful
    return score


def categories(table: dict[str, Any], request: str = "") -> list[str]:
    """Category columns worth breaking down by, best first (2..50 groups, never ids or personal data)."""
    table = annotated(table)
    rows = int(table.get("rows") or 0)
    cands = [
        c
        for c in table.get("columns", [])
        if c.get("role") == "category"
        and 2 <= int(c.get("distinct") or 0) <= min(MAX_GROUPS, max(2, rows - 1))
        and c.get("semantic") not in _NOT_BREAKDOWN
        and not (c.get("semantic") == "code" and c.get("dtype") == "string")
    ]
    ranked = sorted(enumerate(cands), key=lambda p: (-_category_score(p[1], rows, request), p[0]))
    return [c["name"] for _, c in ranked]


def breakdown_columns(table: dict[str, Any], request: str = "", *, full: bool = True) -> list[str]:
    """The category columns to break the main measure down by.

    Columns the request names in backticks (`` `Store Format` ``) are all taken, in the request's order, up to
    ``MAX_REQUESTED_BREAKDOWNS``: the user asked for exactly those. Otherwise the best ``MAX_BREAKDOWNS`` (one for a
    further table, ``full=False``).
    """
    usable_names = categories(table, request)
    named = [n for n in dict.fromkeys(re.findall(r"`([^`]+)`", request or "")) if n in usable_names]
    if named:
        return named[:MAX_REQUESTED_BREAKDOWNS]
    return usable_names[: MAX_BREAKDOWNS if full else 1]


def time_axis(table: dict[str, Any]) -> dict[str, Any] | None:
    """The profile's ``time_axis``: ``{"kind": "date"|"year"|"wide_years"|"index", "column", "period", ...}``."""
    axis = annotated(table).get("time_axis")
    return dict(axis) if axis else None


def date_column(table: dict[str, Any]) -> str | None:
    """The time axis's column when it is a date column (never a cohort date such as a hire date)."""
    axis = time_axis(table)
    return str(axis["column"]) if axis and axis.get("kind") == "date" else None


def period_for(col: dict[str, Any] | None) -> str:
    """Trend bucket from the date span: days up to ~6 weeks, weeks up to ~6 months, months up to 3 years, then years
    (never finer than a month for a date stored as a decimal year on whole months)."""
    encoding = time_logic.decimal_year_encoding(col) if col else None
    if col and encoding:
        return time_logic.decimal_year_period(col.get("min"), col.get("max"), encoding)
    return semantics.period_for_span(col.get("min"), col.get("max")) if col else "month"


def rate_defs(table: dict[str, Any]) -> dict[str, RateDef]:
    """The profile's ``rate_pairs`` whose parts are analysable, keyed like :data:`RATE_KINDS`."""
    table = annotated(table)
    result: dict[str, RateDef] = {}
    for pair in table.get("rate_pairs") or []:
        parts = (column(table, pair.get("numerator")), column(table, pair.get("denominator")))
        if all(p is not None and usable(p) for p in parts) and pair.get("key") in RATE_KINDS:
            result[pair["key"]] = RateDef(pair["key"], pair["numerator"], pair["denominator"], float(pair["scale"]),
                                          pair.get("unit"))  # fmt: skip
    return result


def rate_label(key: str, language: str) -> str:
    """Display label of a rate kind."""
    en, ko, *_ = RATE_KINDS[key]
    return ko if language == "ko" else en


def rate_key(label: str) -> str | None:
    """Rate kind from its label in either language."""
    for key, (en, ko, *_rest) in RATE_KINDS.items():
        if label.strip() in (en, ko):
            return key
    return None
