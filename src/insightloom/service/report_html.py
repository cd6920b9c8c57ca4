"""A finished job's report as safe HTML for the web page: the text the DOCX prints, its charts inline, and each
``[N]`` marker a link to the calculation or claim behind it (description, formula, check, verification status).

Built from the rendered report, not from a second rendering of the analysis: ``report.md`` (the Markdown the renderer
printed, in the renderer's own block subset, :func:`~insightloom.report.markdown_blocks.parse_markdown`, with the
plan's limitations it appends), the values and markers the renderer recorded in ``citations.json`` (formatted by the
same rule, :class:`~insightloom.report.calcinfo.CalcInfo`, whose claims print their sentence) and the checks tracked
in ``calculation_metadata.json``.

Everything in a report is model text, and a model can be talked into writing ``<script>``: no character of it reaches
the page as markup. Inline Markdown goes through markdown-it with raw HTML, entities, links and images turned off
(every ``<`` comes out as ``&lt;``), table cells too; the only elements are the ones built here. Charts are
``<img>`` elements only for a ``![...](charts/x.png)`` block naming an image file the job lists, and they point at
the job's artifact route, so they are served under the same per-user access rule as every other download.

The job's files are read through a callback (the artifact store: local or S3) and copied to a private temporary
folder, so the report package's own loaders read them exactly as the renderer did.
"""

from __future__ import annotations

import html
import json
import logging
import posixpath
import re
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from ..calc_refs import ANY_REF_RE
from ..errors import ValidationError
from ..fileio import write_chunks_atomic
from ..report.calcinfo import CalcInfo, load_calc_info
from ..report.limitations import PLAN_FILE, with_limitations
from ..report.markdown_blocks import Block, parse_markdown, plain_text
from ..report.render import DOCX_NAME, MARKDOWN_NAME, is_korean, references_heading, report_language
from ..validation.jobfiles import CITATIONS_FILE, METADATA_FILE, load_citations

logger = logging.getLogger(__name__)

__all__ = ["ANCHOR_PREFIX", "REPORT_INPUTS", "ReportSource", "report_html"]

#: The job files the HTML is built from (chart sidecars come on top).
REPORT_INPUTS = (MARKDOWN_NAME, CITATIONS_FILE, METADATA_FILE, PLAN_FILE)
#: ``id`` of the reference entry ``[N]`` links to: ``report-ref-N`` (unique on the page, beside the plan and answers).
ANCHOR_PREFIX = "report-ref-"
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif")
# A filled-in reference while the text goes through markdown-it: private-use characters that model text can't bring
# in (they are deleted from it first), so no text of the report can forge a marker link.
_OPEN, _CLOSE = "\ue000", "\ue001"
_SLOT_RE = re.compile(f"{_OPEN}(\\d+){_CLOSE}")
_MARKER_RE = re.compile(r"^\[(\d+)\]$")
_WORDS = {
    "en": {"figure": "Figure", "formula": "Formula", "check": "Check", "test": "Test inputs", "status": "Status"},
    "ko": {"figure": "그림", "formula": "계산식", "check": "검증", "test": "검정 입력", "status": "검증 상태"},
}
_NO_CHECK = {"en": "none (not re-computed from the data)", "ko": "없음 (데이터에서 다시 계산하지 않음)"}


@dataclass(frozen=True)
class ReportSource:
    """Where the report's files come from.

    Attributes:
        read: A job file's bytes by its path relative to the job folder, or None when it is missing.
        files: The job's artifact list (relative posix paths): a chart is shown only when it is one of them.
        artifact_url: The URL a job file is downloaded from (the page's per-user artifact route).
    """

    read: Callable[[str], bytes | None]
    files: Collection[str]
    artifact_url: Callable[[str], str]


@lru_cache(maxsize=1)
def _inline() -> MarkdownIt:
    # html off: tags are text. No entities (the DOCX prints "&lt;" as written), no links or images from model text.
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).disable(
        ["link", "image", "autolink", "html_inline", "entity"]
    )


