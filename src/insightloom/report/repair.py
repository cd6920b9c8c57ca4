"""How a report draft is repaired after a refusal or an audit: what may not be printed is taken out, the rest kept.

The renderer's refusals and the audit's findings name what is wrong (``report.problems`` lines, audit_findings.json).
Any Reporter, a hosted model or the offline one, can repair its draft with these functions instead of writing it
afresh: a typed "value [N]" becomes the reference of the cited calculation, a sentence holding a number no
verified calculation backs is dropped (a table cell gets "-"), and so is a sentence holding a claim word ("is
rising", "main driver") that cites no claim, or citing a claim that contradicts an earlier one. Every other line
stays word for word.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable

from insightloom.calc_refs import ANY_REF_RE, CALC_REF_RE, CLAIM_REF_RE, calc_ids, claim_ids, claim_reference, reference
from insightloom.report.claim_rules import SENTENCE_END_RE as _SENTENCE_END_RE
from insightloom.report.numbers import find_numbers
from insightloom.report.problems import (
    CONTRADICTION,
    CONTROL,
    NEAR_MISS,
    TYPED,
    UNCHECKED,
    UNKNOWN,
    UNSUPPORTED,
    UNVERIFIED,
    WRONG_KIND,
    ProblemLine,
    read_problems,
)

_REFUSED_REFERENCE_KINDS = {UNKNOWN, UNVERIFIED, UNCHECKED, CONTRADICTION}
_LEAD_RE = re.compile(r"^\s*(?:[-*]\s+|\d+[.)]\s+|#+\s+)?")
_CELL_RE = re.compile(r"(?<=\|)[^|]*(?=\|)")


def _typed(value: str | None, marker: str) -> re.Pattern[str]:
    """A typed "<value> [N]" (or the bare marker) in Markdown, not inside another number or a calc id."""
    head = rf"(?<![\w.,]){re.escape(value)}\s*" if value else ""
    return re.compile(head + re.escape(marker))


def drop_sentences(line: str, pattern: re.Pattern[str]) -> str:
    """Remove the sentences of a prose line that match; a table row gets "-" in place of the match instead."""
    if line.lstrip().startswith("|"):
        return pattern.sub("-", line)
    lead = _LEAD_RE.match(line).group(0)  # type: ignore[union-attr]
    kept = [part for part in _SENTENCE_END_RE.split(line[len(lead) :]) if not pattern.search(part)]
    return (lead + " ".join(kept)) if kept else ""


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A claim phrase as written in Markdown: any spacing or bold markup between its words, any case."""
    words = [re.escape(word) for word in phrase.split()]
    return re.compile(r"(?<![A-Za-z0-9_])" + r"[\s*]+".join(words) + r"(?![A-Za-z0-9_])", re.IGNORECASE)


def _unsupported(part: str, pattern: re.Pattern[str]) -> bool:
    return bool(pattern.search(part)) and not CLAIM_REF_RE.search(part)


def _drop_unsupported(line: str, pattern: re.Pattern[str]) -> str:
    """``line`` without the sentences (a table row: the cells) holding the phrase and citing no claim."""
    if line.lstrip().startswith("|"):
        return _CELL_RE.sub(lambda cell: " - " if _unsupported(cell.group(0), pattern) else cell.group(0), line)
    lead = _LEAD_RE.match(line).group(0)  # type: ignore[union-attr]
    parts = _SENTENCE_END_RE.split(line[len(lead) :])
    kept = [part for part in parts if not _unsupported(part, pattern)]
    if len(kept) == len(parts):
        return line
    return (lead + " ".join(kept)) if kept else ""


def drop_claim_phrases(markdown: str, phrases: set[str]) -> str:
    """The report without the sentences (or table cells) that hold one of ``phrases`` and cite no claim."""
    lines = markdown.splitlines()
    for phrase in sorted(phrases):
        pattern = _phrase_pattern(phrase)
        lines = [_drop_unsupported(line, pattern) for line in lines]
    return "\n".join(lines) + "\n"


