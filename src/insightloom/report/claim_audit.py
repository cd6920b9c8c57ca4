"""The audit's finding E, "unsupported or contradicted claim", read from the final DOCX.

E blocks like A-C. It is raised for:

- a claim phrase ("is rising", "main driver", "evenly", "유의") in a sentence that holds no claim's marker, say a
  sentence edited into the DOCX after rendering;
- a claim's marker whose printed text is not the claim's sentence (``claims.wording.claim_text``, in English or in
  Korean: a report's claims are printed in its language);
- a claim's marker whose claim is not verified (its re-computed verdict differed);
- two printed claims that contradict (``claims.contradictions``).

Phrases and contradictions are found by ``report.claim_rules``, the rule the renderer refuses them by, so a report
that rendered never yields E.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from insightloom.claims.table import LANGUAGES
from insightloom.report.calcinfo import CalcInfo
from insightloom.report.claim_rules import CitedClaim, claim_hints, contradicting, unsupported_phrases
from insightloom.report.labels import Labels
from insightloom.report.numbers import MARKER_RE, printed_matches

__all__ = ["claim_findings", "claim_spans"]

E, BLOCK = "E", "block"
Span = tuple[int, int]
_EXCERPT = 120


class Unit(Protocol):
    """A paragraph or table cell of the DOCX as the audit reads it (``audit.TextUnit``)."""

    text: str
    location: str
    label_spans: list[Span]
    quote_spans: list[Span]


def _excerpt(text: str, at: int) -> str:
    lo = max(0, at - _EXCERPT // 2)
    return ("..." if lo else "") + text[lo : lo + _EXCERPT].strip() + ("..." if lo + _EXCERPT < len(text) else "")


def _printed_claim(text: str, marker_start: int, info: CalcInfo) -> str | None:
    """The claim's sentence (in whichever language it was printed) right before its marker, or None."""
    for language in LANGUAGES:
        try:
            expected = info.claim_text(language)
        except ValueError:
            return None
        if printed_matches(text, marker_start, expected):
            return expected
    return None


def _claim_markers(text: str, markers: dict[str, CalcInfo]) -> list[tuple[re.Match[str], CalcInfo]]:
    return [(m, info) for m in MARKER_RE.finditer(text) if (info := markers.get(m.group(0))) and info.is_claim]


def _end_before_spaces(text: str, at: int) -> int:
    while at > 0 and text[at - 1].isspace():
        at -= 1
    return at


def claim_spans(text: str, markers: dict[str, CalcInfo]) -> list[Span]:
    """The spans ``<claim sentence> [N]`` printed exactly as the renderer prints them: their numbers are cited."""
    spans = []
    for match, info in _claim_markers(text, markers):
        expected = _printed_claim(text, match.start(), info)
        if expected is not None:
            spans.append((_end_before_spaces(text, match.start()) - len(expected), match.end()))
    return spans


def _finding(unit: Unit, at: int, problem: str, fix: str, **extra: Any) -> dict[str, Any]:
    """One E finding; ``problem`` says which (``phrase``, ``text``, ``unverified``, ``contradiction``), so a repair
    knows what to take out of report.md."""
    return {
        "type": E,
        "severity": BLOCK,
        "problem": problem,
        "location": unit.location,
        "body_excerpt": _excerpt(unit.text, at),
        "marker": None,
        **extra,
        "suggested_fix": fix,
    }


