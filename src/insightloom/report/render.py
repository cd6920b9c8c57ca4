"""Render the Reporter's Markdown into final_report.docx, filling verified values with citation markers.

The Reporter never types a digit for a tracked number; it writes ``{{calc:ID}}``. Here each reference becomes the
value formatted by the shared rule plus ``[N]`` (numbered by first appearance). A reference to an unknown or
unverified calculation makes the whole render refuse, listing every offending reference at once, so the Reporter
can fix them all in one rewrite and such values never reach the document.
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docx import Document

from insightloom.errors import RenderRefused
from insightloom.fileio import write_json, write_text_atomic
from insightloom.fonts import INSTALL_HINT, find_cjk_font
from insightloom.report import docx_build as build
from insightloom.report.calcinfo import CalcInfo, load_calc_info
from insightloom.report.markdown_blocks import CALC_REF_RE, Block, parse_markdown
from insightloom.report.pdf import docx_to_pdf
from insightloom.validation.jobfiles import CITATIONS_FILE, load_citations

logger = logging.getLogger(__name__)

__all__ = ["RenderResult", "describe_problem", "docx_to_pdf", "references_heading", "render_report"]

DOCX_NAME = "final_report.docx"
MARKDOWN_NAME = "report.md"
REFERENCES_HEADINGS = {"en": "References", "ko": "참고 문헌"}
_HANGUL_RE = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_FALLBACK_CJK_FAMILY = "Malgun Gothic"
_EXCERPT = 100
_UNVALIDATED = "unvalidated"


@dataclass
class RenderResult:
    """What a successful render produced.

    Attributes:
        docx_path: The written final_report.docx.
        markers: Calculation id -> its marker ("[N]"), in marker order.
        charts: Chart paths (as written in the Markdown) that were embedded.
        tables: Number of tables rendered.
        warnings: Non-fatal problems (missing chart, no CJK font...).
    """

    docx_path: Path
    markers: dict[str, str] = field(default_factory=dict)
    charts: list[str] = field(default_factory=list)
    tables: int = 0
    warnings: list[str] = field(default_factory=list)


def is_korean(text: str) -> bool:
    """Whether the report is Korean (holds Hangul), which picks the references heading and the CJK font."""
    return bool(_HANGUL_RE.search(text))


def references_heading(markdown: str) -> str:
    """The References heading in the report's language."""
    return REFERENCES_HEADINGS["ko" if is_korean(markdown) else "en"]


