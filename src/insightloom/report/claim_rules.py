"""Which claim words in report text are unsupported, and which cited claims contradict: one rule for the renderer
and the audit.

A claim phrase ("is rising", "main driver", "dominates", "evenly", "고르게", ...: ``claims.phrases``) may stand only in
a sentence that also cites a tracked claim backing it (``claims.phrases.phrase_backed_by``: the same kind, and a
verdict that says what the phrase says, so "is rising" beside a ``no_clear_trend`` claim is refused): a
``{{claim:ID}}`` in the Markdown, the claim's printed sentence and marker in the DOCX. Text that is a label
(backticks, the plan's quoted words) or that the renderer filled in itself (a claim's own sentence says "rising") is
never searched. Two cited claims that ``claims.contradictions`` pairs cannot both be printed. The renderer refuses
both cases and the audit flags them as E, by these same functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from insightloom.claims.contradictions import contradictions
from insightloom.claims.phrases import find_claim_phrases, phrase_backed_by, phrase_kind
from insightloom.report.calcinfo import CalcInfo
from insightloom.report.labels import Labels

__all__ = [
    "SENTENCE_END_RE",
    "CitedClaim",
    "PhraseHit",
    "claim_hints",
    "contradicting",
    "sentence_spans",
    "unsupported_phrases",
]

#: Where a sentence ends: after ``.``, ``!``, ``?`` or ``。`` and white space ("12.5" and "e.g.," stay whole).
SENTENCE_END_RE = re.compile(r"(?<=[.!?\u3002])\s+")
Span = tuple[int, int]
_HINT_LIMIT = 8


@dataclass(frozen=True)
class CitedClaim:
    """A claim printed in the searched text: where, and what it says (its kind and the verdict the Validator saw)."""

    span: Span
    kind: str
    verdict: str

    @classmethod
    def of(cls, span: Span, info: CalcInfo | None) -> CitedClaim:
        record = info.record if info is not None else {}
        return cls(span, str(record.get("claim_kind") or ""), str(info.value if info is not None else ""))


@dataclass(frozen=True)
class PhraseHit:
    """A claim phrase that no claim in its sentence supports.

    Attributes:
        phrase: The phrase as written ("is rising").
        kind: The claim kind it asserts (``trend``, ``driver``, ...).
        start: Its offset in the searched text.
        sentence: The sentence's span in the searched text.
    """

    phrase: str
    kind: str
    start: int
    sentence: Span


def sentence_spans(text: str) -> list[Span]:
    """The spans of ``text``'s sentences, in order (a table cell or a heading without a full stop is one)."""
    spans, last = [], 0
    for match in SENTENCE_END_RE.finditer(text):
        spans.append((last, match.start()))
        last = match.end()
    spans.append((last, len(text)))
    return [(lo, hi) for lo, hi in spans if text[lo:hi].strip()]


def _overlaps(spans: Iterable[Span], lo: int, hi: int) -> bool:
    return any(a < hi and lo < b for a, b in spans)


def unsupported_phrases(
    text: str,
    *,
    claims: Sequence[CitedClaim],
    protected: Sequence[Span] = (),
    labels: Sequence[Span] = (),
    names: Labels | None = None,
) -> list[PhraseHit]:
    """The claim phrases of printed ``text`` that no claim cited in their sentence backs.

    Args:
        text: The text as the DOCX prints it (references filled in, markup removed).
        claims: The claims printed in it (their sentence and marker, kind and verdict): a phrase in a sentence
            touching one that backs it (:func:`~insightloom.claims.phrases.phrase_backed_by`) is supported.
        protected: Spans never searched: the plan's quoted words and the values the renderer filled in (a claim's
            own sentence).
        labels: Backtick spans (the label style). Only those naming a column or category value of the data
            (``names``) are skipped: "`Revenue is rising`" in backticks is still a claim.
        names: The data's names (:func:`~insightloom.report.labels.load_labels`).
    """
    named = [(lo, hi) for lo, hi in labels if names is not None and names.is_name(text[lo:hi])]
    protected = [*protected, *named]
    hits = []
    for lo, hi in sentence_spans(text):
        cited = [claim for claim in claims if _overlaps([claim.span], lo, hi)]
        for match in find_claim_phrases(text[lo:hi]):
            start, end = lo + match.start(), lo + match.end()
            if _overlaps(protected, start, end) or any(phrase_backed_by(match, c.kind, c.verdict) for c in cited):
                continue
            hits.append(PhraseHit(match.group(0), phrase_kind(match), start, (lo, hi)))
    return hits


def _record(info: CalcInfo) -> dict[str, Any]:
    """The claim's record as ``claims.contradictions`` reads it, with the verdict the Validator saw."""
    return {**info.record, "id": info.calc_id, "kind": "claim", "value": info.value}


def contradicting(claims: Iterable[CalcInfo]) -> list[tuple[str, str, str]]:
    """The pairs among ``claims`` (in their order) that cannot both be printed: ``(first id, second id, why)``."""
    return contradictions([_record(info) for info in claims if info.is_claim])


def claim_hints(calcs: Mapping[str, CalcInfo], kind: str | None = None) -> list[str]:
    """The verified claims a fix may name, ``id (kind: verdict)``: those of ``kind`` first, at most a few."""
    verified = [info for info in calcs.values() if info.is_claim and info.status == "verified"]
    verified.sort(key=lambda info: info.record.get("claim_kind") != kind)
    return [f"{info.calc_id} ({info.record.get('claim_kind')}: {info.value})" for info in verified[:_HINT_LIMIT]]