def _marker_problems(unit: Unit, markers: dict[str, CalcInfo], cited: list[str]) -> list[dict[str, Any]]:
    """Claims' markers printed with another text, or citing a claim that is not verified."""
    findings = []
    for match, info in _claim_markers(unit.text, markers):
        marker, ref = match.group(0), "{{claim:" + info.calc_id + "}}"
        cited.append(info.calc_id)
        base = {"marker": marker, "cited_calculation_id": info.calc_id, "cited_value": str(info.value)}
        if info.status != "verified":
            fix = (
                f"Claim '{info.calc_id}' behind {marker} is {info.status} (its re-computed verdict differs): in "
                f"report.md, drop the sentence citing {ref}; then render again."
            )
            findings.append(_finding(unit, match.start(), "unverified", fix, **base))
        elif _printed_claim(unit.text, match.start(), info) is None:
            fix = (
                f"The text before {marker} is not what claim '{info.calc_id}' says ({info.claim_text('en')!r}): "
                f"keep {ref} in report.md and render again instead of editing the claim's words."
            )
            findings.append(_finding(unit, match.start(), "text", fix, **base))
    return findings


def _phrase_problems(
    unit: Unit, markers: dict[str, CalcInfo], calcs: dict[str, CalcInfo], labels: Labels | None
) -> list[dict[str, Any]]:
    """Claim phrases in a sentence that holds no claim's marker."""
    # a claim backs its printed sentence as the renderer placed it, and its marker when the sentence was edited
    spans = {(match.start(), match.end()): info for match, info in _claim_markers(unit.text, markers)}
    supported = [CitedClaim.of(span, info) for span, info in spans.items()]
    protected = [*unit.quote_spans, *claim_spans(unit.text, markers)]
    findings = []
    for hit in unsupported_phrases(unit.text, claims=supported, protected=protected, labels=unit.label_spans,
                                   names=labels):  # fmt: skip
        hints = claim_hints(calcs, hit.kind)
        tracked = f"verified claims: {', '.join(hints)}" if hints else "no claim is verified"
        fix = (
            f"'{hit.phrase}' states a verdict no claim check backs: in report.md, state it with {{{{claim:ID}}}} in "
            f"that sentence ({tracked}) or drop the word; then render again (a sentence edited into the DOCX is "
            "gone once report.md is rendered again)."
        )
        findings.append(_finding(unit, hit.start, "phrase", fix, phrase=hit.phrase, claim_kind=hit.kind))
    return findings


def _contradiction_problems(
    units: Sequence[Unit], markers: dict[str, CalcInfo], cited: Iterable[str]
) -> list[dict[str, Any]]:
    """Printed claims that cannot both stand, at the later one's first marker."""
    order = list(dict.fromkeys(cited))
    by_id = {info.calc_id: info for info in markers.values()}
    first: dict[str, tuple[Unit, int]] = {}
    for unit in units:
        for match, info in _claim_markers(unit.text, markers):
            first.setdefault(info.calc_id, (unit, match.start()))
    findings = []
    for a, b, why in contradicting(by_id[c] for c in order):
        later, other = (b, a) if order.index(b) > order.index(a) else (a, b)
        unit, at = first[later]
        fix = (
            f"Claims '{other}' and '{later}' contradict ({why}): in report.md keep one of them and drop the sentence "
            f"citing {{{{claim:{later}}}}} (or {{{{claim:{other}}}}}); then render again."
        )
        marker = by_id[later].citation_id
        findings.append(_finding(unit, at, "contradiction", fix, marker=marker, cited_calculation_id=later))
    return findings


def claim_findings(
    units: Sequence[Unit], markers: dict[str, CalcInfo], calcs: dict[str, CalcInfo], labels: Labels | None = None
) -> list[dict[str, Any]]:
    """Every E finding of the document's units, in reading order (contradictions last).

    Args:
        units: The body's paragraphs and cells, in reading order.
        markers: Marker ("[3]") -> calculation, claims among them.
        calcs: Every tracked calculation (to name the verified claims in a fix).
        labels: The data's names: claim words in a backtick label are skipped only when it names one.
    """
    cited: list[str] = []
    findings: list[dict[str, Any]] = []
    for unit in units:
        findings += _marker_problems(unit, markers, cited)
        findings += _phrase_problems(unit, markers, calcs, labels)
    return findings + _contradiction_problems(units, markers, cited)
