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

Two spellings of numbers that would otherwise stay text:

- numbers with a few word levels, such as a score margin ``+3``, ``-2``, ``TIE``: a numeric column whose level cells are
  missing, the levels and their counts in ``Coerced.text_levels`` (the profile lists them);
- digit groups split by a space, a tab or a (narrow) no-break space (``22 363``, ``22\t363``), joined when every
  value of the column is written that way.

A column with far fewer distinct values than cells is read on its distinct values, each once with its count, and the
typed values are mapped back to the rows (``cell_values``): the same decisions as on every cell, at a fraction of the
cost.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from insightloom.intake.cell_values import HEAD, CellValues, arrow_text

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
_PLACEHOLDER_ARRAY = pa.array(sorted(PLACEHOLDER_TOKENS), pa.large_string())
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
_DATE_SAMPLE = HEAD  # the first cells that cheap pre-checks read
_EXCEL_SERIAL_RANGE = (20000, 80000)  # 1954..2119: only plausible Excel day numbers become dates


@dataclass
class Coerced:
    """A typed column and what parsing learned about it.

    Attributes:
        series: The typed column.
        unit_hint: A unit seen in the cells, such as ``%`` or ``USD``.
        numeric_text: Why a column whose values mostly read as numbers was kept as text, else None.
        text_levels: The words standing among a numeric column's numbers (``TIE``) with their cell counts, most
            first; those cells are missing in ``series``.
        notice: One sentence on what reading the column changed (levels set aside, digit groups joined), else None.
    """

    series: pd.Series
    unit_hint: str | None = None
    numeric_text: str | None = None
    text_levels: list[tuple[str, int]] = field(default_factory=list)
    notice: str | None = None


def coerce_column(raw: pd.Series, name: str, *, decimal_comma: bool = False, distinct: bool | None = None) -> Coerced:
    """Give one raw column its type: timestamp, integer, float, bool or string.

    Args:
        raw: Cells as read (strings from CSV; Python objects from XLSX).
        name: Column name; date-like names lower the share of values that must parse as dates.
        decimal_comma: The CSV used ``;`` as delimiter, so ``1.234,5`` style numbers are tried too.
        distinct: Read text on its distinct values (True) or on every cell (False); None chooses by how often the
            first cells repeat. Both give the same result (the choice is for speed, and for tests).

    Returns:
        The typed column (same index) and a unit hint.
    """
    if pd.api.types.is_string_dtype(raw.dtype) and not pd.api.types.is_object_dtype(raw.dtype):
        text = raw.str.strip()  # CSV cells: already text, skip the per-cell Python work below
        return _from_text(text.where(text != ""), name, decimal_comma=decimal_comma, distinct=distinct)
    cells = raw.astype(object).where(raw.notna(), None)
    values = [v for v in cells if v is not None]
    if values and all(isinstance(v, (dt.datetime, dt.date, pd.Timestamp)) for v in values):
        return Coerced(pd.to_datetime(cells, errors="coerce"))
    if values and all(isinstance(v, (bool, np.bool_)) for v in values):
        return Coerced(cells.astype("boolean"))
    if values and all(_is_number(v) for v in values):
        return _typed_numbers(cells, name)
    text = cells.map(_to_text, na_action="ignore").astype("str")
    return _from_text(text.where(text != ""), name, decimal_comma=decimal_comma, distinct=distinct)


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
    integers = pd.api.types.is_integer_dtype(present.dtype)  # read as integers: whole, no pass needed
    whole = integers or bool(np.all(np.mod(present.to_numpy(dtype="float64"), 1) == 0))
    if whole and present.abs().max() < 2**53:
        return nums.astype("int64") if len(present) == len(nums) else nums.astype("Int64")
    return nums.astype("float64")


def _excel_serial_dates(nums: pd.Series) -> pd.Series | None:
    present = nums.dropna()
    lo, hi = _EXCEL_SERIAL_RANGE
    if present.empty or not ((present >= lo) & (present <= hi)).all():
        return None
    return pd.to_datetime(nums, unit="D", origin="1899-12-30", errors="coerce")


