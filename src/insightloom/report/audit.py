"""Deterministic audit of the finished DOCX against citations.json.

Findings:
    A (block) a number that claims something without being cited: cited means inside the exact span the renderer
              prints for a marker, ``<formatted value> [N]``, so a number merely near a marker (``12.5% led by
              North [4]``) or before a wrong value's marker is A too;
    B (block) a marker whose preceding printed value is not ``format_value`` of the cited calculation;
    C (block) an undefined marker: a ``[N]`` that no citation has, or a reference left unfilled in the text
              (``{{calc:x}}``, ``{{claim:x}}``, a near miss such as ``{calc:x}``, any leftover ``{{...}}``);
    D (warn)  a tracked calculation never cited;
    E (block) an unsupported or contradicted claim (``report.claim_audit``): a claim phrase ("is rising", "main
              driver") in a sentence with no claim's marker, a claim's marker whose printed text is not the claim's
              sentence or whose claim is not verified, or two printed claims that contradict.

The body is every paragraph (the title, headings and figure captions included) and table cell before the References
heading, and every other paragraph of the document as prose: nested tables, content controls, headers and footers,
and any line after the References heading that the appendix does not print (``report.appendix``: a section's label,
or ``[N] <description>; [M] ... — <formula>`` of known markers). The text of a paragraph includes tracked
insertions and simple fields. The descriptions printed in the References are the Coder's words and are not checked
for numbers. What is a label rather than a claim (a table's header row and first column, label-style runs from
backticks, the data's names and category values, a heading's own numbering) is decided by ``report.labels``, the
rule the renderer refuses typed numbers by, so a report that rendered never yields A; a trivially defined count
(``appendix.is_trivial``) is printed bare and cited by its exact value. Verdict: ``pass`` without A, B, C and E;
else ``retry`` while retries remain, then ``needs_review``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zipfile import BadZipFile

from docx import Document
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.exceptions import PackageNotFoundError
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from docx.text.run import Run

from insightloom.calc_refs import (
    ANY_REF_RE,
    CLAIM_FSTRING_HINT,
    FSTRING_HINT,
    claim_reference,
    find_near_misses,
    reference,
)
from insightloom.errors import BadInputError
from insightloom.fileio import MAX_READ_BYTES, open_regular, write_json
from insightloom.report.appendix import bare_spans, bare_values, is_appendix_line, is_trivial
from insightloom.report.calcinfo import CalcInfo, load_calc_info
from insightloom.report.claim_audit import claim_findings, claim_spans
from insightloom.report.labels import (
    LABEL_STYLE,
    QUOTE_STYLE,
    Labels,
    Span,
    is_label_cell,
    load_labels,
    section_number_spans,
    uncited_claims,
)
from insightloom.report.numbers import MARKER_RE, printed_matches, value_before
from insightloom.report.render import DOCX_NAME, REFERENCES_HEADINGS
from insightloom.timeutil import utc_now

logger = logging.getLogger(__name__)

FINDINGS_FILE = "audit_findings.json"
BLOCK, WARN = "block", "warn"
_REF_HEADINGS = {*REFERENCES_HEADINGS.values(), "참고문헌"}
_REF_LINE_RE = re.compile(r"^\s*\[(\d{1,4})\]\s+(.*?)\s+\u2014\s+(.*)$", re.DOTALL)
_EXCERPT = 120


@dataclass
class TextUnit:
    """One paragraph or table cell of the body, with where it is and which of its runs are labels."""

    text: str
    location: str
    claims_numbers: bool = True  # False in a table's label cells, where only measures are claims
    label_spans: list[Span] = field(default_factory=list)
    heading: bool = False
    quote_spans: list[Span] = field(default_factory=list)
    context: str = ""  # a table cell's row and column labels: what a bare count in it counts


@dataclass
class AuditResult:
    """The audit's verdict and findings (also written to audit_findings.json)."""

    verdict: str
    findings: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    retry_count: int = 0
    max_retries: int = 2
    findings_path: Path | None = None

    @property
    def passed(self) -> bool:
        """True when the verdict is ``pass`` (the CLI's ``audit`` exit code 0)."""
        return self.verdict == "pass"

    def to_text(self, limit: int = 5) -> str:
        """A short summary for the Auditor agent: verdict, counts, then the blocking findings first."""
        s = self.stats
        lines = [
            f"Audit verdict: {self.verdict} (retry {self.retry_count}/{self.max_retries}); "
            f"A={s.get('type_a', 0)} B={s.get('type_b', 0)} C={s.get('type_c', 0)} D={s.get('type_d', 0)} "
            f"E={s.get('type_e', 0)}"
        ]
        ordered = sorted(self.findings, key=lambda f: (f["severity"] != BLOCK, f["type"]))
        for finding in ordered[:limit]:
            lines.append(f"- {finding['type']} {finding['location']}: {finding['suggested_fix']}")
        if len(ordered) > limit:
            lines.append(f"- ... {len(ordered) - limit} more in {FINDINGS_FILE}")
        return "\n".join(lines)


