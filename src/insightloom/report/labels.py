"""Which numbers in report text are claims that need a citation: one rule for the renderer and the audit.

The renderer refuses a typed number and the audit flags one left in the DOCX (finding A), so both must agree on what
is *not* a claim, or a render that passed could still fail its audit. On top of :func:`find_numbers` (years, dates,
ordinals, figure/section numbers, codes and labels glued to a word), these are labels rather than numbers:

- text in backticks, which the DOCX prints in the :data:`LABEL_STYLE` character style;
- a table's header row and first column (the group keys: "2024", "10001", "Plan 500");
- the data's column names and category values from ``cache/profile.json`` that are at least
  :data:`MIN_NAME_CHARS` characters long and shaped like a name (a year, a ZIP code, "Plan 500"; never "15.5%");
- a short quoted name (``"Plan 500"``): words, then one plain integer that ends it (``"grew 12.5% in 34 stores"``
  and ``"3 regions"`` are claims in quotes);
- a heading's own numbering ("2. Revenue", "3.1 Channels").

A number is cited only inside the exact span the renderer prints for a reference, ``<formatted value> [N]``. Those
spans are masked before anything else is decided, so the renderer (which masks what it substituted) and the audit
(which masks each marker's exact printed value) look at the same text.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from insightloom.errors import InsightloomError
from insightloom.fileio import read_json
from insightloom.report.markdown_blocks import plain_text
from insightloom.report.numbers import (
    MARKER_RE,
    NumberToken,
    SpanSet,
    claim_suffix,
    find_numbers,
    is_currency,
    printed_matches,
)
from insightloom.validation.jobfiles import PROFILE_FILE

logger = logging.getLogger(__name__)

__all__ = [
    "LABEL_STYLE",
    "MIN_NAME_CHARS",
    "QUOTE_STYLE",
    "Labels",
    "is_label_cell",
    "is_measure",
    "load_labels",
    "printed_spans",
    "section_number_spans",
    "typed_claims",
    "uncited_claims",
]

LABEL_STYLE = "Data Label"
# The plan's own words quoted in the limitations: written by the renderer only (no Markdown makes this style).
QUOTE_STYLE = "Plan Quote"
MIN_NAME_CHARS = 4
Span = tuple[int, int]
MASK = "\ufffc"  # stands in for a printed value: no letter, digit, space or punctuation a rule looks at
_MAX_QUOTED = 60
_MEASURE_RE = re.compile(r"%|\d[.,]\d")
_DIGITS_RE = re.compile(r"\d+")
# "2. Revenue", "3.1 Channels", "4) Outlook", "5 Risks" at the start of a heading: 1-2 digit parts, the first at
# most 20, never followed by a scale or unit ("12.5 million", "12.5 억원", "3 % growth").
_SECTION_NUMBER_RE = re.compile(
    r"^\s*(?:[1-9]|1\d|20)(?:\.\d{1,2}(?!\d))*+[.)]?(?=\s)"
    r"(?!\s*(?:million|billion|thousand|trillion|bn|mn|m|k|억|만|천|조|원|%|percent|퍼센트)(?![A-Za-z]))",
    re.IGNORECASE,
)
_QUOTE_PAIRS = [('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("\u2018", "\u2019"), ("\u00ab", "\u00bb")]
_QUOTE_PAIRS += [("\u300c", "\u300d"), ("\u300e", "\u300f")]  # 「」 『』
_QUOTED_RE = re.compile(
    "|".join(
        rf"(?<!\w){re.escape(a)}[^{re.escape(b)}\n]{{1,{_MAX_QUOTED}}}{re.escape(b)}(?!\w)" for a, b in _QUOTE_PAIRS
    )
)


@dataclass(frozen=True)
class Labels:
    """Names from the data that may hold digits without being claims (column names, category values).

    ``words`` are every column name and category value, lowercased: a backtick span naming one of them is a label
    that claim words may stand in (a category ``Rising``), while any other backtick text is prose.
    """

    names: tuple[str, ...] = ()
    words: frozenset[str] = frozenset()

    def is_name(self, text: str) -> bool:
        """Whether ``text`` (a label span's text, backticks or not) is one of the data's names."""
        return text.strip().strip("`").strip().lower() in self.words

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        if not self.names:
            return None
        alternatives = "|".join(re.escape(name) for name in self.names)
        return re.compile(rf"(?<![\w.,])(?:{alternatives})(?!\w|[.,]\d)", re.IGNORECASE)

    def spans(self, text: str) -> list[Span]:
        """Where a name stands whole in ``text`` (not inside a longer number or word)."""
        return [m.span() for m in self._pattern.finditer(text)] if self._pattern else []


def _label_text(value: Any) -> str | None:
    """A data name that may stand for its digits in prose: long enough, and a name or a bare integer (a ZIP code)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    if not any(ch.isdigit() for ch in text) or len(text) < MIN_NAME_CHARS:
        return None  # a name without digits never hides a number; "3" or "12" would hide every 3 and 12
    return text if text.isdigit() or (any(ch.isalpha() for ch in text) and "%" not in text) else None


def _table_label(name: str) -> str | None:
    """A table's name as a label: any length once it has a letter ("T1M" for t1m.csv), since it only matches whole
    and so never hides a bare number; digits alone follow :func:`_label_text`."""
    text = name.strip()
    return text if any(ch.isalpha() for ch in text) and any(ch.isdigit() for ch in text) else _label_text(text)


def _column_values(column: dict[str, Any]) -> list[Any]:
    """A column's name and, for a category, the values its profile entry lists."""
    values: list[Any] = [column.get("name")]
    if column.get("role") == "category":
        values += [tv.get("value") for tv in column.get("top_values") or [] if isinstance(tv, dict)]
        values += list(column.get("samples") or [])
    return values


def _column_labels(column: dict[str, Any]) -> list[str]:
    return [text for text in map(_label_text, _column_values(column)) if text]


def _column_words(column: dict[str, Any]) -> set[str]:
    """A column's name and, for a category, its values, lowercased (what a backtick label may name)."""
    values = _column_values(column)
    return {str(value).strip().lower() for value in values if isinstance(value, str | int | float) and str(value)}


def _table_names(table: dict[str, Any]) -> list[str]:
    """What names a table: its view, file stem, sheet and database table, also with ``_`` and ``-`` as spaces, as a
    title says them ("Sales 2024 report" for ``sales_2024.csv``, "T100K" for ``t100k.csv``)."""
    file = table.get("file")
    found = [
        table.get("view"),
        Path(file).stem if isinstance(file, str) else None,
        table.get("sheet"),
        table.get("table"),
    ]
    names = [name for name in found if isinstance(name, str) and name]
    return sorted({variant for name in names for variant in (name, re.sub(r"[_-]+", " ", name).strip())})


def load_labels(job_dir: Path) -> Labels:
    """The data's names: its tables' names, and the column names and category values of the job's data profile
    (none when there is no profile)."""
    path = Path(job_dir) / PROFILE_FILE
    if not path.is_file():
        return Labels()
    try:
        profile = read_json(path, beneath=Path(job_dir))
    except (OSError, ValueError, InsightloomError) as exc:
        logger.warning("cannot read labels from %s: %s", path, exc)
        return Labels()
    names: list[str] = []
    words: set[str] = set()
    for table in profile.get("tables", []) if isinstance(profile, dict) else []:
        names += [text for text in map(_table_label, _table_names(table)) if text] if isinstance(table, dict) else []
        for column in table.get("columns", []) if isinstance(table, dict) else []:
            names += _column_labels(column) if isinstance(column, dict) else []
            words |= _column_words(column) if isinstance(column, dict) else set()
    return Labels(tuple(sorted(set(names), key=len, reverse=True)), frozenset(words))  # longest first: "Plan 500"


def is_label_cell(row: int, col: int, n_rows: int, n_cols: int) -> bool:
    """A table's header row and first column name things (0-based row and column).

    Only in a real table, with a body row and at least two columns: a header-only or one-column table is prose.
    """
    return n_rows >= 2 and n_cols >= 2 and (row == 0 or col == 0)


def is_measure(text: str, token: NumberToken) -> bool:
    """A number shaped like a measure, a claim even where labels stand: a %, a decimal, a thousands separator or an
    amount/counter glued after it ("12.5%", "1,642,000", "34건")."""
    tail = text[token.end : token.end + 2].lstrip()
    return bool(_MEASURE_RE.search(token.text)) or tail.startswith("%") or claim_suffix(text, token.end) is not None


def section_number_spans(text: str) -> list[Span]:
    """A heading's own numbering ("2. Revenue", "3.1 Channels"), which is not a claim."""
    match = _SECTION_NUMBER_RE.match(text)
    return [match.span()] if match else []


def _label_shaped(text: str) -> bool:
    """Text that may hold one number and still be a name: no %, decimal or thousands separator, one number at
    most, no amount or counter glued to it, and the number is not a count of the words after it ("34 orders")."""
    numbers = list(_DIGITS_RE.finditer(text))
    if _MEASURE_RE.search(text) or len(numbers) > 1:
        return False
    if not numbers:
        return True
    number = numbers[0]
    words_after = text[number.end() :].strip()
    if claim_suffix(text, number.end()) is not None or (words_after and text[number.end() : number.end() + 1] == " "):
        return False
    return any(ch.isalpha() for ch in text) and not _after_currency(text[: number.start()])


def _after_currency(head: str) -> bool:
    """Whether a currency symbol or code stands right before the number ("KRW 1642", "$ 34", "Rs1200")."""
    head = head.rstrip(" +-")
    word = head.split()[-1] if head.split() else ""
    return head[-1:] in "$€£₩¥" and bool(head) or is_currency(word)


def _name_shaped(quoted: str) -> bool:
    """A quoted name ("Plan 500", "Gold 7", "Premium Plan 500"): label-shaped, ending in its one number, and at most
    two words or every word before the number capitalised.

    Not a quoted claim: "grew 12.5% in 34 stores", "3 regions", "orders reached 34", "총 주문은 34", "34건".
    """
    words, _, number = quoted.strip().rpartition(" ")
    if not number.isdigit() or not _label_shaped(quoted) or not words:
        return False
    names = words.split()
    return len(names) == 1 or (len(names) == 2 and all(name[:1].isupper() for name in names))


def _quoted_spans(text: str) -> list[Span]:
    return [m.span() for m in _QUOTED_RE.finditer(text) if _name_shaped(m.group(0)[1:-1])]


def printed_spans(text: str, printed: Mapping[str, str]) -> list[Span]:
    """Each ``<value> [N]`` whose value is exactly what the renderer prints for marker ``[N]``: the cited spans."""
    spans = []
    for match in MARKER_RE.finditer(text):
        expected = printed.get(match.group(0))
        if expected and printed_matches(text, match.start(), expected):
            end = _end_before_spaces(text, match.start())
            spans.append((end - len(expected), match.end()))
    return spans


def _end_before_spaces(text: str, at: int) -> int:
    """Where the text before offset ``at`` ends once trailing spaces are left out (without copying the text)."""
    while at > 0 and text[at - 1].isspace():
        at -= 1
    return at


def _mask(text: str, spans: Iterable[Span]) -> str:
    chars = list(text)
    for lo, hi in spans:
        chars[lo:hi] = MASK * (hi - lo)
    return "".join(chars)


def uncited_claims(
    text: str,
    labels: Labels,
    *,
    protected: Iterable[Span] = (),
    printed: Mapping[str, str] | None = None,
    cited: Iterable[Span] = (),
    numbering: Iterable[Span] = (),
    label_cell: bool = False,
    quoted: Iterable[Span] = (),
) -> list[NumberToken]:
    """The numbers in printed ``text`` that claim something without a citation.

    A number is cited only inside a printed ``<value> [N]`` span; every other number that is not a label is a claim
    (a number next to a text value's marker too: "12.5% led by North [4]").

    Args:
        text: The text as the DOCX shows it (values and markers filled in, Markdown markup removed).
        labels: The data's names (:func:`load_labels`).
        protected: Spans that are labels by their formatting (backtick text, the label style).
        printed: Marker ("[3]") -> the value the renderer prints before it (the audit finds the cited spans so).
        cited: The spans the renderer itself filled in (the renderer's check).
        numbering: A heading's own section number (:func:`section_number_spans`).
        label_cell: The text is a table's label cell (:func:`is_label_cell`): only measures in it are claims.
        quoted: Spans of the plan's words the renderer itself quoted (:data:`QUOTE_STYLE`): never claims.
    """
    masked = _mask(text, [*cited, *printed_spans(text, printed or {})])
    # Backticks make a name a label, not a number: `12.5% growth` or `34 orders` in backticks is still a claim.
    named = [(lo, hi) for lo, hi in protected if _label_shaped(text[lo:hi])]
    spans = SpanSet([*named, *quoted, *numbering, *labels.spans(masked), *_quoted_spans(masked)])
    tokens = [token for token in find_numbers(masked) if not spans.overlaps(token.start, token.end)]
    return [token for token in tokens if is_measure(masked, token)] if label_cell else tokens


def typed_claims(markdown: str, labels: Labels) -> list[NumberToken]:
    """The claim-numbers of a free Markdown text with no references, such as a chart's title or caption."""
    text, label_spans = plain_text(markdown)
    return uncited_claims(text, labels, protected=label_spans)
