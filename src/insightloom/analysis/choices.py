"""Choose what to analyse from a data profile: main measures, main categories, the date column, rates from parts.

Deterministic heuristics stand in for an analyst's judgement: revenue-like and currency columns first, ids and
personal data never, a handful of measures on wide tables, and rates (CTR, ROAS, ...) recomputed from their parts.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

logger = logging.getLogger(__name__)

EXCLUDED_ROLES = ("pii", "identifier")
MAX_KPI_MEASURES = 4
MAX_BREAKDOWNS = 3
#: Breakdowns the request may ask for by naming columns in backticks (a long plan on a wide table).
MAX_REQUESTED_BREAKDOWNS = 40
MAX_GROUPS = 50

_ID_LIKE = re.compile(
    r"(^|[^a-z])(id|ids|no|code|zip|postal|phone|rank|year|index)([^a-z]|$)|순위|번호|코드|우편", re.I
)
_RATE_LIKE = re.compile(r"rate|ratio|ctr|roas|cvr|percent|pct|%|율|률|비율", re.I)
_NON_ADDITIVE = re.compile(
    r"score|grade|rating|avg|average|mean|percent|pct|age|price|temperature|점수|평균|나이|가격|단가|평점", re.I
)
_COUNT_LIKE = re.compile(
    r"qty|quantity|count|units|clicks?|impressions?|conversions?|orders|수량|건수|노출|클릭|전환수", re.I
)
_MEASURE_HINTS: tuple[tuple[str, int], ...] = (
    (r"revenue|sales|amount|매출|금액|판매액", 40),
    (r"cost|spend|비용|광고비", 30),
    (r"total|합계|총", 25),
    (r"score|점수", 15),
    (r"qty|quantity|units|수량|clicks?|클릭|conversions?|전환", 10),
)
_SUMMARY = re.compile(r"total|overall|avg|average|mean|summary|합계|총|평균|종합", re.I)
_CATEGORY_HINT = re.compile(
    r"category|region|channel|segment|type|department|dept|division|team|store|product|group|status|grade|gender|"
    r"role|매체|카테고리|지역|채널|부서|유형|분류|성별|연령|상품|직무|등급",
    re.I,
)


@dataclass(frozen=True)
class RateDef:
    """A rate recomputed from its parts: ``scale * SUM(numerator) / SUM(denominator)``."""

    key: str
    numerator: str
    denominator: str
    scale: float
    unit: str | None


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
    """The table with view name (or alias) ``view``."""
    view = (profile.get("aliases") or {}).get(view, view)
    return next((t for t in profile.get("tables", []) if t.get("view") == view), None)


def column(table: dict[str, Any], name: str | None) -> dict[str, Any] | None:
    """The profile entry of column ``name``."""
    return next((c for c in table.get("columns", []) if c.get("name") == name), None)


def _mentioned(name: str, request: str) -> bool:
    return len(name) >= 2 and name.lower() in (request or "").lower()


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def is_additive(col: dict[str, Any]) -> bool:
    """Whether sums of the column mean something (amounts, counts) rather than only averages (scores, prices)."""
    return not _NON_ADDITIVE.search(str(col.get("name", "")))


def is_count_like(col: dict[str, Any]) -> bool:
    """Whether the column counts things (its totals print as plain counts)."""
    return bool(_COUNT_LIKE.search(str(col.get("name", ""))))


def measure_unit(col: dict[str, Any]) -> str | None:
    """Unit of sums and means of the column: its currency code, ``count`` for count-like columns, else None."""
    if col.get("unit"):
        return str(col["unit"])
    return "count" if is_count_like(col) and "int" in str(col.get("dtype", "")) else None


def _measure_score(col: dict[str, Any], rows: int, request: str) -> float:
    name = str(col.get("name", ""))
    score = 100.0 if _mentioned(name, request) else 0.0
    score += 50.0 if col.get("unit") else 0.0
    field = name.rsplit(" / ", 1)[-1]  # flattened XLSX headers: the meaning sits in the last part
    score += 10.0 if _SUMMARY.search(name) else 0.0
    for pattern, bonus in _MEASURE_HINTS:
        if re.search(pattern, field, re.I):
            score += bonus
            break
    present = 1.0 - (col.get("missing") or 0) / rows if rows else 0.0
    score += 10.0 * present
    low, high, mean = _number(col.get("min")), _number(col.get("max")), _number(col.get("mean"))
    if low is not None and high is not None:
        score += min(5.0, (high - low) / (abs(mean or 0.0) + 1.0))
    if (col.get("distinct") or 0) <= 2:
        score -= 50.0
    return score


def measures(table: dict[str, Any], request: str = "") -> list[str]:
    """Measure columns worth analysing, best first (ids, ranks, rates and personal data left out)."""
    rows = int(table.get("rows") or 0)
    cands = [
        c
        for c in table.get("columns", [])
        if c.get("role") == "measure"
        and not _ID_LIKE.search(str(c.get("name", "")))
        and not _RATE_LIKE.search(str(c.get("name", "")))
        and (c.get("distinct") or 0) > 1
        and (c.get("missing") or 0) < rows
    ]
    ranked = sorted(enumerate(cands), key=lambda p: (-_measure_score(p[1], rows, request), p[0]))
    return [c["name"] for _, c in ranked]


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
    rows = int(table.get("rows") or 0)
    cands = [
        c
        for c in table.get("columns", [])
        if c.get("role") == "category"
        and 2 <= int(c.get("distinct") or 0) <= min(MAX_GROUPS, max(2, rows - 1))
        and not _ID_LIKE.search(str(c.get("name", "")))
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


def date_column(table: dict[str, Any]) -> str | None:
    """The first date column with at least two distinct values."""
    for col in table.get("columns", []):
        if col.get("role") == "date" and (col.get("distinct") or 2) >= 2:
            return col["name"]
    return None


def period_for(col: dict[str, Any] | None) -> str:
    """Trend bucket from the date span: days up to ~6 weeks, weeks up to ~6 months, months up to 3 years, then years."""
    try:
        span = (pd.Timestamp(col["max"]) - pd.Timestamp(col["min"])).days if col else None
    except (KeyError, TypeError, ValueError):
        span = None
    if span is None:
        return "month"
    return "day" if span <= 45 else "week" if span <= 183 else "month" if span <= 1096 else "year"


def _part(cols: list[dict[str, Any]], part: str, taken: set[str]) -> str | None:
    pattern = _PART_PATTERNS[part]
    for col in cols:
        name = str(col.get("name", ""))
        if name not in taken and pattern.search(name) and not _RATE_LIKE.search(name):
            return name
    return None


def rate_defs(table: dict[str, Any]) -> dict[str, RateDef]:
    """Rates whose parts exist as measure columns, keyed like :data:`RATE_KINDS`."""
    cols = [c for c in table.get("columns", []) if c.get("role") == "measure" and usable(c)]
    parts: dict[str, str] = {}
    for part in ("impressions", "clicks", "conversions", "revenue", "cost"):
        found = _part(cols, part, set(parts.values()))
        if found:
            parts[part] = found
    result: dict[str, RateDef] = {}
    for key, (_en, _ko, num, den, scale, unit_kind) in RATE_KINDS.items():
        if num in parts and den in parts:
            unit: str | None = unit_kind
            if unit_kind == "cost":
                unit = measure_unit(column(table, parts["cost"]) or {})
                unit = None if unit == "count" else unit
            result[key] = RateDef(key, parts[num], parts[den], scale, unit)
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