def _from_text(text: pd.Series, name: str, *, decimal_comma: bool, distinct: bool | None = None) -> Coerced:
    cells = CellValues.of(text, distinct=distinct)
    if not cells.total:
        return Coerced(text.astype("str"))
    cleaned = cells.drop(_placeholders(cells.values))
    dates = _parse_dates(cleaned, name)
    if dates is not None:
        return Coerced(cleaned.expand(dates))
    numbers = _parse_numbers(cleaned, decimal_comma=decimal_comma)
    if numbers is not None:
        if DATE_HINT_RE.search(name):
            compact = _compact_dates(cleaned)
            if compact is not None:
                return Coerced(cleaned.expand(compact))
        return _typed(cleaned, numbers, name)
    reason = _numeric_text_reason(cleaned, decimal_comma=decimal_comma)
    if reason:
        leveled = _with_text_levels(cleaned, name, decimal_comma=decimal_comma)
        if leveled is not None:
            return leveled
        logger.warning("column %r looks numeric but was kept as text: %s", name, reason)
    return Coerced(text.astype("str"), numeric_text=reason)


def _placeholders(values: pd.Series) -> pd.Series:
    """Which values are placeholders (``PLACEHOLDER_TOKENS``, in any case), with Arrow's kernels on Arrow text."""
    arrow = arrow_text(values)
    if arrow is None:
        return values.str.lower().isin(PLACEHOLDER_TOKENS)
    found = pc.is_in(pc.utf8_lower(arrow), value_set=_PLACEHOLDER_ARRAY)
    return pd.Series(found.to_numpy(zero_copy_only=False), index=values.index)


def _parse_dates(cells: CellValues, name: str) -> pd.Series | None:
    """Parse with the single format that fits most values; accept when enough of them parse.

    Returns:
        The timestamps, one per entry of ``cells.values``, or None.
    """
    if not cells.total or not cells.head().str.contains(r"\d", regex=True).all():
        return None  # every value must hold a digit: the sample settles most text columns
    need = _DATE_SHARE_WITH_HINT if DATE_HINT_RE.search(name) else _DATE_SHARE
    if cells.total > _DATE_SAMPLE and _best_dates(CellValues(cells.head()))[1] < need:
        return None  # cheap rejection on a sample before parsing a large column many ways
    if not cells.values.str.contains(r"\d", regex=True).all():
        return None
    best, best_share = _best_dates(cells)
    if best is None or best_share < need:
        return None
    lost = cells.total - cells.count(best.notna())
    if lost:
        logger.warning("column %r: %d value(s) did not parse as dates and became missing", name, lost)
    return best


def _best_dates(cells: CellValues) -> tuple[pd.Series | None, float]:
    """The candidate parse with the largest share of present values, and that share."""
    best: pd.Series | None = None
    best_share = 0.0
    for candidate in _date_candidates(cells.values, cells.head().head(50)):
        share = cells.share(candidate.notna())
        if share > best_share:
            best, best_share = candidate, share
        if share == 1.0:
            break
    return best, best_share


def _date_candidates(text: pd.Series, first: pd.Series) -> Iterator[pd.Series]:
    """Every way to read ``text`` as dates; ``first`` (the column's first cells) says whether to try Korean ones."""
    iso_mask = text.str.fullmatch(_ISO_RE.pattern).fillna(False).astype(bool)
    if iso_mask.any():
        # "2005-04-05T00:00:00Z" and "+09:00" offsets: one naive UTC clock, so every date compares with every other
        parsed = pd.to_datetime(text.where(iso_mask, None), format="ISO8601", errors="coerce", utc=True)
        yield parsed.dt.tz_localize(None)
    ko = text.str.extract(_KO_DATE_RE.pattern) if first.str.contains("년").any() else None
    if ko is not None and ko[0].notna().any():
        iso = ko[0] + "-" + ko[1].str.zfill(2) + "-" + ko[2].fillna("1").str.zfill(2)
        yield pd.to_datetime(iso, format="%Y-%m-%d", errors="coerce")
    for fmt in _DATE_FORMATS:
        yield pd.to_datetime(text.str.rstrip("."), format=fmt, errors="coerce")