def _excerpt(text: str, start: int) -> str:
    lo = max(0, start - _EXCERPT // 2)
    snippet = text[lo : lo + _EXCERPT].strip()
    return ("..." if lo else "") + snippet + ("..." if lo + _EXCERPT < len(text) else "")


def _assign_markers(
    blocks: list[Block], title: str, calcs: dict[str, CalcInfo], missing: str = "unknown"
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Number every reference by first appearance and collect the ones that may not be printed."""
    markers: dict[str, str] = {}
    problems: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    section = "(title)"
    texts = [("(title)", title)]
    for block in blocks:
        if block.kind == "heading":
            section = block.text
        texts += [(section, text) for text in block.texts()]
    for where, text in texts:
        for match in CALC_REF_RE.finditer(text):
            calc_id = match.group(1)
            info = calcs.get(calc_id)
            if info is None or info.status != "verified":
                status = missing if info is None else info.status
                excerpt = _excerpt(text, match.start())
                problem = {"calc_id": calc_id, "status": status, "section": where, "excerpt": excerpt}
                key = (calc_id, where, problem["excerpt"])
                if key not in seen:
                    seen.add(key)
                    problems.append(problem)
            elif calc_id not in markers:
                markers[calc_id] = f"[{len(markers) + 1}]"
    return markers, problems


def describe_problem(problem: dict[str, Any]) -> str:
    """One refused reference in words: which calculation, why it may not be printed, and in which passage."""
    state = {
        "unknown": "is not a tracked calculation",
        _UNVALIDATED: f"cannot be checked ({CITATIONS_FILE} is missing: run validation first)",
    }.get(problem["status"], f"has status '{problem['status']}'")
    return f"{{{{calc:{problem['calc_id']}}}}} {state}; section '{problem['section']}': \"{problem['excerpt']}\""


def _refuse(problems: list[dict[str, Any]]) -> None:
    lines = [f"The report references {len(problems)} value(s) that may not be printed:"]
    lines += [f"- {describe_problem(p)}" for p in problems]
    exc = RenderRefused(
        "\n".join(lines),
        "Rewrite those sentences without the value (or cite a verified calculation); "
        "only verified calculations can be printed.",
    )
    exc.problems = problems  # type: ignore[attr-defined]
    raise exc


def _substitute(text: str, markers: dict[str, str], calcs: dict[str, CalcInfo]) -> str:
    return CALC_REF_RE.sub(lambda m: f"{calcs[m.group(1)].formatted()} {markers[m.group(1)]}", text)


def _resolve_chart(job_dir: Path, written: str) -> Path | None:
    path = (job_dir / written).resolve()
    return path if path.is_relative_to(job_dir.resolve()) and path.is_file() else None


def _sidecar(path: Path) -> dict[str, Any]:
    sidecar = path.with_suffix(".json")
    if not sidecar.is_file():
        return {}
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        logger.warning("chart sidecar %s unreadable: %s", sidecar, exc)
        return {}
    return data if isinstance(data, dict) else {}


class _Builder:
    """Writes blocks into a python-docx Document, tracking figures, tables and warnings."""

    def __init__(
        self, job_dir: Path, east_asian: str | None, result: RenderResult, figure_label: str = "Figure"
    ) -> None:
        self.doc = Document()
        self.figure_label = figure_label
        self.job_dir = job_dir
        self.east_asian = east_asian
        self.result = result
        if east_asian:
            build.set_style_east_asian(self.doc, east_asian)

    def block(self, block: Block, sub: Any) -> None:
        ea = self.east_asian
        if block.kind == "heading":
            build.add_heading(self.doc, sub(block.text), max(block.level - 1, 1), ea)
        elif block.kind == "paragraph":
            build.add_paragraph(self.doc, sub(block.text), ea)
        elif block.kind == "bullet":
            build.add_paragraph(self.doc, sub(block.text), ea, style="List Bullet")
        elif block.kind == "number":
            build.add_paragraph(self.doc, sub(block.text), ea, style="List Number")
        elif block.kind == "table":
            build.add_table(self.doc, [[sub(cell) for cell in row] for row in block.rows], ea)
            self.result.tables += 1
        elif block.kind == "image":
            self.image(block)

    def image(self, block: Block) -> None:
        path = _resolve_chart(self.job_dir, block.path)
        if path is None:
            self.result.warnings.append(f"chart {block.path!r} not found inside the job folder; skipped")
            return
        meta = _sidecar(path)
        alt = block.text or str(meta.get("alt") or meta.get("title") or path.stem)
        caption = str(meta.get("caption") or alt)
        build.add_picture(self.doc, path, alt)
        self.result.charts.append(block.path)
        build.add_caption(self.doc, f"{self.figure_label} {len(self.result.charts)}: {caption}", self.east_asian)


def _east_asian_font(markdown: str, warnings: list[str]) -> str | None:
    if not is_korean(markdown):
        return None
    font = find_cjk_font()
    if font is None:
        warnings.append(f"no CJK font installed; Korean text names {_FALLBACK_CJK_FAMILY}. Fix: {INSTALL_HINT}")
        return _FALLBACK_CJK_FAMILY
    return font.family


def _save_docx(doc: Any, path: Path) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as handle:
        tmp = Path(handle.name)
    try:
        doc.save(str(tmp))
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _record_markers(job_dir: Path, markers: dict[str, str]) -> None:
    data = load_citations(job_dir, required=False)
    if data is None:
        return
    for entry in data["citations"]:
        entry["citation_id"] = markers.get(str(entry.get("calculation_id")))
    data.setdefault("metadata", {})["cited_calculations"] = sum(1 for e in data["citations"] if e["citation_id"])
    data["metadata"]["total_calculations"] = len(data["citations"])
    write_json(job_dir / CITATIONS_FILE, data, beneath=job_dir)


def render_report(
    markdown: str, job_dir: Path, *, title: str | None = None, status_note: str | None = None
) -> RenderResult:
    """Render the Reporter's Markdown to ``final_report.docx`` and record the markers in citations.json.

    Args:
        markdown: The report in the Markdown subset, with ``{{calc:ID}}`` references.
        job_dir: The job folder (reads citations.json, charts/; writes report.md, final_report.docx).
        title: Overrides the Markdown's ``# Title``.
        status_note: A visible note under the title (e.g. when the job ends ``needs_review``).

    Returns:
        The :class:`RenderResult`.

    Raises:
        RenderRefused: A reference names an unknown or non-verified calculation; ``err.problems`` lists each one.
            Only report.md is written then.
    """
    job_dir = Path(job_dir)
    write_text_atomic(job_dir / MARKDOWN_NAME, markdown, beneath=job_dir)
    blocks = parse_markdown(markdown)
    if blocks and blocks[0].kind == "heading" and blocks[0].level == 1:
        title = title or blocks.pop(0).text
    title = title or "Analysis Report"
    calcs = load_calc_info(job_dir, required=False)
    validated = (job_dir / CITATIONS_FILE).is_file()
    markers, problems = _assign_markers(blocks, title, calcs, "unknown" if validated else _UNVALIDATED)
    if problems:
        _refuse(problems)

    result = RenderResult(docx_path=job_dir / DOCX_NAME, markers=markers)
    figure_label = "그림" if is_korean(markdown) else "Figure"
    builder = _Builder(job_dir, _east_asian_font(markdown, result.warnings), result, figure_label)
    ea = builder.east_asian

    def sub(text: str) -> str:
        return _substitute(text, markers, calcs)

    build.add_heading(builder.doc, sub(title), 0, ea)
    if status_note:
        build.add_paragraph(builder.doc, f"**Note:** {status_note}", ea)
    for block in blocks:
        builder.block(block, sub)
    if markers:
        build.add_heading(builder.doc, references_heading(markdown), 1, ea)
        for calc_id, marker in markers.items():
            info = calcs[calc_id]
            build.add_paragraph(builder.doc, f"{marker} {info.description} \u2014 {info.formula}", ea)
    _save_docx(builder.doc, result.docx_path)
    _record_markers(job_dir, markers)
    for warning in result.warnings:
        logger.warning("render %s: %s", job_dir.name, warning)
    return result
