"""Find the numbers in report text that are claims, and the citation markers after them.

The audit flags a number in prose that carries no marker (type A), so it must not flag what is not a claim: years
standing alone, dates and times, ordinals, figure/table/section numbers, a small rank ("Top 5"), list numbering,
codes (digits after ASCII letters: "FRUITPROMO5", "Q3", "SKU_12") and labels glued to a word ("30s", "50대", "500ml",
"1st", "3월", "15일") and the marker digits themselves. A number glued to a counter or an amount ("34건", "1,234만원",
"5배", "12k", "3x", "2bn", "USD1200") is a claim like any other. Everything here is pure text processing, so it is
tested directly.
"""

from __future__ import annotations

import bisect
import logging
import re
from dataclasses import dataclass

logger = logging.getLogger(__name__)

MARKER_RE = re.compile(r"\[(\d{1,4})\]")
MINUS_SIGNS = "-\u2212\u2013"  # hyphen-minus, minus sign, en dash: all print as a minus
NUMBER_RE = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
# Only one unit word may stand between a number and its marker: "45.2% [3]", "16,431,923 KRW [1]", "836 [2]".
_UNIT_THEN_MARKER_RE = re.compile(r"[ \t]?(?:[^\s\d\[\]]{1,16}[ \t]?)?\[\d{1,4}\]")
_VALUE_BEFORE_RE = re.compile(r"(-?\d[\d,]*(?:\.\d+)?[^\d\[\]]{0,24})$")

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DATE_RES = [
    re.compile(r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?)?"),
    re.compile(r"\d{4}[/.]\d{1,2}[/.]\d{1,2}"),
    re.compile(r"\d{1,2}/\d{1,2}/\d{2,4}"),
    re.compile(r"\d{4}-\d{2}(?!\d)"),
    re.compile(r"(?<!\d)(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?!\d)"),  # a clock time, never a ratio (55:45)
    re.compile(rf"\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"),
    re.compile(rf"\b\d{{1,2}}\s+{_MONTH}(?:,?\s+\d{{4}})?\b"),
    re.compile(rf"\b{_MONTH}\s+\d{{4}}\b"),
]
_LABEL_BEFORE_RE = re.compile(
    r"(?:\b(?:figure|fig\.|table|section|chart|part|chapter|appendix|page|p\.|item)|그림|표)\s*$",
    re.IGNORECASE,
)
# A rank names a place, never an amount: only a small integer follows ("Top 5", "rank 3", "#1", "상위 5개").
_RANK_BEFORE_RE = re.compile(r"(?:\b(?:top|bottom|rank|step|no\.)|상위|하위|단계|#)\s*$", re.IGNORECASE)
_MAX_RANK_DIGITS = 2
# Suffixes glued to a number that make it an amount or a count, a claim ("1,234만원", "5배", "12k", "3x", "34건").
_AMOUNT_SUFFIX_RE = re.compile(r"(?:만|억|천|조|원|배|달러|퍼센트|프로|%|(?:k|K|M|x|X|bn|mn)(?![A-Za-z0-9_]))")
# After letters ("T1M", "A4x"), a glued scale letter is part of a code; a percent or a Korean unit still measures.
_MEASURE_SUFFIX_RE = re.compile(r"(?:만|억|천|조|원|배|달러|퍼센트|프로|%)")
_COUNTER_SUFFIX_RE = re.compile(r"(?:건|개|명|회|곳|가지|종|점|시간)")
# Currency codes and abbreviations: letters before digits that make an amount ("USD1200", "Rs1200"), not a code.
# fmt: off
_CURRENCY_CODES = frozenset(
    {
        "USD", "KRW", "EUR", "JPY", "GBP", "CNY", "RMB", "AUD", "CAD", "CHF", "INR", "HKD", "SGD", "NZD",
        "SEK", "NOK", "DKK", "MXN", "BRL", "ZAR", "RUB", "TRY", "TWD", "THB", "IDR", "MYR", "PHP", "VND",
        "PLN", "CZK", "HUF", "ILS", "AED", "SAR", "QAR", "KWD", "EGP", "NGN", "KES", "ARS", "CLP", "COP",
        "PEN", "PKR", "BDT", "LKR",
    }
)
# fmt: on
_CURRENCY_ABBREVIATIONS = frozenset({"rs", "us", "hk", "nz", "rp", "yen", "won"})
_LETTERS_BEFORE_RE = re.compile(r"[A-Za-z]+$")
# The only words that may be glued after a number and keep it a label: ordinals, decades, ages, dates ("1st",
# "1990s", "50대", "3월", "15일", "2024년", "3분기"). Any other glued word makes it a measure ("3.2pp", "$1.2m").
_LABEL_SUFFIX_RE = re.compile(r"(?:st|nd|rd|th|s)(?![A-Za-z])|(?:대|월|일|년|분기)", re.IGNORECASE)
_GLUED_WORD_RE = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class NumberToken:
    """A number found in text.

    Attributes:
        start: Offset of the first character (the minus sign when there is one).
        end: Offset after the last digit.
        text: The number as printed ("-1,234.5").
        cited: True when a citation marker follows it (after at most some unit text).
    """

    start: int
    end: int
    text: str
    cited: bool