def _compact_dates(cells: CellValues) -> pd.Series | None:
    """``20250901`` in a date-named column is a date, not the number twenty million."""
    if not cells.values.str.fullmatch(r"\d{8}").all():
        return None
    parsed = pd.to_datetime(cells.values, format="%Y%m%d", errors="coerce")
    return parsed if bool(parsed.notna().all()) else None


@dataclass
class _Numbers:
    """Numbers read from text: one per entry of the values, and what reading them learned."""

    values: pd.Series
    integer: bool
    unit: str | None
    notice: str | None = None


def _typed(cells: CellValues, numbers: _Numbers, name: str, *, notice: str | None = None) -> Coerced:
    nums = cells.expand(numbers.values)
    series = _narrow_int(nums) if numbers.integer else nums.astype("float64")
    notes = "; ".join(n for n in (numbers.notice, notice) if n) or None
    if numbers.notice:
        logger.info("column %r: %s", name, numbers.notice)
    return Coerced(series, numbers.unit, notice=notes)


def _parse_numbers(cells: CellValues, *, decimal_comma: bool) -> _Numbers | None:
    present = cells.values
    if not cells.total or not _maybe_numeric(cells.head()):
        return None
    arrow = arrow_text(present)
    if arrow is not None and pc.all(pc.match_substring_regex(arrow, _PLAIN_NUM_RE2)).as_py():
        return _plain_numbers(present, arrow)
    if present.str.fullmatch(_LEADING_ZERO_RE.pattern).any():
        return None  # "08053", "010-..." keep their zeros as text
    body, unit = _strip_units(present)
    if body is None:
        return None
    body, joined = _join_digit_groups(body)
    if body.str.fullmatch(_NUM_RE.pattern).all():
        normalized = body.str.replace(",", "", regex=False)
    elif decimal_comma and body.str.fullmatch(_EURO_NUM_RE.pattern).all():
        normalized = body.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    else:
        return None
    nums = _to_numbers(normalized)
    if body.str.fullmatch(_INT_TEXT_RE.pattern).all():
        if _max_digits(normalized) > _MAX_INT_DIGITS:
            return None  # an integer this long is an id; a long decimal or E-notation is still a number
        return _Numbers(nums, True, unit, joined)
    return _Numbers(nums, False, unit, joined)


# Plain numbers, the usual column: ASCII digits, an optional sign, comma groups, a decimal part; no unit, no
# exponent, no leading zero, no split group. One pass tells that every value is one, and the general checks below
# (leading zeros, units, split groups, the number patterns) would all pass them unchanged.
_PLAIN_NUM_RE2 = r"^[+-]?(?:[1-9][0-9]{0,2}(?:,[0-9]{3})+|[1-9][0-9]*|0)(?:\.[0-9]+)?$"


def _plain_numbers(present: pd.Series, arrow: pa.ChunkedArray) -> _Numbers | None:
    """What the general path reads from plain numbers, with the passes that cannot change anything left out."""
    commas = pc.any(pc.match_substring(arrow, ",")).as_py()
    normalized = present.str.replace(",", "", regex=False) if commas else present
    whole = not pc.any(pc.match_substring(arrow, ".")).as_py()
    nums = _to_numbers(normalized, whole=whole, exponent=False)
    if whole and _max_digits(normalized) > _MAX_INT_DIGITS:
        return None  # an integer this long is an id
    return _Numbers(nums, whole, None)


def _to_numbers(normalized: pd.Series, *, whole: bool | None = None, exponent: bool | None = None) -> pd.Series:
    """``pd.to_numeric`` of number text (no thousands separators), through Arrow's cast where that is exact.

    Text of at most 15 ASCII characters and no exponent holds at most 15 digits: both parsers read it as the one
    correctly rounded double (or the integer, ``-0`` as 0, when no value has a decimal point), so Arrow's cast gives
    the same values and dtype, many times faster. Anything else, or text Arrow refuses, goes through pandas.

    Args:
        normalized: Number text, as ``pd.to_numeric`` takes it.
        whole: No value has a decimal point, when the caller knows (else it is looked up).
        exponent: Some value may have an exponent, when the caller knows (else it is looked up).
    """
    arrow = arrow_text(normalized)
    if arrow is not None and len(arrow) and _short_plain(arrow, exponent=exponent):
        if whole is None:
            whole = not pc.any(pc.match_substring(arrow, ".")).as_py()  # pandas reads all-integer text as int64
        try:
            cast = pc.cast(arrow, pa.int64() if whole else pa.float64()).to_numpy(zero_copy_only=False)
        except pa.ArrowInvalid:
            pass
        else:
            return pd.Series(cast, index=normalized.index, name=normalized.name)
    return pd.to_numeric(normalized, errors="coerce")