@dataclass
class _Filler:
    """Fills ``{{calc:ID}}`` and ``{{claim:ID}}`` as the renderer printed them, and remembers the markers used."""

    calcs: Mapping[str, CalcInfo]
    language: str
    slots: list[tuple[str, int | None]] = field(default_factory=list)

    def printed(self, ref_id: str) -> tuple[str, int | None]:
        """The text a reference prints and its marker number (None: the renderer printed it without a marker)."""
        info = self.calcs.get(ref_id)
        if info is None or info.status != "verified":
            return "", None  # the renderer refuses such a reference: a finished report holds none
        try:
            text = info.claim_text(self.language) if info.is_claim else info.formatted()
        except ValueError:  # a claim outside the claims table: refused at render as well
            return "", None
        match = _MARKER_RE.match(info.citation_id or "")
        return text, int(match.group(1)) if match else None

    def slotted(self, text: str) -> str:
        """``text`` with each reference replaced by a slot that :meth:`html` turns into the value and its link."""
        text = text.replace(_OPEN, "").replace(_CLOSE, "")
        return ANY_REF_RE.sub(lambda match: self._slot(match.group(2)), text)

    def _slot(self, ref_id: str) -> str:
        self.slots.append(self.printed(ref_id))
        return f"{_OPEN}{len(self.slots) - 1}{_CLOSE}"

    def plain(self, text: str) -> str:
        """The text as printed, without markup (an image's alt text): references as ``value [N]``."""

        def one(match: re.Match[str]) -> str:
            value, number = self.slots[int(match.group(1))]
            return f"{value} [{number}]" if number is not None else value

        return plain_text(_SLOT_RE.sub(one, self.slotted(text)))[0]

    def html(self, text: str) -> str:
        """Inline Markdown as escaped HTML, each filled reference as its value and a link to its reference entry."""
        rendered = _inline().renderInline(self.slotted(text))
        return _SLOT_RE.sub(self._linked, rendered)

    def _linked(self, match: re.Match[str]) -> str:
        value, number = self.slots[int(match.group(1))]
        shown = f'<span class="value">{html.escape(value)}</span>' if value else ""
        if number is None:
            return shown
        link = f'<a class="cite" href="#{ANCHOR_PREFIX}{number}">[{number}]</a>'
        return f"{shown} {link}" if shown else link


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")


def _snapshot(source: ReportSource, folder: Path) -> None:
    """Copy the report's input files into ``folder`` (the report package's loaders read a job folder)."""
    for name in REPORT_INPUTS:
        data = source.read(name) if name in source.files else None
        if data is not None:
            write_chunks_atomic(folder / name, [data], beneath=folder)


def _chart(path: str, source: ReportSource) -> str | None:
    """The job file a chart block names, when it is an image the job lists; else None (not shown, as in the DOCX)."""
    normal = posixpath.normpath(path.strip())
    if normal.startswith(("/", "../")) or normal == ".." or not normal.lower().endswith(_IMAGE_SUFFIXES):
        return None
    return normal if normal in source.files else None


#: The most the page reads of one job file (scripts write the sidecars and citations; a page is no download).
MAX_REPORT_FILE_BYTES = 16 * 1024 * 1024


def _bounded(source: ReportSource) -> ReportSource:
    """``source`` reading each file once, and a file above :data:`MAX_REPORT_FILE_BYTES` as missing."""
    seen: dict[str, bytes | None] = {}

    def read(name: str) -> bytes | None:
        if name not in seen:
            data = source.read(name)
            seen[name] = data if data is None or len(data) <= MAX_REPORT_FILE_BYTES else None
        return seen[name]

    return replace(source, read=read)


def _sidecar(chart: str, source: ReportSource) -> dict[str, Any]:
    name = posixpath.splitext(chart)[0] + ".json"
    raw = _text(source.read(name)) if name in source.files else None
    try:
        data = json.loads(raw) if raw else {}
    except (ValueError, RecursionError):  # a script wrote it: broken or nested thousands deep reads as no sidecar
        return {}
    return data if isinstance(data, dict) else {}


def _caption(block: Block, meta: Mapping[str, Any], chart: str) -> str:
    """The caption the renderer prints under a chart: the sidecar's, else the alt text, else its alt/title or name."""
    for text in (meta.get("caption"), block.text, meta.get("alt"), meta.get("title")):
        if text:
            return str(text)
    return _stem(chart)


def _stem(chart: str) -> str:
    return posixpath.splitext(posixpath.basename(chart))[0]


class _Writer:
    """Turns the report's blocks into HTML, one element per block, lists grouped."""

    def __init__(self, fill: _Filler, source: ReportSource, language: str) -> None:
        self.fill = fill
        self.source = source
        self.words = _WORDS[language]
        self.figures = 0

    def blocks(self, blocks: list[Block]) -> Iterator[str]:
        open_list = ""
        for block in blocks:
            wanted = {"bullet": "ul", "number": "ol"}.get(block.kind, "")
            if open_list and wanted != open_list:
                yield f"</{open_list}>"
                open_list = ""
            if wanted and not open_list:
                open_list = wanted
                yield f"<{wanted}>"
            yield self.block(block)
        if open_list:
            yield f"</{open_list}>"

    def block(self, block: Block) -> str:
        if block.kind == "heading":
            level = min(max(block.level, 2), 4)
            return f"<h{level}>{self.fill.html(block.text)}</h{level}>"
        if block.kind in ("bullet", "number"):
            return f"<li>{self.fill.html(block.text)}</li>"
        if block.kind == "table":
            return self.table(block.rows)
        if block.kind == "image":
            return self.image(block)
        return f"<p>{self.fill.html(block.text)}</p>"

    def table(self, rows: list[list[str]]) -> str:
        head = "".join(f'<th scope="col">{self.fill.html(cell)}</th>' for cell in rows[0]) if rows else ""
        body = "".join("<tr>" + "".join(f"<td>{self.fill.html(c)}</td>" for c in row) + "</tr>" for row in rows[1:])
        return f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'

    def image(self, block: Block) -> str:
        chart = _chart(block.path, self.source)
        if chart is None:
            return ""  # the renderer skipped it too (missing, outside the job, not an image)
        meta = _sidecar(chart, self.source)
        self.figures += 1
        alt = self.fill.plain(block.text) or str(meta.get("alt") or meta.get("title") or _stem(chart))
        caption = self.fill.html(_caption(block, meta, chart))
        url = html.escape(self.source.artifact_url(chart), quote=True)
        return (
            f'<figure><img src="{url}" alt="{html.escape(alt, quote=True)}" loading="lazy">'
            f"<figcaption>{self.words['figure']} {self.figures}: {caption}</figcaption></figure>"
        )


