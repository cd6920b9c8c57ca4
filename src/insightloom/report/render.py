"""Render the Reporter's Markdown into final_report.docx, filling verified values with citation markers.

The Reporter never types a digit for a tracked number; it writes ``{{calc:ID}}``. Nor does it type a verdict such as
"is rising" or "main driver"; it writes ``{{claim:ID}}``. Here each reference becomes the value formatted by the
shared rule (a claim: its sentence, ``claims.wording.claim_text``) plus ``[N]``, numbered by first appearance,
numbers and claims together. The whole render refuses, listing every offending passage at once so the Reporter can
fix them all in one rewrite, when a reference names an unknown or unverified calculation or claim, when a near miss
(``{calc:x}``, ``{{ calc.x }}``, ``{claim:x}``, any leftover ``{{...}}``) would be printed literally, when any printed
text (the title, headings, paragraphs, table body cells, a chart's alt text and caption) holds a typed number: the
same numbers the audit would flag as A (``report.labels`` is the one rule for both), when a sentence holds a claim
phrase but cites no claim, or when two cited claims contradict each other (``report.claim_rules``, the rule the
audit's finding E uses). A number is never cited in the Markdown, since references hold no digits: only what the
renderer fills in is. Each refused passage is one line of ``report.problems``.
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

from insightloom.calc_refs import ANY_REF_RE, CALC_REF_RE, closest_ids, find_near_misses
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
from insightloom.report.appendix import appendix_groups, first_sections, is_trivial
from insightloom.report.calcinfo import CalcInfo, load_calc_info
from insightloom.report.claim_rules import CitedClaim, claim_hints, contradicting, unsupported_phrases
from insightloom.report.labels import Labels, is_label_cell, load_labels, section_number_spans, uncited_claims
from insightloom.report.limitations import with_limitations
from insightloom.report.markdown_blocks import Block, parse_markdown, plain_text, plain_text_map
from insightloom.report.numbers import claim_suffix
from insightloom.report.pdf import docx_to_pdf
from insightloom.report.problems import CAPTION_WHERE, TITLE_WHERE, UNVALIDATED, describe_problem
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
        markers: Calculation (or claim) id -> its marker ("[N]"), in marker order.
        claims: The ids among ``markers`` that are claims.
        charts: Chart paths (as written in the Markdown) that were embedded.
        tables: Number of tables rendered.
        warnings: Non-fatal problems (missing chart, no CJK font...).
    """

    docx_path: Path
    markers: dict[str, str] = field(default_factory=dict)
    claims: list[str] = field(default_factory=list)
    charts: list[str] = field(default_factory=list)
    tables: int = 0
    warnings: list[str] = field(default_factory=list)


def is_korean(text: str) -> bool:
    """Whether the report is Korean (holds Hangul), which picks the references heading, the CJK font and the
    language of the claims' sentences."""
    return bool(_HANGUL_RE.search(text))


def report_language(markdown: str) -> str:
    """``ko`` or ``en``: the language a claim's sentence is printed in."""
    return "ko" if is_korean(markdown) else "en"


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
        printed: The DOCX prints it; False for a chart's sidecar title, which only the chart image shows (checked
            for claim words alone).
    """

    section: str
    where: str
    text: str
    prose: bool = True
    heading: bool = False
    fix: str | None = None
    quoted: bool = False
    printed: bool = True


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
    meta = _sidecar(path, job_dir)
    source, caption = _sidecar_caption(meta, block, path)
    if caption:
        fix = _sidecar_caption_fix(block.path, source)
        places.append(_Place(section, f"{CAPTION_WHERE}{block.path}", caption, fix=fix))
    title = str(meta.get("title") or "")
    if title and not source.endswith(" title"):  # the title drawn on the chart: a claim word there is printed too
        places.append(_Place(section, f"{TITLE_WHERE}{block.path}", title, printed=False))
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


def _refused_status(ref: str, info: CalcInfo | None, missing: str, language: str) -> str | None:
    """Why a reference may not be printed (``unknown``, its status, ``is_claim``, ``not_claim``, ``malformed``)."""
    if info is None:
        return missing
    if info.is_claim != (ref == "claim"):
        return "is_claim" if info.is_claim else "not_claim"
    if info.status != "verified":
        return info.status
    if info.is_claim:
        try:
            info.claim_text(language)
        except ValueError:
            return "malformed"
    return None


def _assign_markers(
    places: list[_Place], calcs: dict[str, CalcInfo], missing: str = "unknown", language: str = "en"
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Number every reference, numbers and claims together, by first appearance and collect the ones that may not
    be printed."""
    markers: dict[str, str] = {}
    problems: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    for place in places:
        for match in ANY_REF_RE.finditer(place.text) if place.printed else ():
            ref, calc_id = match.groups()
            info = calcs.get(calc_id)
            status = _refused_status(ref, info, missing, language)
            if status is None:
                if calc_id not in markers:  # a trivial count is printed bare: no marker, no number taken
                    numbered = sum(1 for marker in markers.values() if marker)
                    markers[calc_id] = "" if info is not None and is_trivial(info) else f"[{numbered + 1}]"
                continue
            excerpt = _excerpt(place.text, match.start())
            problem = {"kind": "reference", "ref": ref, "calc_id": calc_id, "status": status}
            pool = [c for c, i in calcs.items() if i.is_claim == (ref == "claim")] or list(calcs)
            closest = closest_ids(calc_id, pool) if info is None else []
            problem.update(section=place.section, where=place.where, excerpt=excerpt, closest=closest)
            key = (calc_id, place.section, excerpt)
            if key not in seen:
                seen.add(key)
                problems.append(problem)
    return markers, problems


