"""Column roles, PII detection, units and the data's language.

The role tells downstream agents what they may do with a column: sum a ``measure``, never sum a ``rate`` or an
``identifier``, group by a ``category``, trend over a ``date`` and never touch ``pii``. Wrong roles produce wrong
reports (a summed postal code), so the rules are conservative and each is a small named function.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

ROLES = ("date", "measure", "rate", "identifier", "category", "text", "pii")
CATEGORY_MAX_DISTINCT = 50
CATEGORY_MAX_SHARE = 0.5
#: A value longer than this makes a text column free text, never a category: labels are short, and a 100,000-
#: character "label" would be drawn on a chart axis and written into the report.
CATEGORY_MAX_CHARS = 200

EMAIL_RE = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
PHONE_RE = re.compile(r"(?:\+\d{1,3}[\s.-]?)?\(?\d{2,4}\)?[\s.-]?\d{3,4}[\s.-]?\d{4}")
_PHONE_FULL_RE = re.compile(r"\+?[\d\s().-]{9,20}")

# Name patterns are matched against the normalized name: lower case, runs of non-word characters -> one space.
# Always personal: a header that names a person's name, contact data, ids of people, birth dates, addresses.
_PII_NAME_RE = re.compile(
    r"(^| )(full|first|last|given|family|middle|person|customer|client|employee|trainee|student|patient|contact|"
    r"member|user|staff|passenger|owner|applicant|respondent|driver) name( |$)"
    r"|(^| )(surname|fullname|firstname|lastname)( |$)"
    r"|(^| )e ?mail|(^| )(phone|telephone|tel|fax|cellphone)( |$)|(^| )(mobile|cell) (phone|number|no)( |$)|^mobile$"
    r"|(^| )(employee|emp|staff|student|trainee|patient) (id|no|number|code)( |$)|(^| )ssn( |$)|social security"
    r"|passport|national id|(^| )(birth|birthday|dob)(?! (rate|rates|weight|count|counts|order|total))( |$)"
    r"|date of birth|birth date|(^| )address( |$)"
    r"|^(고객|직원|학생|회원|환자|담당자|사용자|보호자)?(성명|성함)$|^(고객|직원|학생|회원|환자|담당자|사용자|보호자)이름$"
    r"|(고객|직원|학생|회원|환자|담당자)명$"
    r"|이메일|메일|연락처|전화|휴대폰|핸드폰|사번|학번|주민등록|사원번호|직원번호|여권|생년월일|생일|주소"
)
# A bare "name" is personal only among columns about people: game titles, storms, products, places and species
# have names too, and masking them hides the table's main entity.
_BARE_NAME_RE = re.compile(r"^(name|names|이름)$")
_PEOPLE_CONTEXT_RE = re.compile(
    r"^(age|sex|gender|nationality|marital status|ethnicity|race|religion|occupation)$"
    r"|(^| )(age|sex|gender)( (group|band|range|years))?$|(^| )(salary|salaries|wage|wages)( |$)"
    r"|(^| )(e ?mail|phone|telephone|employee|emp|customer|client|patient|passenger|student|trainee|person|ssn|dob"
    r"|birthday|surname|firstname|lastname)( |$)|(^| )(first|last) name( |$)|hire date|birth date|date of birth"
    r"|나이|연령|성별|고객|직원|학생|회원|환자|이메일|연락처|급여|연봉|생년월일|입사"
)
_ID_NAME_RE = re.compile(
    r"(^| )(id|ids|uuid|guid|code|codes|postal|zip|zipcode|postcode|sku|isbn|key)( |$)|number(?! of)"
    r"|(^| )no( |$)|우편|번호|코드|아이디|식별"
)
_RATE_NAME_RE = re.compile(
    r"(^| )(ctr|cvr|roas|roi|cpc|cpm|cpa|rate|rates|ratio|ratios|pct|percent|percentage|share)( |$)|%"
    r"|[율률](?=\W|$)|비율|비중"
)
_RATE_DESC_RE = re.compile(r"\b(rates?|ratios?|percent(age)?)\b|%|[율률](?=\W|$)|비율|비중|퍼센트", re.IGNORECASE)
_RATIO_NAME_RE = re.compile(r"(^| )(roas|roi|ratio|ratios|multiple)( |$)|배수")
_MEASURE_NAME_RE = re.compile(
    r"amount|qty|quantity|count|total|sum|sales|revenue|cost|price|spend|profit|impression|click|view|unit"
    r"|value|score|rank|수$|액|비용|금액|매출|수량|가격|건수"
)
_CALENDAR_NAME_RE = re.compile(r"(^| )(year|month|day|week|quarter|hour|weekday)( |$)|연도|년도|분기|요일|^월$|^일$")


def normalize_name(name: str) -> str:
    """Lower-case a column name and split camelCase and punctuation into single spaces (``orderId`` -> ``order id``)."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    return " ".join(re.split(r"[\W_]+", spaced.lower())).strip()