def _check_html(record: Mapping[str, Any], words: Mapping[str, str], language: str) -> str:
    """The check the Validator re-ran: its SQL, or ``stat:<test>`` with the SQL of the test's inputs."""
    check = str(record.get("check") or "").strip()
    if not check:
        return f"<dt>{words['check']}</dt><dd>{_NO_CHECK[language]}</dd>"
    if not check.startswith("stat:"):
        return f"<dt>{words['check']}</dt><dd><pre><code>{html.escape(check)}</code></pre></dd>"
    shown = f"<dt>{words['check']}</dt><dd><code>{html.escape(check)}</code></dd>"
    test = record.get("test")
    sql = str(test.get("sql") or "").strip() if isinstance(test, dict) else ""
    return shown + (f"<dt>{words['test']}</dt><dd><pre><code>{html.escape(sql)}</code></pre></dd>" if sql else "")


def _status_html(info: CalcInfo, entry: Mapping[str, Any], words: Mapping[str, str]) -> str:
    status = html.escape(info.status)
    detail = [str(entry.get(key) or "").strip() for key in ("verification_method", "reason")]
    note = " · ".join(html.escape(d) for d in detail if d)
    return (
        f'<dt>{words["status"]}</dt><dd><span class="badge {status}">{status.replace("_", " ")}</span>'
        + (f' <span class="hint">{note}</span>' if note else "")
        + "</dd>"
    )


def _references(calcs: Mapping[str, CalcInfo], entries: Mapping[str, Any], markdown: str) -> str:
    """The references list: each recorded marker with its description, formula, check and verification status."""
    language = report_language(markdown)
    words = _WORDS[language]
    numbered = sorted(
        (int(m.group(1)), info) for info in calcs.values() if (m := _MARKER_RE.match(info.citation_id or ""))
    )
    if not numbered:
        return ""
    items = []
    for number, info in numbered:
        record = info.record  # its calculation_metadata.json entry: the check, a claim's test
        items.append(
            f'<li id="{ANCHOR_PREFIX}{number}"><span class="marker">[{number}]</span> '
            f'<span class="description">{html.escape(info.description)}</span><dl>'
            f"<dt>{words['formula']}</dt><dd>{html.escape(info.formula)}</dd>"
            f"{_check_html(record, words, language)}{_status_html(info, entries.get(info.calc_id, {}), words)}"
            "</dl></li>"
        )
    heading = html.escape(references_heading(markdown))
    return f'<section class="references"><h2>{heading}</h2><ol>{"".join(items)}</ol></section>'


def _title_and_blocks(markdown: str) -> tuple[str, list[Block]]:
    blocks = parse_markdown(markdown)
    if blocks and blocks[0].kind == "heading" and blocks[0].level == 1:
        return blocks.pop(0).text, blocks
    return "Analysis Report", blocks


def report_html(source: ReportSource) -> str | None:
    """The job's rendered report as one ``<article>`` of safe HTML, or None when the job has no rendered report.

    Args:
        source: The job's files and the URL its artifacts are served from.

    Raises:
        ValidationError: citations.json is malformed (the report would be refused to render too). A file above
            :data:`MAX_REPORT_FILE_BYTES` reads as missing.
    """
    if DOCX_NAME not in source.files or MARKDOWN_NAME not in source.files:
        return None
    source = _bounded(source)
    markdown = _text(source.read(MARKDOWN_NAME))
    if markdown is None:
        return None
    language = report_language(markdown)
    with tempfile.TemporaryDirectory(prefix="insightloom-report-") as tmp:
        folder = Path(tmp)
        _snapshot(source, folder)
        try:
            calcs = load_calc_info(folder, required=False)
        except RecursionError as exc:  # JSON nested too deep for the parser: the report cannot be filled in
            raise ValidationError(f"{CITATIONS_FILE} or {METADATA_FILE} is nested too deeply to read",
                                  "run validation again (insightloom verify JOB) to rewrite them") from exc  # fmt: skip
        title, blocks = _title_and_blocks(markdown)
        blocks = with_limitations(blocks, folder, is_korean(markdown))
        fill = _Filler(calcs, language)
        body = "".join(_Writer(fill, source, language).blocks(blocks))
        citations = load_citations(folder, required=False) or {"citations": []}
        entries = {str(e.get("calculation_id")): e for e in citations["citations"]}
        references = _references(calcs, entries, markdown)
    return f'<article class="report" lang="{language}"><h1>{fill.html(title)}</h1>{body}{references}</article>'
