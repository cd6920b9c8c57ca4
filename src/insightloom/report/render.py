"""Render the Reporter's Markdown into final_report.docx, filling verified values with citation markers.

The Reporter never types a digit for a tracked number; it writes ``{{calc:ID}}``. Here each reference becomes the
value formatted by the shared rule plus ``[N]`` (numbered by first appearance). The whole render refuses, listing
every offending passage at once so the Reporter can fix them all in one rewrite, when a reference names an unknown
or unverified calculation, when a near miss (``{calc:x}``, ``{{ calc.x }}``, any leftover ``{{...}}``) would be
printed literally, and when any printed text (the title, headings, paragraphs, table body cells, a chart's alt text
and caption) holds a typed number: the same numbers the audit would flag as A (``report.labels`` is the one rule for
both). A number is never cited in the Markdown, since references hold no digits: only what the renderer fills in is.
Each refused passage is one line of ``report.problems``.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docx import Document
from docx.image.exceptions import UnrecognizedImageError

from insightloom.calc_refs import CALC_REF_RE, closest_ids, find_near_misses
from insightloom.errors import RenderRefused, UnsafePathError
from insightloom.fileio import (
    MAX_READ_BYTES,
    is_regular_file,
    open_regular,
    read_json,
    write_chunks_atomic,
    write_json,
    write_text_atomic,
)
from insightloom.fonts import INSTALL_HINT, find_cjk_font
from insightloom.report import docx_build as build
from insightloom.report.calcinfo import CalcInfo, load_calc_info
from insightloom.report.labels import Labels, is_label_cell, load_labels, section_number_spans, uncited_claims
from insightloom.report.limitations import with_limitations
from insightloom.report.markdown_blocks import Block, parse_markdown, plain_text, plain_text_map
from insightloom.report.numbers import claim_suffix
from insightloom.report.pdf import docx_to_pdf
from insightloom.report.problems import CAPTION_WHERE, UNVALIDATED, describe_problem
from insightloom.validation.jobfiles import CITATIONS_FILE, load_citations

logger = logging.getLogger(__name__)

__all__ = [
    "RenderResult",
    "check_markdown",
    "describe_problem",
    "docx_to_pdf",
    "references_heading",
    "refuse_if_problems",
    "render_report",
]

DOCX_NAME = "final_report.docx"
MARKDOWN_NAME = "report.md"
REFERENCES_HEADINGS = {"en": "References", "ko": "참고 문헌"}
_HANGUL_RE = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_FALLBACK_CJK_FAMILY = "Malgun Gothic"
_EXCERPT = 100


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


@dataclass(frozen=True)
class _Place:
    """One text of the report and where it is, as a refusal names it.

    Attributes:
        section: The heading above it, as printed.
        where: ``paragraph 2``, ``table 1 row 2 col 3``, ``heading``...
        text: The Markdown text.
        prose: Its numbers are claims (everything printed but a table's label cells, where only measures are).
        heading: The title or a heading, whose own numbering ("2. Revenue") is not a claim.
        fix: The fix for a typed number here, when it is not the Markdown's to edit (a chart's sidecar caption).
        quoted: Its label runs are the plan's words the renderer quotes (the limitations), never claims.
    """

    section: str
    where: str
    text: str
    prose: bool = True
    heading: bool = False
    fix: str | None = None
    quoted: bool = False


def _sidecar_caption(meta: dict[str, Any], block: Block, path: Path) -> tuple[str, str]:
    """Where the caption under a chart comes from when the Markdown does not give it, and its text."""
    if meta.get("caption"):
        return f"{path.with_suffix('.json').name} caption", str(meta["caption"])
    if block.text:
        return "", ""  # the alt text is the caption
    for key in ("alt", "title"):
        if meta.get(key):
            return f"{path.with_suffix('.json').name} {key}", str(meta[key])
    return "file name", path.stem


def _sidecar_caption_fix(chart: str, source: str) -> str:
    return (
        f"the caption under {chart} comes from its {source}: save the chart again with save_chart(..., title=..., "
        f"caption=...) without numbers (numbers belong in the report as {{{{calc:<id>}}}}), or leave ![...]({chart}) "
        "out of the report"
    )


def _image_places(block: Block, section: str, job_dir: Path) -> list[_Place]:
    """The image's alt text and, when the chart's sidecar provides it, the caption printed under it."""
    places = [_Place(section, f"alt text of {block.path}", block.text)] if block.text else []
    path = _chart_path(job_dir, block.path)
    if path is None:
        return places  # not embedded: nothing of it is printed
    source, caption = _sidecar_caption(_sidecar(path, job_dir), block, path)
    if caption:
        fix = _sidecar_caption_fix(block.path, source)
        places.append(_Place(section, f"{CAPTION_WHERE}{block.path}", caption, fix=fix))
    return places


def _places(blocks: list[Block], title: str, job_dir: Path) -> list[_Place]:
    """Every printed text of the report in reading order, the title first (text above the first heading is its)."""
    section, paragraphs, tables = plain_text(title)[0].strip() or "(title)", 0, 0
    places = [_Place(section, "title", title, heading=True)]
    for block in blocks:
        if block.kind == "heading":
            section, paragraphs = plain_text(block.text)[0].strip(), 0
            places.append(_Place(section, "heading", block.text, heading=True))
        elif block.kind == "table":
            tables += 1
            n_rows, n_cols = len(block.rows), max(map(len, block.rows), default=0)
            places += [
                _Place(
                    section, f"table {tables} row {r + 1} col {c + 1}", cell, not is_label_cell(r, c, n_rows, n_cols)
                )
                for r, row in enumerate(block.rows)
                for c, cell in enumerate(row)
            ]
        elif block.kind == "image":
            places += _image_places(block, section, job_dir)
        else:
            paragraphs += 1
            places.append(_Place(section, f"paragraph {paragraphs}", block.text, quoted=block.quoted))
    return places


def _assign_markers(
    places: list[_Place], calcs: dict[str, CalcInfo], missing: str = "unknown"
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Number every reference by first appearance and collect the ones that may not be printed."""
    markers: dict[str, str] = {}
    problems: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for place in places:
        for match in CALC_REF_RE.finditer(place.text):
            calc_id = match.group(1)
            info = calcs.get(calc_id)
            if info is None or info.status != "verified":
                status = missing if info is None else info.status
                excerpt = _excerpt(place.text, match.start())
                problem = {"kind": "reference", "calc_id": calc_id, "status": status, "section": place.section}
                closest = closest_ids(calc_id, calcs) if info is None else []
                problem.update(where=place.where, excerpt=excerpt, closest=closest)
                key = (calc_id, place.section, excerpt)
                if key not in seen:
                    seen.add(key)
                    problems.append(problem)
            elif calc_id not in markers:
                markers[calc_id] = f"[{len(markers) + 1}]"
    return markers, problems


