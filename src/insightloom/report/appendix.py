"""The references appendix: what each citation marker stands for, kept short enough to read.

One line per marker once took 4½ of a 10-page report, mostly repeating itself ("[6] Number of Region groups —
number of Region groups", "[1] Number of rows — len(df)"). So the appendix is compact, by these rules, which the
renderer prints by and the audit reads back by (:func:`is_appendix_line`):

- a trivially defined count (:func:`is_trivial`: unit ``count`` and a formula such as ``len(df)``, ``df.shape[1]``,
  ``number of Region groups``, ``number of month periods``) needs no marker: the text prints it bare and the appendix
  leaves it out; so does the first or last period of a time axis (formula ``first period``, ``last period``), a
  label read off the axis;
- entries are grouped by the report section (top-level heading) where their marker first appears, under that
  heading's printed text;
- a formula is shown once: the entries sharing it are listed together on one line, ``[3] A; [7] B — formula``, in
  the section of the first of them;
- a formula that only repeats its description in other words is left out (``[6] Number of Region groups``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from insightloom.calc_refs import ANY_REF_RE
from insightloom.report.calcinfo import CalcInfo
from insightloom.report.markdown_blocks import plain_text
from insightloom.report.numbers import find_numbers

__all__ = [
    "DASH",
    "Entry",
    "appendix_groups",
    "bare_spans",
    "bare_values",
    "entry_line",
    "first_sections",
    "is_appendix_line",
    "is_tautological",
    "is_trivial",
]

DASH = "\u2014"
# What a count is trivially defined by: the table's shape, or the number of groups or periods of a breakdown.
_TRIVIAL_FORMULA_RE = re.compile(
    r"^\s*(?:len\(\s*df(?:\.index|\.columns)?\s*\)|df\.shape\[\s*[01]\s*\]"
    r"|number\s+of\s+(?:rows|columns|(?:.+\s)?(?:groups(?:\s+with\s+an?\s+.+\s+value)?|periods)))\s*$",
    re.IGNORECASE,
)
# The label of a time axis's end: read off the axis, no computation to cite.
_PERIOD_LABEL_RE = re.compile(r"^\s*(?:first|last)\s+period\s*$", re.IGNORECASE)
_WORD_RE = re.compile(r"\w+")
# Words of a trivial count's description that say nothing of what it counts.
_COUNT_STOP_WORDS = frozenset(
    ("number", "of", "the", "a", "an", "and", "in", "per", "by", "with", "each", "value", "values", "df", "len")
    + ("shape", "index", "수", "의", "개")
)
_WORDS_BEFORE, _WORDS_AFTER, _NEAR_CHARS = 4, 3, 60
_WITH_VALUE_RE = re.compile(r"\bwith\s+an?\s+.+?\s+value\b")
_ENTRY_START_RE = re.compile(r"(?:^|; )(\[\d{1,4}\]) ")
Span = tuple[int, int]


def _field(calc: CalcInfo | Mapping[str, Any], name: str) -> Any:
    return getattr(calc, name, None) if isinstance(calc, CalcInfo) else calc.get(name)


def is_trivial(calc: CalcInfo | Mapping[str, Any]) -> bool:
    """Whether a calculation is a trivially defined count that the report prints bare, with no marker.

    Args:
        calc: A :class:`CalcInfo` or a ``calculations[]`` record of calculation_metadata.json.

    Returns:
        True for a number (not a claim) of unit ``count`` whose formula is the table's shape (``len(df)``,
        ``df.shape[1]``) or a number of rows, columns, groups or periods, and for a time axis's first or last
        period label.
    """
    kind = "claim" if isinstance(calc, CalcInfo) and calc.is_claim else _field(calc, "kind")
    if kind == "claim":
        return False
    formula = str(_field(calc, "formula") or "")
    unit = str(_field(calc, "unit") or "").strip().lower()
    return bool(_PERIOD_LABEL_RE.match(formula)) or (unit == "count" and bool(_TRIVIAL_FORMULA_RE.match(formula)))


def _words(text: str) -> str:
    return " ".join(_WORD_RE.findall(plain_text(text)[0].lower()))


def is_tautological(description: str, formula: str) -> bool:
    """Whether the formula only says the description again: its words are the description's, in the same order
    ("Number of Region groups" / "number of Region groups", "First month period" / "first period")."""
    said, how = iter(_words(description).split()), _words(formula).split()
    return bool(how) and all(word in said for word in how)  # ``in`` consumes the iterator: an ordered subsequence


@dataclass(frozen=True)
class Entry:
    """One marker of the appendix: ``[N]`` and the calculation's description and formula."""

    marker: str
    description: str
    formula: str


def _formula_key(formula: str) -> str:
    return " ".join(formula.split())


def entry_line(entries: Sequence[Entry]) -> str:
    """The Markdown of one appendix line: entries sharing one formula, then the formula unless it says nothing more.

    ``[1] Total Revenue — df['Revenue'].sum()``, ``[3] Revenue for North; [4] Revenue for South — sum of Revenue by
    Region``, ``[6] Number of Region groups``.
    """
    named = "; ".join(" ".join(part for part in (e.marker, e.description.strip()) if part) for e in entries)
    formula = entries[0].formula.strip()
    if not formula or all(is_tautological(e.description, formula) for e in entries):
        return named
    return f"{named} {DASH} {formula}"