def _near_miss_problems(
    places: list[_Place], known: list[str] | None, claims: list[str] | None = None
) -> list[dict[str, Any]]:
    """Almost-references (``{calc:x}``, ``{{Calc:x}}``, ``{claim:x}``, ``{{calc:}}``, ``{{x}}``...) that would be
    printed literally; ``claims``: the tracked ids that are claims (corrected to ``{{claim:ID}}``)."""
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
        for miss in find_near_misses(place.text, known, claims or ())
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
class _Filler:
    """What each reference prints: a number's formatted value, or a claim's sentence, then its marker."""

    markers: dict[str, str]
    calcs: dict[str, CalcInfo]
    language: str = "en"

    def value(self, calc_id: str) -> str:
        """``<value> [N]`` for a reference that may be printed, else "" (the render is refused anyway)."""
        if calc_id not in self.markers:
            return ""
        info = self.calcs[calc_id]
        text = info.claim_text(self.language) if info.is_claim else info.formatted()
        return f"{text} {self.markers[calc_id]}" if self.markers[calc_id] else text


@dataclass(frozen=True)
class _Printed:
    """A place's text as the DOCX prints it, and how it maps back to the Markdown.

    Attributes:
        text: References filled in, markup removed.
        labels: Spans of the label runs (backticks).
        cited: Spans the renderer filled in (``<value> [N]``, a claim's ``<sentence> [N]`` too).
        source: For each character of ``text``, its offset in the Markdown.
        claims: The claims among ``cited``: span, kind and verdict.
    """

    text: str
    labels: list[tuple[int, int]]
    cited: list[tuple[int, int]]
    source: list[int]
    claims: list[CitedClaim] = field(default_factory=list)


def _runs(flags: list[int], offsets: list[int], wanted: set[int]) -> list[tuple[int, int]]:
    """The spans of the printed text whose Markdown offsets carry one of the ``wanted`` flags."""
    spans: list[tuple[int, int]] = []
    for i, at in enumerate(offsets):
        if flags[at] not in wanted:
            continue
        if spans and spans[-1][1] == i:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return spans


_TEXT, _NUMBER, _CLAIM = 0, 1, 2


def _printed(markdown: str, fill: _Filler) -> _Printed:
    filled, origin, flags = "", [], []
    claim_ids: list[str] = []  # the flag of the k-th claim reference is _CLAIM + k
    last = 0
    for match in ANY_REF_RE.finditer(markdown):
        value = fill.value(match.group(2))
        filled += markdown[last : match.start()] + value
        origin += [*range(last, match.start()), *[match.start()] * len(value)]
        flag = _NUMBER
        if match.group(1) == "claim":
            flag = _CLAIM + len(claim_ids)
            claim_ids.append(match.group(2))
        flags += [_TEXT] * (match.start() - last) + [flag] * len(value)
        last = match.end()
    filled += markdown[last:]
    origin += range(last, len(markdown))
    flags += [_TEXT] * (len(markdown) - last)
    text, labels, offsets = plain_text_map(filled)
    claim_flags = {_CLAIM + k for k in range(len(claim_ids))}
    cited = _runs(flags, offsets, {_NUMBER, *claim_flags})
    claims = [CitedClaim.of(span, fill.calcs.get(calc_id)) for k, calc_id in enumerate(claim_ids)
              for span in _runs(flags, offsets, {_CLAIM + k})]  # fmt: skip
    return _Printed(text, labels, cited, [origin[at] for at in offsets], claims)