def field_name(name: str) -> str:
    """The last part of a flattened XLSX header (``Group / Field`` -> ``Field``), where the meaning sits."""
    return name.rsplit(" / ", 1)[-1]


def is_id_name(name: str) -> bool:
    """Whether a header names an id, key, code or number (``customer_id``, ``OrderNo``, ``상품코드``)."""
    return bool(_ID_NAME_RE.search(normalize_name(field_name(name))))


def people_context(columns: Iterable[str]) -> bool:
    """True when the table's column names describe people (age, sex, salary, customer, patient, passenger ...).

    Only in such a table is a bare ``name`` column a person's name; elsewhere it names a game, storm or product.
    """
    return any(_PEOPLE_CONTEXT_RE.search(normalize_name(field_name(c))) for c in columns)


def pii_reason(name: str, series: pd.Series, *, people: bool = True) -> str | None:
    """Why a column holds personal data, or None.

    Looks at the column name (person names, emails, phones, person ids, birth dates, addresses) and, for text, at
    the values (email or phone patterns). Anything flagged is masked in the profile and never analysed.

    Args:
        name: Column name.
        series: The typed column.
        people: The table is about people (``people_context``); a bare ``name`` column is masked only then. The
            default is the cautious one, for callers that do not know the other columns.
    """
    norm = normalize_name(field_name(name))
    if (_PII_NAME_RE.search(norm) or (people and _BARE_NAME_RE.search(norm))) and not _flag_or_fraction(series):
        return "name"
    if not _is_text(series):
        return None
    present = first_present(series, 500).astype(str)
    if present.empty:
        return None
    if present.str.fullmatch(EMAIL_RE.pattern).mean() >= 0.5:
        return "email values"
    phone_like = present.str.fullmatch(_PHONE_FULL_RE.pattern) & (present.str.count(r"\d") >= 9)
    if phone_like.mean() >= 0.8 and present.str.fullmatch(PHONE_RE.pattern).mean() >= 0.8:
        return "phone values"
    return None


def _flag_or_fraction(series: pd.Series) -> bool:
    """A yes/no flag (``has_email_address``) or fractional numbers (a ``phone`` survey score) hold nobody's data."""
    if pd.api.types.is_bool_dtype(series):
        return True
    if not pd.api.types.is_numeric_dtype(series):
        return False
    present = present_values(series)
    if present.empty:
        return False
    return bool(present.isin([0, 1]).all() or (present % 1 != 0).any())


def present_values(series: pd.Series) -> pd.Series:
    """The column's present values: the column itself when nothing is missing (``dropna`` copies it regardless)."""
    return series.dropna() if series.hasnans else series


def first_present(series: pd.Series, count: int) -> pd.Series:
    """The first ``count`` present values, reading only the column's start when it holds them."""
    start = series.head(4 * count).dropna()
    return start.head(count) if len(start) >= count or len(series) <= 4 * count else series.dropna().head(count)


def distinct_count(present: pd.Series) -> int:
    """How many distinct values ``present`` (no missing cell) holds: by sorting, for numbers and timestamps, which
    is several times faster than pandas' hash table on millions of values; by ``nunique`` for anything else."""
    dtype = present.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iufmM":
        return int(np.unique(present.to_numpy()).size)
    return int(present.nunique())


def classify(
    name: str, series: pd.Series, description: str | None, *, unit_hint: str | None = None, people: bool = True
) -> str:
    """Pick the column's role (see ``ROLES``).

    Args:
        name: Column name.
        series: The typed column.
        description: ``column_desc`` from column_definitions.json, if any.
        unit_hint: A unit seen in the cells during parsing (``%`` means a rate).
        people: The table is about people (see ``pii_reason``).
    """
    if pii_reason(name, series, people=people):
        return "pii"
    if pd.api.types.is_datetime64_any_dtype(series):
        return "date"
    if pd.api.types.is_bool_dtype(series):
        return "category"
    norm = normalize_name(field_name(name))
    if pd.api.types.is_numeric_dtype(series):
        return _numeric_role(norm, series, description, unit_hint)
    return _text_role(norm, series)


def _numeric_role(norm: str, series: pd.Series, description: str | None, unit_hint: str | None) -> str:
    if _ID_NAME_RE.search(norm):
        return "identifier"
    if unit_hint == "%" or _RATE_NAME_RE.search(norm) or (description and _RATE_DESC_RE.search(description)):
        return "rate"
    present = present_values(series)
    integral = pd.api.types.is_integer_dtype(series)
    if integral and _CALENDAR_NAME_RE.search(norm) and distinct_count(present) <= 60:
        return "category"
    if integral and not _MEASURE_NAME_RE.search(norm) and _looks_like_key(present):
        return "identifier"
    return "measure"