def first_sections(texts: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Reference id -> the section it first appears in.

    Args:
        texts: ``(section, text)`` in reading order: each printed text of the report (Markdown, references not yet
            filled in) and the top-level heading above it.
    """
    found: dict[str, str] = {}
    for section, text in texts:
        for match in ANY_REF_RE.finditer(text):
            found.setdefault(match.group(2), section)
    return found


def appendix_groups(
    sections: Mapping[str, str], markers: Mapping[str, str], calcs: Mapping[str, CalcInfo]
) -> list[tuple[str, list[str]]]:
    """The appendix as ``(section, [line Markdown, ...])`` in reading order.

    Args:
        sections: Reference id -> the section where it first appears (:func:`first_sections`).
        markers: Reference id -> its marker in marker order; an empty marker (a trivial count) is left out.
        calcs: The calculations and claims by id.
    """
    by_formula: dict[str, list[str]] = {}
    for calc_id, marker in markers.items():
        if marker and calc_id in calcs:
            by_formula.setdefault(_formula_key(calcs[calc_id].formula), []).append(calc_id)
    groups: dict[str, list[str]] = {}
    for ids in by_formula.values():  # in the order of each formula's first marker, so of reading
        entries = [Entry(markers[i], calcs[i].description, calcs[i].formula) for i in ids]
        groups.setdefault(sections.get(ids[0], ""), []).append(entry_line(entries))
    return list(groups.items())


def is_appendix_line(line: str, markers: Mapping[str, CalcInfo], headings: Collection[str]) -> bool:
    """Whether a line after the References heading is one the renderer prints there.

    Args:
        line: The printed line.
        markers: Marker ("[3]") -> its calculation.
        headings: The printed headings of the report's body: a section's label repeats one.

    Returns:
        True for a section label, or exactly :func:`entry_line` of known markers that share one formula.
    """
    if line.strip() in headings:
        return True
    found = _ENTRY_START_RE.findall(line)
    infos = [markers.get(marker) for marker in found]
    if not infos or any(info is None for info in infos):
        return False
    known = [info for info in infos if info is not None]
    if len({_formula_key(info.formula) for info in known}) != 1:
        return False
    entries = [Entry(marker, info.description, info.formula) for marker, info in zip(found, known, strict=True)]
    return plain_text(entry_line(entries))[0] == line


def _counted_words(info: CalcInfo) -> frozenset[str]:
    """The words that say what a trivial count counts ("rows", "Region", "groups", "행"), from its description and
    formula."""
    text = _WITH_VALUE_RE.sub(" ", f"{info.description} {info.formula}".lower())  # "... with a Sales value"
    words = _WORD_RE.findall(text)
    return frozenset(w for w in words if w not in _COUNT_STOP_WORDS and (len(w) >= 3 or _is_hangul(w)))


def _is_hangul(word: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" for ch in word)


def _names(token: str, word: str) -> bool:
    """The text's word is the counted word: the same word, its singular or plural ("1 row", "rows"), or a Korean
    word with its particle ("행과")."""
    return token in (word, word + "s", word.removesuffix("s")) or (_is_hangul(word) and token.startswith(word))


def bare_values(calcs: Mapping[str, CalcInfo]) -> dict[str, frozenset[str] | None]:
    """What the verified trivial counts print as (no marker follows them), each with the words that must stand
    beside it to say what it counts; None for a period label, a name of its own that may stand anywhere."""
    found: dict[str, frozenset[str] | None] = {}
    for info in calcs.values():
        if info.status != "verified" or not is_trivial(info):
            continue
        value, known = info.formatted(), found.get(info.formatted(), frozenset())
        label = bool(_PERIOD_LABEL_RE.match(info.formula))
        words = _counted_words(info)
        # a count whose description names nothing it counts may stand anywhere, as a label does
        found[value] = None if label or known is None or not words else known | words
    return found


def _says_what_it_counts(text: str, start: int, end: int, words: frozenset[str], context: str) -> bool:
    """Whether one of ``words`` is among the few words before or after the number, or in ``context``
    (a table cell's row and column labels). A Korean particle may follow the word ("행과")."""
    near = _WORD_RE.findall(text[max(0, start - _NEAR_CHARS) : start].lower())[-_WORDS_BEFORE:]
    near += _WORD_RE.findall(text[end : end + _NEAR_CHARS].lower())[:_WORDS_AFTER]
    near += _WORD_RE.findall(context.lower())
    return any(_names(token, word) for token in near for word in words)


def bare_spans(text: str, values: Mapping[str, frozenset[str] | None], context: str = "") -> list[Span]:
    """The numbers in printed ``text`` that are exactly a verified trivial count's value and say what they count
    ("1,200 rows", "Region has 4 groups"; a period label anywhere): cited though bare. A bare "12" beside anything
    else ("rose by 12 units") is a number to cite.

    Args:
        text: The printed text.
        values: :func:`bare_values`.
        context: For a table cell, its row's first cell and its column's header ("Rows").
    """
    if not values:
        return []
    spans = []
    for token in find_numbers(text):
        if token.text not in values:
            continue
        words = values[token.text]
        if words is None or _says_what_it_counts(text, token.start, token.end, words, context):
            spans.append((token.start, token.end))
    return spans