def _short_plain(arrow: pa.ChunkedArray, *, exponent: bool | None) -> bool:
    if pc.max(pc.binary_length(arrow)).as_py() > _MAX_INT_DIGITS:
        return False
    if exponent is False:
        return True  # the caller matched plain numbers: ASCII, and no exponent
    if not pc.all(pc.string_is_ascii(arrow)).as_py():
        return False
    if exponent is None:
        exponent = any(pc.any(pc.match_substring(arrow, e)).as_py() for e in "eE")
    return not exponent


def _max_digits(normalized: pd.Series) -> int:
    arrow = arrow_text(normalized)
    if arrow is not None and len(arrow) and pc.max(pc.binary_length(arrow)).as_py() <= _MAX_INT_DIGITS:
        return _MAX_INT_DIGITS  # no more characters than that, so no more digits: skip the count
    return int(_digit_count(normalized).max())


def _digit_count(values: pd.Series) -> pd.Series:
    return values.str.replace(r"[^0-9]", "", regex=True).str.len()


#: What splits digit groups besides a comma: a space, a tab, a no-break, narrow no-break or thin space.
_GROUP_SEPARATORS = {" ": "spaces", "\t": "tabs", "\u00a0": "no-break spaces", "\u202f": "narrow no-break spaces",
                     "\u2009": "thin spaces"}  # fmt: skip
_GROUP_SEP_CLASS = "[" + "".join(_GROUP_SEPARATORS) + "]"
# 1-3 digits, then groups of exactly 3 split by one kind of separator, then an optional decimal part
_GROUPED_RE = re.compile(
    r"[+-]?[1-9]\d{0,2}(?:" + "|".join(f"(?:{sep}\\d{{3}})+" for sep in _GROUP_SEPARATORS) + r")(?:[.,]\d+)?"
)
# Unsplit values beside split ones: up to 4 integer digits (typography leaves "1500" unsplit, "15 000" split)
_UNSPLIT_RE = re.compile(r"[+-]?\d{1,4}(?:[.,]\d+)?")


def _join_digit_groups(body: pd.Series) -> tuple[pd.Series, str | None]:
    r"""``22 363`` / ``22\t363`` -> ``22363`` when every value of the column is written that way, with a notice.

    Consistent means: every value holding a separator is digit groups (1-3 digits, then groups of exactly 3), and
    every other value is a short number that needs no group. Otherwise nothing is joined, so two numbers in one cell
    (``12 5``) are never merged into one.
    """
    split = body.str.contains(_GROUP_SEP_CLASS, regex=True)
    if not split.any():
        return body, None
    grouped = body[split]
    if not grouped.str.fullmatch(_GROUPED_RE.pattern).all():
        return body, None
    if not body[~split].str.fullmatch(_UNSPLIT_RE.pattern).all():
        return body, None
    kinds = [kind for sep, kind in _GROUP_SEPARATORS.items() if grouped.str.contains(sep, regex=False).any()]
    example = str(grouped.iloc[0])
    joined = re.sub(_GROUP_SEP_CLASS, "", example)
    notice = f"digit groups split by {' and '.join(kinds)} were joined ({example!r} is {joined})"
    return body.str.replace(_GROUP_SEP_CLASS, "", regex=True), notice


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
    return _numeric_text_reason(CellValues(present), decimal_comma=decimal_comma)


