"""The finished report as HTML on the page (``GET /jobs/{id}/report.html``) and the Hangul web font it is read in.

The HTML must print what the DOCX prints, link each marker to its formula and check, show the charts through the
owner-only artifact route, and never let model text become markup. The web font must be the small Hangul cut the
stylesheet declares, ready before a page asks for it.
"""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from servicekit import ANA, BEN, RecordingQueue, make_app, make_job

from insightloom.claims.wording import claim_text
from insightloom.service import app as app_module
from insightloom.service import webfont
from insightloom.service.report_html import ANCHOR_PREFIX, ReportSource, report_html
from rendered_jobs import CHART, SCRIPT_CELL, SCRIPT_COLUMN, rendered_job

STYLE = Path(app_module.STATIC) / "style.css"
#: Every element the report HTML may hold: anything else came from model text.
ALLOWED_TAGS = {
    "article", "h1", "h2", "h3", "h4", "p", "ul", "ol", "li", "span", "a", "figure", "img", "figcaption", "div",
    "table", "thead", "tbody", "tr", "th", "td", "section", "dl", "dt", "dd", "pre", "code", "strong", "em", "br",
}  # fmt: skip


class _Page(HTMLParser):
    """The tags, attributes, ids and text of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.by_id: dict[str, list[str]] = {}
        self._open: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        self.tags.append((tag, found))
        if tag not in ("img", "br"):
            self._open.append((tag, found.get("id")))
            if found.get("id"):
                self.by_id[found["id"]] = []

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        for _tag, element_id in self._open:
            if element_id:
                self.by_id[element_id].append(data)

    def all_text(self) -> str:
        return " ".join("".join(self.text).split())


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _squash(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "artifacts"


def _get_report(root: Path, job_dir: Path, headers: dict[str, str] = ANA) -> Any:
    with TestClient(make_app(root, RecordingQueue())) as client:
        return client.get(f"/jobs/{job_dir.name}/report.html", headers=headers)


def test_the_report_page_prints_what_the_docx_prints(root: Path) -> None:
    from docx import Document

    job_dir = rendered_job(root, "ana")
    response = _get_report(root, job_dir)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert "script-src" not in response.headers["content-security-policy"]  # default-src 'none': nothing runs
    assert "default-src 'none'" in response.headers["content-security-policy"]
    page = _parse(response.text)
    shown = page.all_text()
    document = Document(str(job_dir / "final_report.docx"))
    paragraphs = [_squash(p.text) for p in document.paragraphs if p.text.strip()]
    references_at = paragraphs.index("References")
    for text in paragraphs[:references_at]:  # title, headings, the cited sentence, the caption
        assert text in shown, text
    cells = [_squash(cell.text) for table in document.tables for row in table.rows for cell in row.cells]
    assert "1,234,568 KRW [1]" in paragraphs[2] and "250 [2]" in cells
    for cell in cells:
        assert cell in shown, cell


def test_each_marker_links_to_its_formula_check_and_status(root: Path) -> None:
    page = _parse(_get_report(root, rendered_job(root, "ana")).text)
    links = [attrs["href"] for tag, attrs in page.tags if tag == "a"]
    assert links == ["#report-ref-1", "#report-ref-2", "#report-ref-2"]  # the table cites [2] again
    first = _squash(" ".join(page.by_id[f"{ANCHOR_PREFIX}1"]))
    assert first.startswith("[1] Total Amount")
    assert "sum of Amount" in first and "SELECT SUM(Amount) FROM sales" in first and "verified" in first
    second = _squash(" ".join(page.by_id[f"{ANCHOR_PREFIX}2"]))
    assert "count of rows" in second and "SELECT COUNT(*) FROM sales" in second


def test_script_in_a_cell_or_a_column_name_is_shown_as_text(root: Path) -> None:
    html = _get_report(root, rendered_job(root, "ana")).text
    page = _parse(html)
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS
    assert not [name for _, attrs in page.tags for name in attrs if name.startswith("on")]
    images = [attrs["src"] for tag, attrs in page.tags if tag == "img"]
    assert len(images) == 1  # the chart, and not the column name's <img>
    shown = page.all_text()
    assert SCRIPT_CELL in shown and SCRIPT_COLUMN in shown  # the model's text, character for character
    assert "<script" not in html and "&lt;script&gt;" in html


def test_charts_are_inline_and_served_only_to_the_owner(root: Path) -> None:
    job_dir = rendered_job(root, "ana")
    with TestClient(make_app(root, RecordingQueue())) as client:
        page = _parse(client.get(f"/jobs/{job_dir.name}/report.html", headers=ANA).text)
        (src,) = [attrs["src"] for tag, attrs in page.tags if tag == "img"]
        assert src == f"/jobs/{job_dir.name}/artifacts/{CHART}"
        chart = client.get(src, headers=ANA)
        assert chart.status_code == 200 and chart.headers["content-type"] == "image/png"
        assert chart.content[:8] == b"\x89PNG\r\n\x1a\n"
        assert client.get(src, headers=BEN).status_code == 404  # someone else's job does not exist for them
        assert client.get(src).status_code == 401
        assert client.get(f"/jobs/{job_dir.name}/report.html", headers=BEN).status_code == 404
        assert client.get(f"/jobs/{job_dir.name}/report.html").status_code == 401


def test_a_job_without_a_finished_report_answers_409_with_the_fix(root: Path) -> None:
    job_dir = make_job(root, "ana", status="running")
    response = _get_report(root, job_dir)
    assert response.status_code == 409
    body = response.json()
    assert "no finished report" in body["detail"] and "running" in body["detail"] and body["fix"]


def test_a_korean_report_reads_as_korean(root: Path) -> None:
    page = _parse(_get_report(root, rendered_job(root, "ana", language="ko")).text)
    (article,) = [attrs for tag, attrs in page.tags if tag == "article"]
    assert article["lang"] == "ko"
    shown = page.all_text()
    assert "참고 문헌" in shown and "그림 1:" in shown and "계산식" in shown
    assert "이며 주문은 250 [2]건입니다" in shown


def _source(files: dict[str, bytes]) -> ReportSource:
    return ReportSource(read=files.get, files=set(files), artifact_url=lambda path: f"/a/{path}")


def _citation(calc_id: str, marker: str, value: Any, **extra: Any) -> dict[str, Any]:
    return {
        "citation_id": marker,
        "calculation_id": calc_id,
        "value": value,
        "description": f"about {calc_id}",
        "formula": f"formula of {calc_id}",
        "verification_status": "verified",
        **extra,
    }


def _job_files(markdown: str, citations: list[dict[str, Any]], records: list[dict[str, Any]]) -> dict[str, bytes]:
    return {
        "final_report.docx": b"PK",
        "report.md": markdown.encode(),
        "citations.json": json.dumps({"citations": citations}).encode(),
        "calculation_metadata.json": json.dumps({"calculations": records}).encode(),
    }


def _record(calc_id: str, value: Any, **extra: Any) -> dict[str, Any]:
    return {
        "id": calc_id,
        "value": value,
        "description": f"about {calc_id}",
        "formula": f"formula of {calc_id}",
        "source_file": "sales",
        "source_columns": ["Revenue"],
        "importance": "high",
        **extra,
    }


def test_only_listed_images_inside_the_job_become_charts_and_model_text_makes_no_links() -> None:
    markdown = "\n\n".join(
        [
            "# T",
            "![outside](../other-job/charts/a.png)",
            "![absolute](/etc/a.png)",
            "![missing](charts/missing.png)",
            "![not an image](charts/data.json)",
            "![ok](charts/./ok.png)",
            "A [link](javascript:alert(document.cookie)) and <https://example.com> and ![x](charts/ok.png) inline.",
            "A forged slot \ue0000\ue001 stays text.",
        ]
    )
    files = _job_files(markdown, [], [])
    files.update({"charts/ok.png": b"\x89PNG", "charts/data.json": b"{}", "../other-job/charts/a.png": b"\x89PNG"})
    page = _parse(report_html(_source(files)) or "")
    assert [attrs["src"] for tag, attrs in page.tags if tag == "img"] == ["/a/charts/ok.png"]
    assert not [tag for tag, _ in page.tags if tag == "a"]  # no marker was recorded, and text makes no link
    assert "[link](javascript:alert(document.cookie))" in page.all_text()


def test_a_sidecar_nested_thousands_deep_or_too_large_reads_as_none_and_the_page_still_shows() -> None:
    markdown = "# T\n\n![deep](charts/deep.png)\n\n![big](charts/big.png)\n"
    files = _job_files(markdown, [], [])
    files.update({"charts/deep.png": b"\x89PNG", "charts/deep.json": b"[" * 100_000 + b"]" * 100_000,
                  "charts/big.png": b"\x89PNG",
                  "charts/big.json": json.dumps({"caption": "x" * (17 * 1024 * 1024)}).encode()})  # fmt: skip
    page = _parse(report_html(_source(files)) or "")
    assert [attrs["src"] for tag, attrs in page.tags if tag == "img"] == ["/a/charts/deep.png", "/a/charts/big.png"]
    assert "x" * 100 not in page.all_text()  # the oversized sidecar's caption is not read


def test_a_claim_prints_its_sentence_with_its_marker_and_stat_check() -> None:
    record = _record(
        "claim_trend_revenue",
        "volatile",
        kind="claim",
        claim_kind="trend",
        evidence={"n": 6, "tau": 0.2, "p_value": 0.57, "slope": 812.4, "cv": 61.3, "largest_swing": 83.2},
        check="stat:trend",
        test={"name": "trend", "sql": "SELECT v FROM p ORDER BY period", "params": {"measure": "Revenue"}},
    )
    files = _job_files(
        "# T\n\nRevenue over time: {{claim:claim_trend_revenue}}.\n",
        [_citation("claim_trend_revenue", "[1]", "volatile")],
        [record],
    )
    html = report_html(_source(files)) or ""
    sentence = claim_text(record, "en")
    assert sentence and f'{sentence}</span> <a class="cite" href="#{ANCHOR_PREFIX}1">[1]</a>' in html.replace(
        "&#x27;", "'"
    )
    entry = _squash(" ".join(_parse(html).by_id[f"{ANCHOR_PREFIX}1"]))
    assert "stat:trend" in entry and "SELECT v FROM p ORDER BY period" in entry


def test_no_rendered_report_no_html() -> None:
    files = _job_files("# T\n", [], [])
    assert report_html(_source({k: v for k, v in files.items() if k != "final_report.docx"})) is None
    assert report_html(_source({k: v for k, v in files.items() if k != "report.md"})) is None


# -- the Hangul web font -----------------------------------------------------------------------------------------------


def _font_face() -> str:
    match = re.search(r"@font-face\s*\{([^}]*)\}", STYLE.read_text(encoding="utf-8"))
    assert match, "style.css declares no @font-face"
    return match.group(1)


def test_the_stylesheet_declares_what_the_served_font_covers_and_no_boxes_while_it_loads() -> None:
    face = _font_face()
    declared = re.search(r"unicode-range:\s*([^;]+);", face)
    assert declared and " ".join(declared.group(1).split()) == webfont.unicode_range()
    assert re.search(r"font-display:\s*block\s*;", face)  # swap would paint Hangul as boxes until the font came
    assert 'url("/fonts/cjk") format("woff")' in face


def test_the_served_font_is_the_small_hangul_cut_browsers_accept(root: Path) -> None:
    from fontTools.ttLib import TTFont

    from insightloom.fonts import find_cjk_font

    with TestClient(make_app(root, RecordingQueue())) as client:
        response = client.get("/fonts/cjk")
    if find_cjk_font() is None:
        assert response.status_code == 404
        return
    assert response.status_code == 200 and response.headers["content-type"] == webfont.MEDIA_TYPE
    assert response.content[:4] == b"wOFF" and len(response.content) < 1_500_000  # the whole font is 4.3 MB
    font = TTFont(io.BytesIO(response.content))
    assert not [tag for tag in font.reader.tables if tag.startswith("TSI")]  # OTS rejects them
    assert not {"fpgm", "prep", "cvt "} & set(font.reader.tables)  # no hinting
    covered = set(font.getBestCmap())
    assert set(range(0xAC00, 0xD7A4)) <= covered  # every Hangul syllable
    assert all(any(lo <= code <= hi for lo, hi in webfont.WEB_FONT_RANGES) for code in covered)


def test_the_app_builds_the_web_font_when_it_starts(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[bool] = []
    monkeypatch.setattr(app_module, "warm_in_background", lambda: started.append(True))
    with TestClient(make_app(root, RecordingQueue())):
        assert started == [True]