def _near_miss_problems(places: list[_Place], known: list[str] | None) -> list[dict[str, Any]]:
    """Almost-references (``{calc:x}``, ``{{Calc:x}}``, ``{{calc:}}``, ``{{x}}``...) that would be printed literally."""
    return [
        {
            "kind": "near_miss",
            "written": miss.written,
            "calc_id": miss.calc_id,
            "advice": miss.advice(),
            "section": place.section,
            "where": place.where,
            "excerpt": _excerpt(place.text, miss.start),
        }
        for place in places
        for miss in find_near_misses(place.text, known)
    ]


# Text glued to a reference would change the value it prints: "-{{calc:x}}", "1{{calc:x}}", "{{calc:x}}%",
# "{{calc:x}}만". A counter that only names what is counted ("{{calc:order_count}}건") changes nothing.
_GLUED_BEFORE_RE = re.compile(r"[-\u2212\u2013+\d.,]$")
_GLUED_AFTER_RE = re.compile(r"[\dA-Za-z%]")
_GLUED_TAIL_RE = re.compile(r"[^\s.,;:!?)\]]*")


def _glued_text(text: str, match: re.Match[str]) -> str | None:
    """The reference with what is glued to it, when a sign, digit or unit touches it; else None."""
    before = _GLUED_BEFORE_RE.search(text[: match.start()])
    after = _GLUED_AFTER_RE.match(text, match.end()) or claim_suffix(text, match.end()) == "amount"
    if not before and not after:
        return None
    lo = match.start() - (1 if before else 0)
    tail = _GLUED_TAIL_RE.match(text, match.end())
    return text[lo : tail.end() if after and tail else match.end()]


def _glued_problems(places: list[_Place]) -> list[dict[str, Any]]:
    """References with a sign, digit or unit glued to them: the printed value would read as another number."""
    problems = []
    for place in places:
        for match in CALC_REF_RE.finditer(place.text):
            written = _glued_text(place.text, match)
            if written is None:
                continue
            ref = match.group(0)
            advice = (
                f"nothing may touch {ref}: the renderer prints the value with its own sign and unit, so a sign, "
                f"digit or unit glued to it prints another number; write {ref} with a space on both sides and no "
                "unit (for a change or a share, track that value as its own calculation and cite it)"
            )
            problems.append(
                {
                    "kind": "near_miss",
                    "written": written,
                    "calc_id": match.group(1),
                    "advice": advice,
                    "section": place.section,
                    "where": place.where,
                    "excerpt": _excerpt(place.text, match.start()),
                }
            )
    return problems


