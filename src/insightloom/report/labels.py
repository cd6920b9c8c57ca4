"""Which numbers in report text are claims that need a citation: one rule for the renderer and the audit.

The renderer refuses a typed number and the audit flags one left in the DOCX (finding A), so both must agree on what
is *not* a claim, or a render that passed could still fail its audit. On top of :func:`find_numbers` (years, dates,
ordinals, figure/section numbers, numbers glued to letters), these are labels rather than numbers:

- text in backticks, which the DOCX prints in the :data:`LABEL_STYLE` character style;
- a table's header row and first column (the group keys: "2024", "10001", "Plan 500");
- the data's column names and category values from ``cache/profile.json`` (a year or ZIP code used as a group key);
- a short quoted label that holds a letter (``"Plan 500"``), never a quoted bare number (``"12.5%"``);
- a value the renderer printed before its marker (a cited text value such as "Store 5 Premium Members" [4]).
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
from insightloom.report.numbers import MARKER_RE, NumberToken, find_numbers, printed_matches
from insightloom.validation.jobfiles import PROFILE_FILE

logger = logging.getLogger(__name__)

__all__ = ["LABEL_STYLE", "Labels", "is_label_cell", "load_labels", "uncited_claims"]

LABEL_STYLE = "Data Label"
Span = tuple[int, int]
_MAX_QUOTED = 60
_QUOTE_PAIRS = [('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("\u2018", "\u2019"), ("\u00ab", "\u00bb")]
_QUOTE_PAIRS += [("\u300c", "\u300d"), ("\u300e", "\u300f")]  # 「」 『』
_QUOTED_RE = re.compile(
    "|".join(
        rf"(?<!\w){re.escape(a)}[^{re.escape(b)}\n]{{1,{_MAX_QUOTED}}}{re.escape(b)}(?!\w)" for a, b in _QUOTE_PAIRS
    )
)


@dataclass(frozen=True)
class Labels:
    """Names from the data that may hold digits without being claims (column names, category values)."""

    names: tuple[str, ...] = ()

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
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text if any(ch.isdigit() for ch in text) else None  # a name without digits never hides a number


def _column_labels(column: dict[str, Any]) -> list[str]:
    values: list[Any] = [column.get("name")]
    if column.get("role") == "category":
        values += [tv.get("value") for tv in column.get("top_values") or [] if isinstance(tv, dict)]
        values += list(column.get("samples") or [])
    return [text for text in map(_label_text, values) if text]


def load_labels(job_dir: Path) -> Labels:
    """The column names and category values of the job's data profile (none when there is no profile)."""
    path = Path(job_dir) / PROFILE_FILE
    if not path.is_file():
        return Labels()
    try:
        profile = read_json(path, beneath=Path(job_dir))
    except (OSError, ValueError, InsightloomError) as exc:
        logger.warning("cannot read labels from %s: %s", path, exc)
        return Labels()
    names: list[str] = []
    for table in profile.get("tables", []) if isinstance(profile, dict) else []:
        for column in table.get("columns", []) if isinstance(table, dict) else []:
            names += _column_labels(column) if isinstance(column, dict) else []
    return Labels(tuple(sorted(set(names), key=len, reverse=True)))  # longest first: "Plan 500" before "500"


def is_label_cell(row: int, col: int) -> bool:
    """A table's header row and first column name things (0-based row and column)."""
    return row == 0 or col == 0


def _quoted_spans(text: str) -> list[Span]:
    return [m.span() for m in _QUOTED_RE.finditer(text) if any(ch.isalpha() for ch in m.group(0))]


def _printed_value_spans(text: str, printed: Mapping[str, str]) -> list[Span]:
    """The renderer's own value before each marker, when it is exactly what the renderer prints."""
    spans = []
    for match in MARKER_RE.finditer(text):
        expected = printed.get(match.group(0))
        if expected and printed_matches(text, match.start(), expected):
            end = len(text[: match.start()].rstrip())
            spans.append((end - len(expected), end))
    return spans


def _overlaps(spans: Iterable[Span], token: NumberToken) -> bool:
    return any(lo < token.end and token.start < hi for lo, hi in spans)


def uncited_claims(
    text: str, labels: Labels, *, protected: Iterable[Span] = (), printed: Mapping[str, str] | None = None
) -> list[NumberToken]:
    """The numbers in printed ``text`` that claim something without a citation.

    Args:
        text: The text as the DOCX shows it (values and markers filled in, Markdown markup removed).
        labels: The data's names (:func:`load_labels`).
        protected: Spans that are labels by their formatting (backtick text, the label style).
        printed: Marker ("[3]") -> the value the renderer prints before it.
    """
    spans = [*protected, *labels.spans(text), *_quoted_spans(text), *_printed_value_spans(text, printed or {})]
    return [token for token in find_numbers(text) if not token.cited and not _overlaps(spans, token)]