def _typed_number_problems(places: list[_Place], fill: _Filler, labels: Labels) -> list[dict[str, Any]]:
    """Numbers typed as digits: exactly what the audit would flag as A in the rendered DOCX."""
    problems = []
    for place in places:
        printed = _printed(place.text, fill)
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


def _chart_of(where: str) -> str | None:
    """The chart whose sidecar text a place is (``caption of charts/x.png``), if it is one."""
    for prefix in (CAPTION_WHERE, TITLE_WHERE):
        if where.startswith(prefix):
            return where.removeprefix(prefix)
    return None


def _claim_phrase_problems(places: list[_Place], fill: _Filler, labels: Labels) -> list[dict[str, Any]]:
    """Claim words ("is rising", "main driver", "고르게") in a sentence that cites no claim: a verdict nobody checked.

    Everything printed is searched, the chart's sidecar title too (the chart shows it); labels and what the
    renderer filled in are not, nor backtick labels that name a column or category value.
    """
    problems = []
    for place in places:
        printed = _printed(place.text, fill)
        # the plan's words the renderer quotes (the limitations) are never claims; other labels must name the data
        quoted = printed.labels if place.quoted else []
        found = unsupported_phrases(printed.text, claims=printed.claims, protected=[*printed.cited, *quoted],
                                    labels=printed.labels, names=labels)  # fmt: skip
        for hit in found:
            problem: dict[str, Any] = {"kind": "unsupported_claim", "phrase": hit.phrase, "claim_kind": hit.kind}
            problem.update(section=place.section, where=place.where, claims=claim_hints(fill.calcs, hit.kind))
            problem["excerpt"] = _excerpt(place.text, printed.source[hit.start] if printed.source else 0)
            chart = _chart_of(place.where)
            problems.append({**problem, "chart": chart} if chart else problem)
    return problems


def _contradiction_problems(places: list[_Place], fill: _Filler) -> list[dict[str, Any]]:
    """Two cited claims that cannot both be printed (a main driver spread evenly, rising and falling): the later
    one is named, with the earlier one it contradicts."""
    first: dict[str, tuple[_Place, int]] = {}
    for place in places:
        for match in ANY_REF_RE.finditer(place.text) if place.printed else ():
            first.setdefault(match.group(2), (place, match.start()))
    order = list(fill.markers)
    problems = []
    for a, b, why in contradicting(fill.calcs[c] for c in order):
        later, other = (b, a) if order.index(b) > order.index(a) else (a, b)
        place, at = first[later]
        problem: dict[str, Any] = {"kind": "contradiction", "ref": "claim", "calc_id": later, "other": other}
        problem["reason"] = why
        problem.update(section=place.section, where=place.where, excerpt=_excerpt(place.text, at))
        problems.append(problem)
    return problems


def _refuse(problems: list[dict[str, Any]]) -> None:
    lines = [f"The report has {len(problems)} passage(s) that may not be printed:"]
    lines += [f"- {describe_problem(p)}" for p in problems]
    exc = RenderRefused(
        "\n".join(lines),
        "Rewrite those passages: cite only verified calculations as {{calc:ID}} and verified claims as "
        "{{claim:ID}}; never type a number or a claim word (rising, main driver, dominates, evenly...) yourself; "
        "drop what cannot be cited.",
    )
    exc.problems = problems  # type: ignore[attr-defined]
    raise exc


def _substitute(text: str, fill: _Filler) -> str:
    """References filled in; a refused one prints nothing (the render is refused anyway)."""
    return ANY_REF_RE.sub(lambda match: fill.value(match.group(2)), text)


def _title_and_blocks(markdown: str, title: str | None) -> tuple[str, list[Block]]:
    blocks = parse_markdown(markdown)
    if blocks and blocks[0].kind == "heading" and blocks[0].level == 1:
        title = title or blocks.pop(0).text
    return title or "Analysis Report", blocks


def _check(blocks: list[Block], title: str, job_dir: Path, language: str) -> tuple[_Filler, list[dict[str, Any]]]:
    """What each reference prints, and every problem that blocks printing: bad references, near misses, typed
    numbers, unsupported claim words and contradicting claims."""
    calcs = load_calc_info(job_dir, required=False)
    validated = is_regular_file(job_dir / CITATIONS_FILE, beneath=job_dir)
    places = _places(blocks, title, job_dir)
    printed = [place for place in places if place.printed]
    markers, problems = _assign_markers(places, calcs, "unknown" if validated else UNVALIDATED, language)
    fill = _Filler(markers, calcs, language)
    claims = [calc_id for calc_id, info in calcs.items() if info.is_claim]
    problems += _near_miss_problems(printed, list(calcs) or None, claims)
    problems += _glued_problems(printed)
    problems += _control_problems(printed)
    labels = load_labels(job_dir)
    problems += _typed_number_problems(printed, fill, labels)
    problems += _claim_phrase_problems(places, fill, labels)
    problems += _contradiction_problems(places, fill)
    return fill, problems