# Characters a DOCX cannot hold (XML 1.0 allows only tab, line feed and carriage return below U+0020).
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _control_problems(places: list[_Place]) -> list[dict[str, Any]]:
    """Control characters (a NUL, an escape code) that the DOCX cannot store: the render would crash on them."""
    return [
        {
            "kind": "control_char",
            "written": f"U+{ord(match.group(0)):04X}",
            "advice": "delete the control character (it is invisible and a DOCX cannot hold it) and write plain text",
            "section": place.section,
            "where": place.where,
            "excerpt": _excerpt(place.text, match.start()).translate({ord(match.group(0)): "?"}),
        }
        for place in places
        for match in _CONTROL_RE.finditer(place.text)
    ]


@dataclass(frozen=True)
class _Printed:
    """A place's text as the DOCX prints it, and how it maps back to the Markdown.

    Attributes:
        text: References filled in, markup removed.
        labels: Spans of the label runs (backticks).
        cited: Spans the renderer filled in (``<value> [N]``).
        source: For each character of ``text``, its offset in the Markdown.
    """

    text: str
    labels: list[tuple[int, int]]
    cited: list[tuple[int, int]]
    source: list[int]


def _printed(markdown: str, markers: dict[str, str], calcs: dict[str, CalcInfo]) -> _Printed:
    filled, origin, from_value = "", [], []
    last = 0
    for match in CALC_REF_RE.finditer(markdown):
        calc_id = match.group(1)
        value = f"{calcs[calc_id].formatted()} {markers[calc_id]}" if calc_id in markers else ""
        filled += markdown[last : match.start()] + value
        origin += [*range(last, match.start()), *[match.start()] * len(value)]
        from_value += [False] * (match.start() - last) + [True] * len(value)
        last = match.end()
    filled += markdown[last:]
    origin += range(last, len(markdown))
    from_value += [False] * (len(markdown) - last)
    text, labels, offsets = plain_text_map(filled)
    cited: list[tuple[int, int]] = []
    for i, at in enumerate(offsets):
        if not from_value[at]:
            continue
        if cited and cited[-1][1] == i:
            cited[-1] = (cited[-1][0], i + 1)
        else:
            cited.append((i, i + 1))
    return _Printed(text, labels, cited, [origin[at] for at in offsets])


def _typed_number_problems(
    places: list[_Place], markers: dict[str, str], calcs: dict[str, CalcInfo], labels: Labels
) -> list[dict[str, Any]]:
    """Numbers typed as digits: exactly what the audit would flag as A in the rendered DOCX."""
    problems = []
    for place in places:
        printed = _printed(place.text, markers, calcs)
        numbering = section_number_spans(printed.text) if place.heading else []
        for token in uncited_claims(
            printed.text,
            labels,
            protected=printed.labels,
            cited=printed.cited,
            numbering=numbering,
            label_cell=not place.prose,
            quoted=printed.labels if place.quoted else (),
        ):
            problem = {"kind": "typed_number", "number": token.text, "section": place.section, "where": place.where}
            problem["excerpt"] = _excerpt(place.text, printed.source[token.start])
            problems.append({**problem, "fix": place.fix} if place.fix else problem)
    return problems


def _refuse(problems: list[dict[str, Any]]) -> None:
    lines = [f"The report has {len(problems)} passage(s) that may not be printed:"]
    lines += [f"- {describe_problem(p)}" for p in problems]
    exc = RenderRefused(
        "\n".join(lines),
        "Rewrite those passages: cite only verified calculations as {{calc:ID}} and never type a number; "
        "drop a value that cannot be cited.",
    )
    exc.problems = problems  # type: ignore[attr-defined]
    raise exc


def _substitute(text: str, markers: dict[str, str], calcs: dict[str, CalcInfo]) -> str:
    """References filled in; a refused one prints nothing (the render is refused anyway)."""

    def value(match: re.Match[str]) -> str:
        calc_id = match.group(1)
        return f"{calcs[calc_id].formatted()} {markers[calc_id]}" if calc_id in markers else ""

    return CALC_REF_RE.sub(value, text)


def _title_and_blocks(markdown: str, title: str | None) -> tuple[str, list[Block]]:
    blocks = parse_markdown(markdown)
    if blocks and blocks[0].kind == "heading" and blocks[0].level == 1:
        title = title or blocks.pop(0).text
    return title or "Analysis Report", blocks