def _numeric_text_reason(cells: CellValues, *, decimal_comma: bool) -> str | None:
    if not cells.total or _numeric_mask(cells.head(), decimal_comma).mean() < NUMERIC_LOOKING_SHARE / 2:
        return None  # plain text: a sample settles it without scanning a large column
    present = cells.values
    numeric = _numeric_mask(present, decimal_comma)
    share = cells.share(numeric)
    if share < NUMERIC_LOOKING_SHARE:
        return None
    if share == 1.0 and _is_kept_identifier(present):
        return None
    others = cells.where(~numeric)
    if _is_code_column(present[numeric], others.values):
        return None
    if _is_label_column(present, others.values):
        return None
    if not others.total:
        return f"all {cells.total} values are numbers, but with mixed or unsupported units or leading zeros"
    examples = ", ".join(repr(v) for v in others.values.drop_duplicates().head(3))
    return f"{others.total} of {cells.total} values are not numbers (e.g. {examples})"


#: A column with at most this many distinct values, one of them a word label, is a category of labels.
LABEL_MAX_DISTINCT = 12


def _is_label_column(present: pd.Series, others: pd.Series) -> bool:
    """Bag sizes ``1 and 2``, ``3`` … ``10``: a handful of labels, one spelled out, not numbers with junk in them."""
    few = present.nunique() <= LABEL_MAX_DISTINCT and others.nunique() == 1
    small_whole = bool(present[~present.isin(others)].str.fullmatch(r"\d{1,3}").all())  # 3, 4 … 10: labels
    return few and small_whole and bool(others.str.contains(r"[^\W\d_]").all())


#: At most this many distinct words may stand among numbers as their text levels (``TIE``, ``EVEN``, ``DNF``).
TEXT_LEVEL_MAX_DISTINCT = 3
_TEXT_LEVEL_MAX_CHARS = 24
# A word or a few: starts with a letter, no digit (so "12 (est.)" or "<0.5" are broken numbers, never a level)
_TEXT_LEVEL_RE = re.compile(r"[^\W\d_](?:[^\W\d_]|[ .'/&-])*")


def _with_text_levels(cells: CellValues, name: str, *, decimal_comma: bool) -> Coerced | None:
    """Numbers with a few word levels (a margin ``+3``, ``-2``, ``TIE``): a numeric column, the levels missing.

    Only a column reported as numeric-looking text gets here: at least 80% of its values read as numbers, and it is
    no identifier, code or label column. Its other values must be at most three distinct words (no digits), and the
    rest must parse as numbers on its own. The levels and their counts go to ``Coerced.text_levels``.
    """
    others = cells.where(~_numeric_mask(cells.values, decimal_comma))
    tokens = others.values.drop_duplicates()
    if not 0 < len(tokens) <= TEXT_LEVEL_MAX_DISTINCT or int(tokens.str.len().max()) > _TEXT_LEVEL_MAX_CHARS:
        return None
    if not tokens.str.fullmatch(_TEXT_LEVEL_RE.pattern).all():
        return None
    is_level = cells.values.isin(tokens)
    rest = cells.drop(is_level)
    numbers = _parse_numbers(rest, decimal_comma=decimal_comma)
    if numbers is None:
        return None
    counted = [(str(t), others.count(others.values == t)) for t in tokens]
    levels = sorted(counted, key=lambda level: -level[1])  # most cells first; a stable sort keeps first-seen order
    said = ", ".join(f"{value!r} ({count} cell{'s' if count != 1 else ''})" for value, count in levels)
    notice = f"text level{'s' if len(levels) > 1 else ''} {said} among the numbers, missing in this numeric column"
    logger.warning("column %r: %s", name, notice)
    coerced = _typed(rest, numbers, name, notice=notice)
    coerced.text_levels = levels
    return coerced


def _maybe_numeric(sample: pd.Series) -> bool:
    """Cheap pre-check: every sampled value is digits, separators, signs or a unit symbol."""
    return bool(sample.str.fullmatch(r"[\d\s.,+\-eE%$₩€£¥원]+").all())


_UNIT_CHARS = "[%$₩€£¥원]"


def _strip_units(present: pd.Series) -> tuple[pd.Series | None, str | None]:
    """Remove a ``%`` suffix or a currency symbol shared by every value, remembering it as the unit."""
    if not present.str.contains(_UNIT_CHARS, regex=True).any():
        return present, None  # one pass settles the usual column: no value holds a unit symbol
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