def check_markdown(markdown: str, job_dir: Path) -> list[dict[str, Any]]:
    """The problems that would make :func:`render_report` refuse ``markdown`` (a whole report or one section)."""
    title, blocks = _title_and_blocks(markdown, None)
    return _check(blocks, title, Path(job_dir), report_language(markdown))[1]


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
        entry["citation_id"] = markers.get(str(entry.get("calculation_id"))) or None
    data.setdefault("metadata", {})["cited_calculations"] = sum(1 for e in data["citations"] if e["citation_id"])
    data["metadata"]["total_calculations"] = len(data["citations"])
    write_json(job_dir / CITATIONS_FILE, data, beneath=job_dir)


def _section_texts(title: str, blocks: list[Block], job_dir: Path) -> list[tuple[str, str]]:
    """Each printed text, in reading order, with the Markdown of the top-level heading above it (the title above
    the first): the references appendix groups its entries by these sections."""
    top = min((block.level for block in blocks if block.kind == "heading"), default=0)
    section, texts = title, [(title, title)]
    for block in blocks:
        if block.kind == "heading" and block.level == top:
            section = block.text
        if block.kind == "table":
            texts += [(section, cell) for row in block.rows for cell in row]
        elif block.kind == "image":
            texts += [(section, p.text) for p in _image_places(block, section, job_dir) if p.printed]
        else:
            texts.append((section, block.text))
    return texts


def render_report(
    markdown: str, job_dir: Path, *, title: str | None = None, status_note: str | None = None
) -> RenderResult:
    """Render the Reporter's Markdown to ``final_report.docx`` and record the markers in citations.json.

    Args:
        markdown: The report in the Markdown subset, with ``{{calc:ID}}`` and ``{{claim:ID}}`` references.
        job_dir: The job folder (reads citations.json, charts/; writes report.md, final_report.docx).
        title: Overrides the Markdown's ``# Title``.
        status_note: A visible note under the title (e.g. when the job ends ``needs_review``).

    Returns:
        The :class:`RenderResult`.

    Raises:
        RenderRefused: A reference names an unknown or non-verified calculation or claim, a near miss such as
            ``{calc:x}`` would be printed literally, a number is typed in prose instead of referenced, a claim word
            stands in a sentence that cites no claim, or two cited claims contradict; ``err.problems`` lists each
            one. Only report.md is written then.
    """
    job_dir = Path(job_dir)
    write_text_atomic(job_dir / MARKDOWN_NAME, markdown, beneath=job_dir)
    title, blocks = _title_and_blocks(markdown, title)
    blocks = with_limitations(blocks, job_dir, is_korean(markdown))
    fill, problems = _check(blocks, title, job_dir, report_language(markdown))
    if problems:
        _refuse(problems)
    markers, calcs = fill.markers, fill.calcs

    claims = [calc_id for calc_id in markers if calcs[calc_id].is_claim]
    numbered = {calc_id: marker for calc_id, marker in markers.items() if marker}
    result = RenderResult(docx_path=job_dir / DOCX_NAME, markers=numbered, claims=claims)
    figure_label = "그림" if is_korean(markdown) else "Figure"
    builder = _Builder(job_dir, _east_asian_font(markdown, result.warnings), result, figure_label)
    ea = builder.east_asian

    def sub(text: str) -> str:
        return _substitute(text, fill)

    build.add_heading(builder.doc, sub(title), 0, ea)
    if status_note:
        build.add_paragraph(builder.doc, f"**Note:** {status_note}", ea)
    for block in blocks:
        builder.block(block, sub)
    if numbered:
        build.start_columns(builder.doc)
        build.add_heading(builder.doc, references_heading(markdown), 1, ea)
        for section, lines in appendix_groups(first_sections(_section_texts(title, blocks, job_dir)), markers, calcs):
            if section.strip():
                build.add_reference_label(builder.doc, sub(section), ea)
            for line in lines:
                build.add_reference(builder.doc, line, ea)
    _save_docx(builder.doc, result.docx_path, job_dir)
    _record_markers(job_dir, markers)
    for warning in result.warnings:
        logger.warning("render %s: %s", job_dir.name, warning)
    return result