def _check(
    blocks: list[Block], title: str, job_dir: Path
) -> tuple[dict[str, str], dict[str, CalcInfo], list[dict[str, Any]]]:
    """Markers, calculations and every problem that blocks printing: bad references, near misses, typed numbers."""
    calcs = load_calc_info(job_dir, required=False)
    validated = is_regular_file(job_dir / CITATIONS_FILE, beneath=job_dir)
    places = _places(blocks, title, job_dir)
    markers, problems = _assign_markers(places, calcs, "unknown" if validated else UNVALIDATED)
    problems += _near_miss_problems(places, list(calcs) or None)
    problems += _glued_problems(places)
    problems += _control_problems(places)
    problems += _typed_number_problems(places, markers, calcs, load_labels(job_dir))
    return markers, calcs, problems


def check_markdown(markdown: str, job_dir: Path) -> list[dict[str, Any]]:
    """The problems that would make :func:`render_report` refuse ``markdown`` (a whole report or one section)."""
    title, blocks = _title_and_blocks(markdown, None)
    return _check(blocks, title, Path(job_dir))[2]


def refuse_if_problems(markdown: str, job_dir: Path) -> None:
    """Raise the render's own refusal for ``markdown`` without writing anything.

    Raises:
        RenderRefused: As :func:`render_report` would; ``err.problems`` lists each passage.
    """
    problems = check_markdown(markdown, job_dir)
    if problems:
        _refuse(problems)


def _chart_path(job_dir: Path, written: str) -> Path | None:
    """The chart as a regular file inside the job folder reached without a link, or None ("not found").

    The Markdown's path is normalised by its text, never resolved: resolving follows a link a script planted, and
    ``../`` or an absolute path leaves the job folder (no-follow check: ``fileio``). A path the system cannot even
    look up (a NUL byte) is "not found" too.
    """
    try:
        path = Path(os.path.normpath(job_dir / written))
        return path if is_regular_file(path, beneath=job_dir) else None
    except ValueError:
        return None


def _sidecar(path: Path, job_dir: Path) -> dict[str, Any]:
    """The chart's caption sidecar, read without following a link a script planted (its text goes into the DOCX)."""
    sidecar = path.with_suffix(".json")
    try:
        data = read_json(sidecar, beneath=job_dir)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, UnsafePathError) as exc:
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
            build.add_paragraph(self.doc, sub(block.text), ea, style="List Bullet", quoted=block.quoted)
        elif block.kind == "number":
            build.add_paragraph(self.doc, sub(block.text), ea, style="List Number")
        elif block.kind == "table":
            build.add_table(self.doc, [[sub(cell) for cell in row] for row in block.rows], ea)
            self.result.tables += 1
        elif block.kind == "image":
            self.image(block, sub)

    def image(self, block: Block, sub: Any) -> None:
        path = _chart_path(self.job_dir, block.path)
        if path is None:
            self.result.warnings.append(f"chart {block.path!r} not found inside the job folder; skipped")
            return
        meta = _sidecar(path, self.job_dir)
        alt = sub(block.text) or str(meta.get("alt") or meta.get("title") or path.stem)
        _, caption = _sidecar_caption(meta, block, path)
        caption = sub(caption) or alt
        try:
            with open_regular(path, beneath=self.job_dir, max_bytes=MAX_READ_BYTES) as (handle, _):
                image = io.BytesIO(handle.read(MAX_READ_BYTES))  # python-docx gets the bytes, never the path
            build.add_picture(self.doc, image, plain_text(alt)[0])
        except (UnrecognizedImageError, OSError, ValueError, UnsafePathError) as exc:  # "charts/x.json": not an image
            self.result.warnings.append(f"chart {block.path!r} is not an image ({exc}); skipped")
            return
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


def _save_docx(doc: Any, path: Path, job_dir: Path) -> None:
    """Save through ``fileio`` (temp file renamed over ``path``, no link followed): python-docx never gets a path."""
    buffer = io.BytesIO()
    doc.save(buffer)
    write_chunks_atomic(path, [buffer.getvalue()], beneath=job_dir)


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
        RenderRefused: A reference names an unknown or non-verified calculation, a near miss such as
            ``{calc:x}`` would be printed literally, or a number is typed in prose instead of referenced;
            ``err.problems`` lists each one. Only report.md is written then.
    """
    job_dir = Path(job_dir)
    write_text_atomic(job_dir / MARKDOWN_NAME, markdown, beneath=job_dir)
    title, blocks = _title_and_blocks(markdown, title)
    blocks = with_limitations(blocks, job_dir, is_korean(markdown))
    markers, calcs, problems = _check(blocks, title, job_dir)
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
    _save_docx(builder.doc, result.docx_path, job_dir)
    _record_markers(job_dir, markers)
    for warning in result.warnings:
        logger.warning("render %s: %s", job_dir.name, warning)
    return result
