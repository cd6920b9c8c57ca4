"""Find the numbers in report text that are claims, and the citation markers after them.

The audit flags a number in prose that carries no marker (type A), so it must not flag what is not a claim: years
standing alone, dates and times, ordinals, figure/table/section numbers, a small rank ("Top 5"), list numbering,
codes (digits after ASCII letters: "FRUITPROMO5", "Q3", "SKU_12") and labels glued to a word ("30s", "50대", "500ml",
"1st", "3월", "15일") and the marker digits themselves. A number glued to a counter or an amount ("34건", "1,234만원",
"5배", "12k", "3x", "2bn", "USD1200") is a claim like any other. Everything here is pure text processing, so it is
tested directly.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

logger = logging.getLogger(__name__)

MARKER_RE = re.compile(r"\[(\d{1,4})\]")
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
    re.compile(r"\d{1,2}:\d{2}(?::\d{2})?"),
    re.compile(rf"\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"),
    re.compile(rf"\b\d{{1,2}}\s+{_MONTH}(?:,?\s+\d{{4}})?\b"),
    re.compile(rf"\b{_MONTH}\s+\d{{4}}\b"),
]
_LABEL_BEFORE_RE = re.compile(
    r"(?:\b(?:figure|fig\.|table|section|chart|step|part|chapter|appendix|page|p\.|item)|그림|표|단계)\s*$",
    re.IGNORECASE,
)
# A rank names a place, never an amount: only a small integer follows ("Top 5", "rank 3", "#1", "상위 5개").
_RANK_BEFORE_RE = re.compile(r"(?:\b(?:top|bottom|rank|no\.)|상위|하위|#)\s*$", re.IGNORECASE)
# Suffixes glued to a number that make it an amount or a count, a claim ("1,234만원", "5배", "12k", "3x", "34건").
_AMOUNT_SUFFIX_RE = re.compile(r"(?:만|억|천|조|원|배|달러|퍼센트|프로|%|(?:k|K|M|x|X|bn|mn)(?![A-Za-z0-9_]))")
_COUNTER_SUFFIX_RE = re.compile(r"(?:건|개|명|회|곳|가지|종|점|시간)")
_CURRENCY_BEFORE_RE = re.compile(r"(?<![A-Za-z])(?:USD|KRW|EUR|JPY|GBP|CNY|AUD|CAD)$")


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


def _spans(text: str) -> list[tuple[int, int]]:
    spans = [m.span() for m in MARKER_RE.finditer(text)]
    for pattern in _DATE_RES:
        spans += [m.span() for m in pattern.finditer(text)]
    return spans


def _inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(lo <= start and end <= hi for lo, hi in spans)


def _is_year(token: str) -> bool:
    return token.isdigit() and len(token) == 4 and 1900 <= int(token) <= 2100


def claim_suffix(text: str, end: int) -> str | None:
    """``"amount"`` or ``"counter"`` when a unit or counter is glued after the number ending at ``end``, else None."""
    if _AMOUNT_SUFFIX_RE.match(text, end):
        return "amount"
    return "counter" if _COUNTER_SUFFIX_RE.match(text, end) else None


def _is_code(prev: str, nxt: str) -> bool:
    """Digits after ASCII letters or next to an underscore name a thing ("Q3", "FRUITPROMO5", "SKU_12")."""
    return "_" in (prev, nxt) or (prev.isascii() and prev.isalpha())


def _is_rank(text: str, start: int, token: str) -> bool:
    return bool(_RANK_BEFORE_RE.search(text[:start])) and token.isdigit() and len(token) <= 4


def _not_a_claim(text: str, start: int, end: int, token: str) -> bool:
    prev = text[start - 1] if start > 0 else ""
    nxt = text[end] if end < len(text) else ""
    if _CURRENCY_BEFORE_RE.search(text[max(0, start - 4) : start]):
        return False  # "USD1200" is an amount, not a code
    if _is_code(prev, nxt) or prev == "제":
        return True  # "Q3", "FRUITPROMO5", "제3회" (the third)
    suffix = claim_suffix(text, end)
    if suffix is not None:  # "34건", "5배", "12k", "40%": a quantity, unless a rank counts places ("상위 5개")
        return suffix == "counter" and _is_rank(text, start, token)
    if nxt.isalpha() or prev.isalpha():
        return True  # glued to a word: "30s", "50대", "500ml", "1st", "3월", "15일", "제3"
    if prev in {".", ","} and start > 1 and text[start - 2].isdigit():
        return True  # the tail of a version or code ("1.2.3")
    if _is_year(token) or _is_rank(text, start, token):
        return True
    if _LABEL_BEFORE_RE.search(text[:start]):
        return True  # "Figure 2", "Table 1", "Section 3.2"
    # List numbering at the start of a paragraph: "1. ", "2) ".
    return not text[:start].strip() and nxt in {".", ")"} and "." not in token and "," not in token


def find_numbers(text: str) -> list[NumberToken]:
    """Every number in ``text`` that reads as a claim, marked cited or not."""
    spans = _spans(text)
    tokens: list[NumberToken] = []
    for match in NUMBER_RE.finditer(text):
        start, end, token = match.start(), match.end(), match.group(0)
        if _inside(spans, start, end) or _not_a_claim(text, start, end, token):
            continue
        if start > 0 and text[start - 1] == "-" and (start < 2 or not text[start - 2].isalnum()):
            start, token = start - 1, "-" + token
        cited = bool(_UNIT_THEN_MARKER_RE.match(text, end))
        tokens.append(NumberToken(start, end, token, cited))
    return tokens


def value_before(text: str, marker_start: int) -> str | None:
    """The printed value (number plus unit text) just before a marker, or None when there is no number."""
    match = _VALUE_BEFORE_RE.search(text[:marker_start].rstrip())
    return match.group(1).strip() if match else None


def printed_matches(text: str, marker_start: int, expected: str) -> bool:
    """Whether the text right before a marker is exactly ``expected`` (not just ending with its digits)."""
    before = text[:marker_start].rstrip()
    if not before.endswith(expected):
        return False
    head = before[: len(before) - len(expected)]
    if not head:
        return True
    prev = head[-1]
    # "116,431,923 KRW" ends with "16,431,923 KRW" but is another number; so is "-836" for "836".
    if expected[:1].isdigit() or expected[:1] == "-":
        return not (prev.isdigit() or prev in ".,-")
    return True
