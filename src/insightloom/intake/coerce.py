"""Turn raw cells into typed columns, once, at intake.

Scripts (pandas) and checks (DuckDB) both read the Parquet written from these columns, so every later number comes
from the same typed data: "1,234" is the number 1234 in both engines, "5/1/25" is the same timestamp in both.

Missing values come in two strengths. ``NA_TOKENS`` (what R, pandas, SQL and Excel write for "no value") are missing
in every column; the CSV reader drops them. ``PLACEHOLDER_TOKENS`` (``-``, ``?``, ``None``, ``MISSING`` ...) are
missing only where the rest of the column parses as numbers or dates: in a text column they can be real answers, so
a category ``None`` (no extras ordered) stays its own value, distinct from an empty cell, and is never reported as a
number that failed to parse.

Only integer-looking text may stay text on purpose (an identifier): leading zeros (``08053``) and digit strings longer
than 15 digits (card or account numbers). Decimals of any length and E-notation are numbers. A column that looks
numeric but stays text for another reason carries ``Coerced.numeric_text`` (the reason), so intake can list it.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

#: "No value" as tools write it: missing in every column (the CSV reader reads these cells as empty).
NA_TOKENS = ("NA", "N/A", "n/a", "NaN", "nan", "NULL", "null", "#N/A")
#: Placeholders that mean "no value" only inside an otherwise numeric or date column (compared lower-cased).
PLACEHOLDER_TOKENS = frozenset(
    {t.lower() for t in NA_TOKENS}
    | {"-", "--", "–", "—", "?", "none", "missing", "n.a.", "n.d.", "nil", "없음"}
    | {"x", "..", "..."}  # statistics offices: suppressed, not available
    | {"#value!", "#div/0!", "#ref!", "#num!", "#name?", "#null!"}  # Excel error cells
)
#: Share of present values that must read as numbers for a text column to count as "numeric-looking".
NUMERIC_LOOKING_SHARE = 0.8
_NUM_RE = re.compile(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_EURO_NUM_RE = re.compile(r"[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?")
_LEADING_ZERO_RE = re.compile(r"[+-]?0\d+")
_INT_TEXT_RE = re.compile(r"[+-]?[\d,]+")
_CODE_RE = re.compile(r"[A-Za-z]{0,2}\d+[A-Za-z]{0,2}|[A-Za-z]{1,2}")  # 100a, B12, A: a code, not a number
_CURRENCY_PREFIX = {"$": "USD", "₩": "KRW", "€": "EUR", "£": "GBP", "¥": "JPY"}
_CURRENCY_SUFFIX = {"원": "KRW"}
_MAX_INT_DIGITS = 15  # longer integer digit strings are ids (card, account numbers), not quantities

DATE_HINT_RE = re.compile(
    r"(date|day|month|time|timestamp|period|날짜|일자|일시|연월|년월|기간|월별|일별)", re.IGNORECASE
)
_ISO_RE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_KO_DATE_RE = re.compile(r"(\d{4})\s*년\s*(\d{1,2})\s*월(?:\s*(\d{1,2})\s*일)?")
# Tried in order; the first format parsing the most values wins, so M/D/Y beats D/M/Y on a tie.
_DATE_FORMATS = (
    "%m/%d/%y",
    "%m/%d/%Y",
    "%d/%m/%y",
    "%d/%m/%Y",
    "%Y/%m/%d",
    "%Y.%m.%d",
    "%Y. %m. %d",
    "%d.%m.%Y",
    "%Y-%m",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d %H:%M:%S",
    "%m/%d/%Y %H:%M",
    "%m/%d/%y %H:%M",
)
_DATE_SHARE = 0.90
_DATE_SHARE_WITH_HINT = 0.80
_DATE_SAMPLE = 500
_EXCEL_SERIAL_RANGE = (20000, 80000)  # 1954..2119: only plausible Excel day numbers become dates


@dataclass
class Coerced:
    """A typed column and what parsing learned about it.

    Attributes:
        series: The typed column.
        unit_hint: A unit seen in the cells, such as ``%`` or ``USD``.
        numeric_text: Why a column whose values mostly read as numbers was kept as text, else None.
    """

    series: pd.Series
    unit_hint: str | None = None
    numeric_text: str | None = None


def coerce_column(raw: pd.Series, name: str, *, decimal_comma: bool = False) -> Coerced:
    """Give one raw column its type: timestamp, integer, float, bool or string.

    Args:
        raw: Cells as read (strings from CSV; Python objects from XLSX).
        name: Column name; date-like names lower the share of values that must parse as dates.
        decimal_comma: The CSV used ``;`` as delimiter, so ``1.234,5`` style numbers are tried too.

    Returns:
        The typed column (same index) and a unit hint.
    """
    if pd.api.types.is_string_dtype(raw.dtype) and not pd.api.types.is_object_dtype(raw.dtype):
        text = raw.str.strip()  # CSV cells: already text, skip the per-cell Python work below
        return _from_text(text.where(text != ""), name, decimal_comma=decimal_comma)
    cells = raw.astype(object).where(raw.notna(), None)
    values = [v for v in cells if v is not None]
    if values and all(isinstance(v, (dt.datetime, dt.date, pd.Timestamp)) for v in values):
        return Coerced(pd.to_datetime(cells, errors="coerce"))
    if values and all(isinstance(v, (bool, np.bool_)) for v in values):
        return Coerced(cells.astype("boolean"))
    if values and all(_is_number(v) for v in values):
        return _typed_numbers(cells, name)
    text = cells.map(_to_text, na_action="ignore").astype("str")
    return _from_text(text.where(text != ""), name, decimal_comma=decimal_comma)


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _to_text(v: object) -> str:
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    return str(v).strip()


def _typed_numbers(cells: pd.Series, name: str) -> Coerced:
    """Numbers already typed (XLSX): ints stay ints; serial day numbers in a date-named column become dates."""
    nums = pd.to_numeric(cells, errors="coerce")
    if DATE_HINT_RE.search(name):
        as_date = _excel_serial_dates(nums)
        if as_date is not None:
            return Coerced(as_date)
    return Coerced(_narrow_int(nums))


def _narrow_int(nums: pd.Series) -> pd.Series:
    """int64 when every value is whole and present, nullable Int64 when some are missing, else float64."""
    present = nums.dropna()
    if present.empty:
        return nums.astype("float64")
    whole = bool(np.all(np.mod(present.to_numpy(dtype="float64"), 1) == 0))
    if whole and present.abs().max() < 2**53:
        return nums.astype("int64") if len(present) == len(nums) else nums.astype("Int64")
    return nums.astype("float64")


def _excel_serial_dates(nums: pd.Series) -> pd.Series | None:
    present = nums.dropna()
    lo, hi = _EXCEL_SERIAL_RANGE
    if present.empty or not ((present >= lo) & (present <= hi)).all():
        return None
    return pd.to_datetime(nums, unit="D", origin="1899-12-30", errors="coerce")


def _from_text(text: pd.Series, name: str, *, decimal_comma: bool) -> Coerced:
    present = text.dropna()
    if present.empty:
        return Coerced(text.astype("str"))
    cleaned = text.where(~text.str.lower().isin(PLACEHOLDER_TOKENS))
    dates = _parse_dates(cleaned, name)
    if dates is not None:
        return Coerced(dates)
    numbers = _parse_numbers(cleaned, decimal_comma=decimal_comma)
    if numbers is not None:
        if DATE_HINT_RE.search(name):
            compact = _compact_dates(cleaned)
            if compact is not None:
                return Coerced(compact)
        return numbers
    reason = numeric_text_reason(cleaned.dropna(), decimal_comma=decimal_comma)
    if reason:
        logger.warning("column %r looks numeric but was kept as text: %s", name, reason)
    return Coerced(text.astype("str"), numeric_text=reason)


def _parse_dates(text: pd.Series, name: str) -> pd.Series | None:
    """Parse with the single format that fits most values; accept when enough of them parse."""
    present = text.dropna()
    if present.empty or not present.str.contains(r"\d", regex=True).all():
        return None
    need = _DATE_SHARE_WITH_HINT if DATE_HINT_RE.search(name) else _DATE_SHARE
    if len(present) > _DATE_SAMPLE and _best_dates(present.head(_DATE_SAMPLE))[1] < need:
        return None  # cheap rejection on a sample before parsing a large column many ways
    best, best_share = _best_dates(text)
    if best is None or best_share < need:
        return None
    lost = int(len(present) - best.notna().sum())
    if lost:
        logger.warning("column %r: %d value(s) did not parse as dates and became missing", name, lost)
    return best


def _best_dates(text: pd.Series) -> tuple[pd.Series | None, float]:
    """The candidate parse with the largest share of present values, and that share."""
    present = text.notna().sum()
    best: pd.Series | None = None
    best_share = 0.0
    for candidate in _date_candidates(text):
        share = candidate.notna().sum() / present
        if share > best_share:
            best, best_share = candidate, share
        if share == 1.0:
            break
    return best, best_share


def _date_candidates(text: pd.Series) -> Iterator[pd.Series]:
    iso_mask = text.str.fullmatch(_ISO_RE.pattern).fillna(False).astype(bool)
    if iso_mask.any():
        # "2005-04-05T00:00:00Z" and "+09:00" offsets: one naive UTC clock, so every date compares with every other
        parsed = pd.to_datetime(text.where(iso_mask, None), format="ISO8601", errors="coerce", utc=True)
        yield parsed.dt.tz_localize(None)
    ko = text.str.extract(_KO_DATE_RE.pattern) if text.dropna().head(50).str.contains("년").any() else None
    if ko is not None and ko[0].notna().any():
        iso = ko[0] + "-" + ko[1].str.zfill(2) + "-" + ko[2].fillna("1").str.zfill(2)
        yield pd.to_datetime(iso, format="%Y-%m-%d", errors="coerce")
    for fmt in _DATE_FORMATS:
        yield pd.to_datetime(text.str.rstrip("."), format=fmt, errors="coerce")


def _compact_dates(text: pd.Series) -> pd.Series | None:
    """``20250901`` in a date-named column is a date, not the number twenty million."""
    present = text.dropna()
    if not present.str.fullmatch(r"\d{8}").all():
        return None
    parsed = pd.to_datetime(text, format="%Y%m%d", errors="coerce")
    return parsed if parsed.notna().sum() == len(present) else None


def _parse_numbers(text: pd.Series, *, decimal_comma: bool) -> Coerced | None:
    present = text.dropna()
    if present.empty or not _maybe_numeric(present.head(_DATE_SAMPLE)):
        return None
    if present.str.fullmatch(_LEADING_ZERO_RE.pattern).any():
        return None  # "08053", "010-..." keep their zeros as text
    body, unit = _strip_units(present)
    if body is None:
        return None
    if body.str.fullmatch(_NUM_RE.pattern).all():
        normalized = body.str.replace(",", "", regex=False)
    elif decimal_comma and body.str.fullmatch(_EURO_NUM_RE.pattern).all():
        normalized = body.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    else:
        return None
    nums = pd.to_numeric(normalized, errors="coerce").reindex(text.index)
    if body.str.fullmatch(_INT_TEXT_RE.pattern).all():
        if _digit_count(normalized).max() > _MAX_INT_DIGITS:
            return None  # an integer this long is an id; a long decimal or E-notation is still a number
        return Coerced(_narrow_int(nums), unit)
    return Coerced(nums.astype("float64"), unit)


def _digit_count(values: pd.Series) -> pd.Series:
    return values.str.replace(r"[^0-9]", "", regex=True).str.len()


def _is_kept_identifier(present: pd.Series) -> bool:
    """Integer-looking text kept as text on purpose: leading zeros, or more digits than a quantity has."""
    if not present.str.fullmatch(_INT_TEXT_RE.pattern).all():
        return False
    return bool(present.str.fullmatch(_LEADING_ZERO_RE.pattern).any() or _digit_count(present).max() > _MAX_INT_DIGITS)


def _numeric_mask(present: pd.Series, decimal_comma: bool) -> pd.Series:
    """Which values read as a number once a currency symbol or a ``%`` / ``원`` suffix is set aside."""
    body = present.str.replace(r"^[+-]?[$₩€£¥]|[%원]$", "", regex=True).str.strip()
    numeric = body.str.fullmatch(_NUM_RE.pattern)
    return numeric | body.str.fullmatch(_EURO_NUM_RE.pattern) if decimal_comma else numeric


def _is_code_column(numbers: pd.Series, others: pd.Series) -> bool:
    """Codes that are mostly digits (NACE ``01.1``, subject ``100a``, section ``A``) are labels, not broken numbers."""
    if numbers.str.fullmatch(r"[+-]?0\d.*").any():
        return True
    return bool(len(others)) and bool(others.str.fullmatch(_CODE_RE.pattern).all())


def numeric_text_reason(present: pd.Series, *, decimal_comma: bool = False) -> str | None:
    """Why a text column whose values mostly read as numbers is not numeric, or None when it does not look numeric.

    Integer ids kept on purpose (every value integer-looking, with leading zeros or over 15 digits) are not
    reported: keeping them as text is the rule, not a parsing problem.

    Args:
        present: The column's present values, placeholders already removed.
        decimal_comma: ``1.234,5`` style numbers count as numbers too.
    """
    if present.empty or _numeric_mask(present.head(_DATE_SAMPLE), decimal_comma).mean() < NUMERIC_LOOKING_SHARE / 2:
        return None  # plain text: a sample settles it without scanning a large column
    numeric = _numeric_mask(present, decimal_comma)
    share = float(numeric.mean())
    if share < NUMERIC_LOOKING_SHARE:
        return None
    if share == 1.0 and _is_kept_identifier(present):
        return None
    others = present[~numeric]
    if _is_code_column(present[numeric], others):
        return None
    if _is_label_column(present, others):
        return None
    if others.empty:
        return f"all {len(present)} values are numbers, but with mixed or unsupported units or leading zeros"
    examples = ", ".join(repr(v) for v in others.drop_duplicates().head(3))
    return f"{len(others)} of {len(present)} values are not numbers (e.g. {examples})"


#: A column with at most this many distinct values, one of them a word label, is a category of labels.
LABEL_MAX_DISTINCT = 12


def _is_label_column(present: pd.Series, others: pd.Series) -> bool:
    """Bag sizes ``1 and 2``, ``3`` … ``10``: a handful of labels, one spelled out, not numbers with junk in them."""
    few = present.nunique() <= LABEL_MAX_DISTINCT and others.nunique() == 1
    small_whole = bool(present[~present.isin(others)].str.fullmatch(r"\d{1,3}").all())  # 3, 4 … 10: labels
    return few and small_whole and bool(others.str.contains(r"[^\W\d_]").all())


def _maybe_numeric(sample: pd.Series) -> bool:
    """Cheap pre-check: every sampled value is digits, separators, signs or a unit symbol."""
    return bool(sample.str.fullmatch(r"[\d\s.,+\-eE%$₩€£¥원]+").all())


def _strip_units(present: pd.Series) -> tuple[pd.Series | None, str | None]:
    """Remove a ``%`` suffix or a currency symbol shared by every value, remembering it as the unit."""
    if present.str.endswith("%").all():
        return present.str[:-1].str.strip(), "%"
    for sym, code in _CURRENCY_PREFIX.items():
        if present.str.lstrip("+-").str.startswith(sym).all():
            return present.str.replace(sym, "", n=1, regex=False).str.strip(), code
    for sym, code in _CURRENCY_SUFFIX.items():
        if present.str.endswith(sym).all():
            return present.str[: -len(sym)].str.strip(), code
    if present.str.contains(r"[%$₩€£¥]", regex=True).any():
        return None, None
    return present, None
