"""How a report draft is repaired after a refusal or an audit: what may not be printed is taken out, the rest kept.

The renderer's refusals and the audit's findings name what is wrong (``report.problems`` lines, audit_findings.json).
Any Reporter, a hosted model or the offline one, can repair its draft with these functions instead of writing it
afresh: a typed "value [N]" becomes the reference of the cited calculation, and a sentence holding a number no
verified calculation backs is dropped (a table cell gets "-"). Every other line stays word for word.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable

from insightloom.calc_refs import CALC_REF_RE, calc_ids, reference
from insightloom.report.problems import (
    CONTROL,
    NEAR_MISS,
    TYPED,
    UNCHECKED,
    UNKNOWN,
    UNVERIFIED,
    ProblemLine,
    read_problems,
)

_SENTENCE_END_RE = re.compile(r"(?<=[.!?。])\s+")
_REFUSED_REFERENCE_KINDS = {UNKNOWN, UNVERIFIED, UNCHECKED}


def _typed(value: str | None, marker: str) -> re.Pattern[str]:
    """A typed "<value> [N]" (or the bare marker) in Markdown, not inside another number or a calc id."""
    head = rf"(?<![\w.,]){re.escape(value)}\s*" if value else ""
    return re.compile(head + re.escape(marker))


def drop_sentences(line: str, pattern: re.Pattern[str]) -> str:
    """Remove the sentences of a prose line that match; a table row gets "-" in place of the match instead."""
    if line.lstrip().startswith("|"):
        return pattern.sub("-", line)
    lead = re.match(r"^\s*(?:[-*]\s+|\d+[.)]\s+|#+\s+)?", line).group(0)  # type: ignore[union-attr]
    kept = [part for part in _SENTENCE_END_RE.split(line[len(lead) :]) if not pattern.search(part)]
    return (lead + " ".join(kept)) if kept else ""


def patch_report(markdown: str, findings_text: str) -> str:
    """Fix only what the audit flagged, keeping every other line as it was.

    - B (wrong value before a marker): the typed "value [N]" becomes the reference of the cited calculation;
    - C (undefined marker) and A (typed number without a marker): the sentence holding it is dropped (a table cell
      gets "-"), since no verified calculation backs it;
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
    return "\n".join(lines) + "\n"


def _drop_number(lines: list[str], value: str) -> list[str]:
    """Drop the sentences (or empty the table cells) where ``value`` is typed outside any reference."""
    pattern = re.compile(rf"(?<![\w.,]){re.escape(value)}(?![\w])")
    return [drop_sentences(line, pattern) if pattern.search(CALC_REF_RE.sub("", line)) else line for line in lines]


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
    """From render refusals (the tool results' problem lines): the calculation ids, typed numbers and charts the
    next draft must leave out."""
    problems: list[ProblemLine] = [p for text in results for p in read_problems(text)]
    banned = {cid for p in problems if p.kind in _REFUSED_REFERENCE_KINDS for cid in calc_ids(p.subject)}
    charts = {chart for p in problems if (chart := p.chart)}
    typed = {p.subject for p in problems if p.kind == TYPED and not p.chart}
    return banned, typed, charts


def drop_references(markdown: str, calc_ids_: set[str]) -> str:
    """The report without the sentences (or with "-" for the table cells) citing any of ``calc_ids_``."""
    lines = markdown.splitlines()
    for calc_id in sorted(calc_ids_):
        pattern = re.compile(re.escape(reference(calc_id)))
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


def repair_refused(markdown: str, refusal_text: str) -> str:
    """Repair a draft from a render refusal's problem lines, keeping every other line word for word.

    A refused reference (unknown, unverified, unchecked) or a near miss loses its sentence (a table cell gets "-"),
    a typed number likewise, a chart whose caption holds a number is left out, and a control character is deleted.
    """
    problems = read_problems(refusal_text)
    banned, typed, charts = refusals([refusal_text])
    repaired = drop_references(without_refused(markdown, typed, charts), banned)
    repaired = _drop_written(repaired, {p.subject for p in problems if p.kind == NEAR_MISS})
    return _without_controls(repaired, problems)


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