def _style_name(paragraph: Paragraph) -> str:
    try:
        return paragraph.style.name if paragraph.style is not None else ""
    except (KeyError, ValueError):
        return ""


def _run_style(run: Run) -> str:
    if run._r.style is None:  # most runs: no character style at all
        return ""
    try:
        return run.style.name if run.style is not None else ""
    except (KeyError, ValueError):
        return ""


def _xml_text(p: Any) -> str:
    """All the text a ``w:p`` shows, tracked insertions and fields included (not the text of paragraphs inside it)."""
    parts = []
    for node in p.iter(qn("w:t"), qn("w:tab"), qn("w:br"), qn("w:cr")):
        if next(node.iterancestors(qn("w:p")), None) is not p:
            continue  # a text box's own paragraph: audited as its own unit
        parts.append(node.text or "" if node.tag == qn("w:t") else "\t" if node.tag == qn("w:tab") else "\n")
    return "".join(parts)


def _label_text(paragraphs: list[Paragraph]) -> tuple[str, list[Span], list[Span]]:
    """The paragraphs' text (joined by newlines, as a cell's text is), the spans of its label-style runs and of its
    plan-quote runs."""
    text = ""
    spans: list[Span] = []
    quotes: list[Span] = []
    for i, paragraph in enumerate(paragraphs):
        text += "\n" if i else ""
        runs = paragraph.runs
        shown = _xml_text(paragraph._p)
        if "".join(run.text for run in runs) != shown:  # hyperlinks, fields, insertions: no run offsets to trust
            text += shown
            continue
        for run in runs:
            style = _run_style(run)
            if style in (LABEL_STYLE, QUOTE_STYLE):
                (spans if style == LABEL_STYLE else quotes).append((len(text), len(text) + len(run.text)))
            text += run.text
    return text, spans, quotes


def _other_units(doc: Any, covered: set[Any], section: str) -> list[TextUnit]:
    """Every paragraph the walk of the body's top level did not read, and the headers' and footers': prose."""
    elements = [p for p in doc.element.body.iter(qn("w:p")) if p not in covered]
    for rel in doc.part.rels.values():
        if rel.reltype in (RT.HEADER, RT.FOOTER) and not rel.is_external:
            elements += list(rel.target_part.element.iter(qn("w:p")))
    units = []
    for n, element in enumerate(elements, 1):
        text, spans, _ = _label_text([Paragraph(element, doc)])
        if text.strip():
            units.append(TextUnit(text, f"paragraph {n} outside the body's flow (section '{section}')", True, spans))
    return units