def _looks_like_key(present: pd.Series) -> bool:
    """Unique integers that run consecutively or share one digit width (100231, 100232 …) are keys, not amounts."""
    n = len(present)
    if n < 20 or distinct_count(present) < 0.98 * n or (present < 0).any():
        return False
    span = int(present.max()) - int(present.min()) + 1
    widths = present.astype("int64").astype(str).str.len()
    return span <= 1.1 * n or (widths.nunique() == 1 and int(widths.iloc[0]) >= 4)


def _text_role(norm: str, series: pd.Series) -> str:
    present = present_values(series)
    if present.empty:
        return "text"
    distinct = distinct_count(present)
    share = distinct / len(present)
    if _ID_NAME_RE.search(norm) and share > CATEGORY_MAX_SHARE:
        return "identifier"
    if present.astype(str).str.len().max() > CATEGORY_MAX_CHARS:
        return "text"
    if distinct <= CATEGORY_MAX_DISTINCT or share <= CATEGORY_MAX_SHARE:
        return "category"
    return "text"


def _is_text(series: pd.Series) -> bool:
    return pd.api.types.is_string_dtype(series) or pd.api.types.is_object_dtype(series)


# ------------------------------------------------------------------------------------------------------- units

_UNIT_IN_DESC_RE = re.compile(r"[(\[]\s*(?:unit|units|단위)\s*[:：]\s*([^)\]]+?)\s*[)\]]", re.IGNORECASE)
_CURRENCY_WORDS = (
    (re.compile(r"^(krw|won|원|₩|korean won)$", re.IGNORECASE), "KRW"),
    (re.compile(r"^(usd|\$|us\$|dollars?|달러)$", re.IGNORECASE), "USD"),
    (re.compile(r"^(eur|€|euros?|유로)$", re.IGNORECASE), "EUR"),
    (re.compile(r"^(jpy|¥|yen|엔)$", re.IGNORECASE), "JPY"),
    (re.compile(r"^(%|percent|percentage|퍼센트)$", re.IGNORECASE), "%"),
)
_KRW_IN_TEXT_RE = re.compile(r"\bKRW\b|₩|(?<![가-힣])원(?![가-힣])|\bwon\b", re.IGNORECASE)
_USD_IN_TEXT_RE = re.compile(r"\bUSD\b|\$|\bdollars?\b|달러", re.IGNORECASE)
_PERCENT_TEXT_RE = re.compile(r"%|\bpercent(age)?\b|퍼센트", re.IGNORECASE)


def unit_for(name: str, series: pd.Series, role: str, description: str | None, unit_hint: str | None) -> str | None:
    """Derive the unit used to print this column's sums and means.

    Order: an explicit "(unit: X)" / "(단위: X)" in the description, a currency named in the description, a unit
    seen in the cells (``%``, ``$``), then a rate column that holds percent numbers (``%``); otherwise None.
    """
    if role not in ("measure", "rate"):
        return None
    if description:
        explicit = _UNIT_IN_DESC_RE.search(description)
        if explicit:
            return _canonical_unit(explicit.group(1))
        if _KRW_IN_TEXT_RE.search(description):
            return "KRW"
        if _USD_IN_TEXT_RE.search(description):
            return "USD"
    if unit_hint:
        return unit_hint
    if role == "rate" and _is_percent_column(name, series, description):
        return "%"
    return None


def _canonical_unit(text: str) -> str:
    word = text.strip()
    for pattern, code in _CURRENCY_WORDS:
        if pattern.match(word):
            return code
    return word


def _is_percent_column(name: str, series: pd.Series, description: str | None) -> bool:
    """Percent when the name or description says so, or a CTR-like rate holds values above 1 and at most 100."""
    norm = normalize_name(field_name(name))
    if "%" in name or _PERCENT_TEXT_RE.search(norm) or (description and _PERCENT_TEXT_RE.search(description)):
        return True
    if _RATIO_NAME_RE.search(norm):
        return False
    present = present_values(series)
    return bool(len(present)) and present.min() >= 0 and 1 < present.max() <= 100


# ----------------------------------------------------------------------------------------------------- language

_HANGUL_RE = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_LATIN_RE = re.compile(r"[A-Za-z]")


def detect_language(texts: list[str]) -> str:
    """``ko`` when most header and category cells with letters contain Hangul, else ``en``."""
    hangul = latin = 0
    for text in texts:
        if _HANGUL_RE.search(text):
            hangul += 1
        elif _LATIN_RE.search(text):
            latin += 1
    return "ko" if hangul > latin else "en"