class SpanSet:
    """Text spans, sorted once, so each question about one token costs a binary search (not a scan of all spans)."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(spans):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        self._starts = [lo for lo, _ in merged]
        self._spans = merged

    def _covering(self, start: int) -> tuple[int, int] | None:
        at = bisect.bisect_right(self._starts, start) - 1
        return self._spans[at] if at >= 0 else None

    def contains(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` lies inside one (merged) span."""
        span = self._covering(start)
        return span is not None and end <= span[1]

    def overlaps(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` shares a character with a span."""
        span = self._covering(end - 1)
        return span is not None and start < span[1]


def _spans(text: str) -> SpanSet:
    spans = [m.span() for m in MARKER_RE.finditer(text)]
    for pattern in _DATE_RES:
        spans += [m.span() for m in pattern.finditer(text)]
    return SpanSet(spans)


def _head(text: str, end: int, size: int = 24) -> str:
    """The few characters before ``end``: the look-behind rules need no more, so each token costs constant time."""
    return text[max(0, end - size) : end]


def _is_year(token: str) -> bool:
    return token.isdigit() and len(token) == 4 and 1900 <= int(token) <= 2100


def claim_suffix(text: str, end: int) -> str | None:
    """``"amount"`` or ``"counter"`` when a unit or counter is glued after the number ending at ``end``, else None."""
    if _AMOUNT_SUFFIX_RE.match(text, end):
        return "amount"
    return "counter" if _COUNTER_SUFFIX_RE.match(text, end) else None


def is_currency(prefix: str) -> bool:
    """Whether letters before a number make it an amount: a currency code or abbreviation ("USD", "Rs")."""
    return prefix in _CURRENCY_CODES or prefix.lower() in _CURRENCY_ABBREVIATIONS


def _is_code(text: str, start: int, end: int, token: str) -> bool:
    """Digits after ASCII letters or an underscore name name a thing ("Q3", "FRUITPROMO5", "SKU_12").

    Not when a measure follows ("x12.5%", "Q3.5") or the letters are a currency ("Rs1200", "INR1200").
    """
    head = text[max(0, start - 16) : start]
    if head.endswith("_") and head[:-1][-1:].isalnum():
        head = head[:-1]  # "SKU_12"
    elif end < len(text) and text[end] == "_" and text[end + 1 : end + 2].isalnum():
        return "." not in token and "," not in token  # "12_A"
    letters = _LETTERS_BEFORE_RE.search(head)
    if letters is None or is_currency(letters.group(0)):
        return False
    if re.match(r"\.\d", text[end : end + 2]):
        return True  # a version ("v2.0.1")
    return "." not in token and "," not in token and not _MEASURE_SUFFIX_RE.match(text, end)


def _glued_label(text: str, end: int, token: str) -> bool:
    """Whether the word glued after the integer keeps it a label ("1st", "1990s", "50대", "3월")."""
    return token.isdigit() and bool(_LABEL_SUFFIX_RE.match(text, end))


def _is_rank(text: str, start: int, token: str) -> bool:
    return bool(_RANK_BEFORE_RE.search(_head(text, start))) and token.isdigit() and len(token) <= _MAX_RANK_DIGITS


def _not_a_claim(text: str, start: int, end: int, token: str) -> bool:
    prev = text[start - 1] if start > 0 else ""
    nxt = text[end] if end < len(text) else ""
    if _is_code(text, start, end, token) or prev == "제":
        return True  # "Q3", "FRUITPROMO5", "제3회" (the third)
    suffix = claim_suffix(text, end)
    if suffix is not None:  # "34건", "5배", "12k", "40%": a quantity, unless a rank counts places ("상위 5개")
        return suffix == "counter" and _is_rank(text, start, token)
    if _GLUED_WORD_RE.match(nxt):
        return _glued_label(
            text, end, token
        )  # "30s", "1st", "3월", "50대" are labels; "3.2pp", "34kg", "34번" measures
    if prev.isalpha() and not prev.isascii() and token.isdigit():
        return True  # glued after a word: "시즌3"
    if prev in {".", ","} and start > 1 and text[start - 2].isdigit():
        return True  # the tail of a version or code ("1.2.3")
    if _is_year(token) or _is_rank(text, start, token):
        return True
    if _LABEL_BEFORE_RE.search(_head(text, start)):
        return True  # "Figure 2", "Table 1", "Section 3.2"
    # List numbering at the start of a paragraph: "1. ", "2) ".
    at_start = not _head(text, start).strip() and not text[:start].strip()
    after = text[end + 1 : end + 2]
    return at_start and nxt in {".", ")"} and (not after or after.isspace()) and len(token) <= _MAX_RANK_DIGITS + 1


def find_numbers(text: str) -> list[NumberToken]:
    """Every number in ``text`` that reads as a claim, marked cited or not."""
    spans = _spans(text)
    tokens: list[NumberToken] = []
    for match in NUMBER_RE.finditer(text):
        start, end, token = match.start(), match.end(), match.group(0)
        if spans.contains(start, end) or _not_a_claim(text, start, end, token):
            continue
        if start > 0 and text[start - 1] in MINUS_SIGNS and (start < 2 or not text[start - 2].isalnum()):
            start, token = start - 1, "-" + token
        cited = bool(_UNIT_THEN_MARKER_RE.match(text, end))
        tokens.append(NumberToken(start, end, token, cited))
    return tokens


def value_before(text: str, marker_start: int) -> str | None:
    """The printed value (number plus unit text) just before a marker, or None when there is no number."""
    match = _VALUE_BEFORE_RE.search(_head(text, marker_start, 64).rstrip())
    return match.group(1).strip() if match else None


def printed_matches(text: str, marker_start: int, expected: str) -> bool:
    """Whether the text right before a marker is exactly ``expected`` (not just ending with its digits)."""
    expected = _as_hyphens(expected)
    before = _as_hyphens(_head(text, marker_start, len(expected) + 64).rstrip())
    if not before.endswith(expected):
        return False
    head = before[: len(before) - len(expected)]
    if not head:
        return True
    prev = head[-1]
    # "116,431,923 KRW" ends with "16,431,923 KRW" but is another number; so is "-836" for "836".
    if expected[:1].isdigit() or expected[:1] == "-":
        return not (prev.isdigit() or prev in ".,-+")
    return True


def _as_hyphens(text: str) -> str:
    return text.translate({ord(sign): "-" for sign in MINUS_SIGNS})