def _read_docx(path: Path, job_dir: Path) -> tuple[list[TextUnit], list[str]]:
    """Body units (paragraphs and cells before the References heading, then every other paragraph) and the
    paragraphs after the References heading.

    python-docx reads the handle ``fileio`` opened (no link followed, a regular file, size-capped), never the path.
    """
    with open_regular(path, beneath=job_dir, max_bytes=MAX_READ_BYTES) as (handle, _):
        doc = Document(handle)
    body = doc.element.body
    items: list[Paragraph | Table] = []
    for child in body.iterchildren():
        if child.tag.endswith("}p"):
            items.append(Paragraph(child, doc))
        elif child.tag.endswith("}tbl"):
            items.append(Table(child, doc))
    ref_at = len(items)
    for i, item in enumerate(items):
        is_heading = isinstance(item, Paragraph) and _style_name(item).startswith("Heading")
        if is_heading and isinstance(item, Paragraph) and item.text.strip() in _REF_HEADINGS:
            ref_at = i
    units: list[TextUnit] = []
    section, para_no, table_no = "(title)", 0, 0
    covered: set[Any] = {item._p for item in items if isinstance(item, Paragraph)}
    for item in items[:ref_at]:
        if isinstance(item, Paragraph):
            para_no += 1
            style = _style_name(item)
            if style.startswith("Heading") or style == "Title":
                section = item.text.strip() or section
            label = f"paragraph {para_no} (section '{section}')"
            heading = style.startswith("Heading") or style == "Title"
            text, spans, quotes = _label_text([item])
            units.append(TextUnit(text, label, True, spans, heading, quotes))
        else:
            table_no += 1
            units += _table_units(item, table_no, section)
            covered.update(p._p for row in item.rows for cell in row.cells for p in cell.paragraphs)
    tail = [item for item in items[ref_at + 1 :] if isinstance(item, Paragraph)]
    covered.difference_update(p._p for p in tail)  # read below as reference lines, or as prose when they are not
    refs = [_xml_text(p._p) for p in tail]
    units += _other_units(doc, covered | {p._p for p in tail}, section)
    return units, [line for line in refs if line.strip()]


def _table_units(table: Table, table_no: int, section: str) -> list[TextUnit]:
    units: list[TextUnit] = []
    seen: set[Any] = set()  # holds the elements, so lxml keeps one proxy per cell and identity is stable
    n_rows, n_cols = len(table.rows), len(table.columns)
    header = [cell.text for cell in table.rows[0].cells] if n_rows else []  # an edited row may hold fewer cells
    for r, row in enumerate(table.rows):
        cells = row.cells
        for c, cell in enumerate(cells):
            if cell._tc in seen:
                continue  # a merged cell repeats across the grid
            seen.add(cell._tc)
            text, spans, _ = _label_text(cell.paragraphs)
            where = f"table {table_no} row {r + 1} col {c + 1} (section '{section}')"
            context = f"{header[c] if c < len(header) else ''} {cells[0].text}"
            units.append(TextUnit(text, where, not is_label_cell(r, c, n_rows, n_cols), spans, context=context))
    return units


def _stray_reference_units(refs: list[str], markers: dict[str, CalcInfo], headings: set[str]) -> list[TextUnit]:
    """Lines after the References heading that the appendix does not print: prose, audited as such."""
    return [
        TextUnit(line, f"line {n} after the References heading (section 'References')")
        for n, line in enumerate(refs, 1)
        if not is_appendix_line(line, markers, headings)
    ]


def _marker_map(calcs: dict[str, CalcInfo], refs: list[str]) -> dict[str, CalcInfo]:
    """Marker -> calculation: from citations.json, else from a References line matching description and formula."""
    mapping = {info.citation_id: info for info in calcs.values() if info.citation_id}
    by_text = {(info.description.strip(), info.formula.strip()): info for info in calcs.values()}
    for line in refs:
        match = _REF_LINE_RE.match(line)
        if not match:
            continue
        marker = f"[{match.group(1)}]"
        info = by_text.get((match.group(2).strip(), match.group(3).strip()))
        if marker not in mapping and info is not None:
            mapping[marker] = info
    return mapping