def patch_report(markdown: str, findings_text: str) -> str:
    """Fix only what the audit flagged, keeping every other line as it was.

    - B (wrong value before a marker): the typed "value [N]" becomes the reference of the cited calculation;
    - C (undefined marker) and A (typed number without a marker): the sentence holding it is dropped (a table cell
      gets "-"), since no verified calculation backs it;
    - E (unsupported or contradicted claim): a sentence holding the claim phrase and citing no claim is dropped, and
      so are the sentences citing a claim that is not verified or that contradicts an earlier one; a claim whose
      printed words were edited needs no patch (rendering report.md prints them again);
    - D (never cited) is a warning and changes nothing.
    A finding whose text is not in report.md (say, the DOCX was edited afterwards) needs no patch: rendering
    report.md again restores the document.
    """
    findings = json.loads(findings_text).get("findings", [])
    lines = markdown.splitlines()
    for finding in findings:
        kind, marker, value = finding.get("type"), finding.get("marker"), finding.get("body_value")
        if kind == "B" and marker and finding.get("cited_calculation_id"):
            pattern, replacement = _typed(value, marker), "{{calc:" + finding["cited_calculation_id"] + "}}"
            lines = [pattern.sub(replacement, line) for line in lines]
        elif kind == "C" and marker:
            pattern = _typed(value, marker)
            lines = [drop_sentences(line, pattern) if pattern.search(line) else line for line in lines]
        elif kind == "A" and value:
            lines = _drop_number(lines, str(value))
        elif kind == "E":
            lines = _patch_claim(lines, finding)
    return "\n".join(lines) + "\n"


def _patch_claim(lines: list[str], finding: dict[str, object]) -> list[str]:
    """The lines without what an E finding names: its unsupported phrase, or its unverified or contradicting claim."""
    problem, claim_id = finding.get("problem"), finding.get("cited_calculation_id")
    if problem == "phrase" and finding.get("phrase"):
        return drop_claim_phrases("\n".join(lines), {str(finding["phrase"])}).splitlines()
    if problem in ("unverified", "contradiction") and claim_id:
        return drop_references("\n".join(lines), {str(claim_id)}).splitlines()
    return lines


def _types(part: str, value: str) -> bool:
    """Whether ``value`` is typed in ``part`` as the renderer reads numbers, so glued shapes ("34건", "12k", "1.2M")
    are found as it found them."""
    return any(token.text == value and not token.cited for token in find_numbers(CALC_REF_RE.sub("", part)))


def _drop_typed(line: str, value: str) -> str:
    """``line`` without the sentences (a table row: the cells, as "-") where ``value`` is typed."""
    if line.lstrip().startswith("|"):
        return _CELL_RE.sub(lambda cell: " - " if _types(cell.group(0), value) else cell.group(0), line)
    lead = _LEAD_RE.match(line).group(0)  # type: ignore[union-attr]
    kept = [part for part in _SENTENCE_END_RE.split(line[len(lead) :]) if not _types(part, value)]
    return (lead + " ".join(kept)) if kept else ""


def _drop_number(lines: list[str], value: str) -> list[str]:
    """Drop the sentences (or empty the table cells) where ``value`` is typed outside any reference."""
    return [_drop_typed(line, value) if _types(line, value) else line for line in lines]


def drop_typed_numbers(markdown: str, numbers: set[str]) -> str:
    """The report without the passages holding numbers the renderer refused as typed."""
    lines = markdown.splitlines()
    for number in sorted(numbers):
        lines = _drop_number(lines, number)
    return "\n".join(lines) + "\n"


def without_refused(markdown: str, typed: set[str], charts: set[str]) -> str:
    """The draft without the passages holding the typed numbers and the charts a refusal named."""
    return drop_charts(drop_typed_numbers(markdown, typed), charts)


def drop_charts(markdown: str, charts: set[str]) -> str:
    """The report without the image lines of ``charts`` (their sidecar captions cannot be printed)."""
    kept = [line for line in markdown.splitlines() if not any(line.strip().endswith(f"]({c})") for c in charts)]
    return "\n".join(kept) + "\n"