def _excerpt(text: str, at: int) -> str:
    lo = max(0, at - _EXCERPT // 2)
    return ("..." if lo else "") + text[lo : lo + _EXCERPT].strip() + ("..." if lo + _EXCERPT < len(text) else "")


def _marker_findings(unit: TextUnit, markers: dict[str, CalcInfo], cited: set[str]) -> list[dict[str, Any]]:
    findings: list[dict[str, Any]] = []
    for match in MARKER_RE.finditer(unit.text):
        marker = match.group(0)
        info = markers.get(marker)
        base = {"location": unit.location, "body_excerpt": _excerpt(unit.text, match.start()), "marker": marker}
        if info is None:
            fix = f"Marker {marker} matches no citation: re-render from report.md so markers come from the renderer."
            findings.append({"type": "C", "severity": BLOCK, **base, "suggested_fix": fix})
            continue
        cited.add(info.calc_id)
        if info.is_claim:
            continue  # a claim's marker is checked by its own rule (finding E)
        expected = info.formatted()
        if not printed_matches(unit.text, match.start(), expected):
            body_value = value_before(unit.text, match.start())
            fix = (
                f"Print {expected!r} before {marker} (calculation '{info.calc_id}'): write {{{{calc:{info.calc_id}}}}} "
                "and re-render instead of typing the number."
            )
            findings.append(
                {
                    "type": "B",
                    "severity": BLOCK,
                    **base,
                    "body_value": body_value,
                    "cited_value": expected,
                    "cited_calculation_id": info.calc_id,
                    "suggested_fix": fix,
                }
            )
    return findings


def _section_of(location: str) -> str:
    match = re.search(r"\(section '(.*)'\)$", location)
    return match.group(1) if match else "(title)"


def _a_fix(value: str, location: str) -> str:
    section = _section_of(location)
    return (
        f"In report.md, section '{section}': replace the typed number {value!r} with the {{{{calc:<id>}}}} reference "
        "of a verified calculation in citations.json, or delete the number (a name or code from the data, e.g. a "
        "product code, goes in `backticks`; a number goes as {{calc:<id>}}; a number in a figure caption comes from "
        "the chart's save_chart caption); then render "
        f"again (render_section('{section}', ...) and render_report())."
    )


def _number_findings(
    unit: TextUnit,
    labels: Labels,
    printed: dict[str, str],
    bare: dict[str, frozenset[str] | None],
    markers: dict[str, CalcInfo],
) -> list[dict[str, Any]]:
    numbering = section_number_spans(unit.text) if unit.heading else []
    return [
        {
            "type": "A",
            "severity": BLOCK,
            "location": unit.location,
            "body_excerpt": _excerpt(unit.text, token.start),
            "body_value": token.text,
            "marker": None,
            "suggested_fix": _a_fix(token.text, unit.location),
        }
        for token in uncited_claims(
            unit.text,
            labels,
            protected=unit.label_spans,
            printed=printed,
            cited=[*bare_spans(unit.text, bare, unit.context), *claim_spans(unit.text, markers)],
            numbering=numbering,
            label_cell=not unit.claims_numbers,
            quoted=unit.quote_spans,
        )
    ]


def _unfilled_findings(unit: TextUnit, known: list[str] | None, claims: list[str]) -> list[dict[str, Any]]:
    """References printed as text: a ``{{calc:x}}`` or ``{{claim:x}}`` the renderer never filled, or a near miss
    such as ``{calc:x}``."""
    found: list[tuple[str, str, int, str | None]] = [
        (m.group(0), m.group(2), m.start(), "claim" if m.group(1) == "claim" else None)
        for m in ANY_REF_RE.finditer(unit.text)
    ]
    misses = find_near_misses(unit.text, known, claims)
    found += [(miss.written, miss.calc_id, miss.start, miss.advice()) for miss in misses]
    findings = []
    for written, calc_id, at, advice in sorted(found, key=lambda item: item[2]):
        if advice == "claim":
            fix = (
                f"{written} was never filled in: keep {claim_reference(calc_id)} in report.md and render again "
                f"(a verified claim is filled in by the renderer; {CLAIM_FSTRING_HINT})."
            )
        elif advice:
            fix = f"In report.md, {advice}; then render again."
        else:
            fix = (
                f"{written} was never filled in: keep {reference(calc_id)} in report.md and render again "
                f"(a verified calculation is filled in by the renderer; {FSTRING_HINT})."
            )
        findings.append(
            {
                "type": "C",
                "severity": BLOCK,
                "location": unit.location,
                "body_excerpt": _excerpt(unit.text, at),
                "marker": written,
                "cited_calculation_id": calc_id,
                "suggested_fix": fix,
            }
        )
    return findings


def _uncited_findings(calcs: dict[str, CalcInfo], cited: set[str]) -> list[dict[str, Any]]:
    findings = []
    for info in calcs.values():
        if info.calc_id in cited or (info.status == "verified" and is_trivial(info)):
            continue  # a verified trivial count is printed bare: there is no marker to find
        if info.status == "verified":
            ref = (claim_reference if info.is_claim else reference)(info.calc_id)
            fix = f"Cite it with {ref} where the report discusses it, or leave it out on purpose."
        else:
            fix = f"It is {info.status} and cannot be cited; nothing to do unless the report needs it."
        findings.append(
            {
                "type": "D",
                "severity": WARN,
                "location": f"citations.json (calculation '{info.calc_id}')",
                "body_excerpt": info.description,
                "cited_calculation_id": info.calc_id,
                "cited_value": info.formatted(),
                "suggested_fix": fix,
            }
        )
    return findings


def _verdict(stats: dict[str, int], retry_count: int, max_retries: int) -> str:
    if not any(stats.get(f"type_{t}") for t in "abce"):  # D warns, the others block
        return "pass"
    return "retry" if retry_count < max_retries else "needs_review"


def audit_report(job_dir: Path, retry_count: int = 0, *, max_retries: int = 2) -> AuditResult:
    """Audit ``final_report.docx`` and write ``audit_findings.json``.

    Args:
        job_dir: The job folder (reads final_report.docx, citations.json and cache/profile.json for labels).
        retry_count: How many times the Reporter has already rewritten after an audit.
        max_retries: Rewrites allowed before the verdict becomes ``needs_review``.

    Returns:
        The :class:`AuditResult`.

    Raises:
        BadInputError: final_report.docx is missing or unreadable (UnsafePathError: a link, not a regular file, or
            too large).
    """
    job_dir = Path(job_dir)
    docx_path = job_dir / DOCX_NAME
    try:
        units, refs = _read_docx(docx_path, job_dir)
    except FileNotFoundError:
        raise BadInputError(f"{docx_path} not found", "Render the report (render_report) before auditing it.") from None
    except (PackageNotFoundError, BadZipFile, KeyError, ValueError, OSError, SyntaxError) as exc:  # XMLSyntaxError
        raise BadInputError(
            f"{docx_path} is not a readable DOCX ({type(exc).__name__}: {exc})",
            "Render the report again (render_report) to rewrite final_report.docx, then audit it.",
        ) from exc
    calcs = load_calc_info(job_dir, required=False)
    markers = _marker_map(calcs, refs)
    units += _stray_reference_units(refs, markers, {unit.text.strip() for unit in units if unit.heading})
    bare = bare_values(calcs)
    printed = {marker: info.formatted() for marker, info in markers.items() if not info.is_claim}
    labels = load_labels(job_dir)
    claims = [calc_id for calc_id, info in calcs.items() if info.is_claim]
    cited: set[str] = set()
    findings: list[dict[str, Any]] = []
    for unit in units:
        findings += _marker_findings(unit, markers, cited)
        findings += _unfilled_findings(unit, list(calcs) or None, claims)
        findings += _number_findings(unit, labels, printed, bare, markers)
    findings += claim_findings(units, markers, calcs, labels)
    findings += _uncited_findings(calcs, cited)
    stats = {f"type_{t.lower()}": sum(1 for f in findings if f["type"] == t) for t in "ABCDE"}
    verdict = _verdict(stats, retry_count, max_retries)
    result = AuditResult(verdict, findings, stats, retry_count, max_retries, job_dir / "audit_findings.json")
    write_json(
        job_dir / "audit_findings.json",
        {
            "audit_metadata": {
                "audited_at": utc_now(),
                "docx_path": DOCX_NAME,
                "retry_count": retry_count,
                "max_retries": max_retries,
            },
            "verdict": verdict,
            "stats": stats,
            "findings": findings,
        },
        beneath=job_dir,
    )
    logger.info("audit %s: %s", job_dir.name, result.to_text().splitlines()[0])
    return result