def refusals(results: Iterable[str]) -> tuple[set[str], set[str], set[str]]:
    """From render refusals (the tool results' problem lines): the calculation and claim ids, typed numbers and
    charts the next draft must leave out."""
    problems: list[ProblemLine] = [p for text in results for p in read_problems(text)]
    banned = {
        cid
        for p in problems
        if p.kind in _REFUSED_REFERENCE_KINDS
        for cid in calc_ids(p.subject) + claim_ids(p.subject)
    }
    charts = {chart for p in problems if (chart := p.chart)}
    typed = {p.subject for p in problems if p.kind == TYPED and not p.chart}
    return banned, typed, charts


def drop_references(markdown: str, calc_ids_: set[str]) -> str:
    """The report without the sentences (or with "-" for the table cells) citing any of ``calc_ids_`` (as a number
    or as a claim)."""
    lines = markdown.splitlines()
    for calc_id in sorted(calc_ids_):
        pattern = re.compile(f"{re.escape(reference(calc_id))}|{re.escape(claim_reference(calc_id))}")
        lines = [drop_sentences(line, pattern) if pattern.search(line) else line for line in lines]
    return "\n".join(lines) + "\n"


def _drop_written(markdown: str, written: set[str]) -> str:
    """The report without the sentences holding a near-miss reference exactly as it was written."""
    lines = markdown.splitlines()
    for text in sorted(written):
        pattern = re.compile(re.escape(text))
        lines = [drop_sentences(line, pattern) if text in line else line for line in lines]
    return "\n".join(lines) + "\n"


def _without_controls(markdown: str, problems: list[ProblemLine]) -> str:
    codes = {p.subject for p in problems if p.kind == CONTROL and re.fullmatch(r"U\+[0-9A-F]{4,6}", p.subject)}
    return markdown.translate({int(code[2:], 16): None for code in codes})


def _swap_kinds(markdown: str, problems: list[ProblemLine]) -> str:
    """A claim cited as ``{{calc:ID}}`` becomes ``{{claim:ID}}``, and a number cited as a claim ``{{calc:ID}}``."""
    for problem in problems:
        if problem.kind == WRONG_KIND and (match := ANY_REF_RE.fullmatch(problem.subject)):
            ref, calc_id = match.groups()
            swapped = (reference if ref == "claim" else claim_reference)(calc_id)
            markdown = markdown.replace(problem.subject, swapped)
    return markdown


def repair_refused(markdown: str, refusal_text: str) -> str:
    """Repair a draft from a render refusal's problem lines, keeping every other line word for word.

    A refused reference (unknown, unverified, unchecked, a claim contradicting an earlier one) or a near miss loses
    its sentence (a table cell gets "-"), a typed number and a claim word that cites no claim likewise, a reference
    of the wrong kind is written as the other kind, a chart whose caption holds a number or a claim word is left
    out, and a control character is deleted.
    """
    problems = read_problems(refusal_text)
    banned, typed, charts = refusals([refusal_text])
    repaired = drop_references(without_refused(_swap_kinds(markdown, problems), typed, charts), banned)
    repaired = _drop_written(repaired, {p.subject for p in problems if p.kind == NEAR_MISS})
    phrases = {p.subject for p in problems if p.kind == UNSUPPORTED and not p.chart}
    return _without_controls(drop_claim_phrases(repaired, phrases) if phrases else repaired, problems)


def _short(line: str, width: int = 90) -> str:
    line = line.strip()
    return line if len(line) <= width else line[: width - 3] + "..."


def describe_changes(before: str, after: str, *, limit: int = 8) -> list[str]:
    """What a repair changed, one line each: a line changed (old -> new) or dropped, at most ``limit`` lines."""
    old, new = before.splitlines(), after.splitlines()
    changes: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        gone = [line for line in old[i1:i2] if line.strip()]
        kept = [line for line in new[j1:j2] if line.strip()]
        changes += [f'changed "{_short(a)}" -> "{_short(b)}"' for a, b in zip(gone, kept, strict=False)]
        changes += [f'dropped "{_short(line)}"' for line in gone[len(kept) :]]
        changes += [f'added "{_short(line)}"' for line in kept[len(gone) :]]
    if len(changes) > limit:
        changes = changes[:limit] + [f"... and {len(changes) - limit} more"]
    return changes
