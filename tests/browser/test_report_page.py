"""A real headless Chromium opens a finished job: the report itself is on the page, with its chart and linked
markers, model text that tries to inject HTML stays text, and Korean renders as glyphs on a machine without any
Hangul font.

Same harness as ``test_web_page.py`` (Debian's chromium and chromium-driver, nothing downloaded). The browser is
started with a fontconfig that knows one font only: a Latin-only cut of DejaVu Sans made here with fontTools, so it
has no Hangul at all, like a new user's minimal machine. Korean on the page can then only come from the server's web
font, and the same string set in the Latin-only font is what "empty boxes" look like.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_web_page import STEP_S, TOKEN, driver  # noqa: F401  (the driver fixture)

from finished_jobs import offline
from insightloom.service import ServiceConfig, ThreadedServer, create_app
from insightloom.service.webfont import web_font
from rendered_jobs import KOREAN_REQUEST, SCRIPT_CELL, SCRIPT_COLUMN, rendered_job

pytestmark = pytest.mark.e2e
LATIN_ONLY = "Latin Only Test"
#: A glyph rendering has strokes: at least this many dark pixels in the text's box.
MIN_INK = 40


def _latin_only_font(path: Path) -> None:
    """DejaVu Sans (matplotlib's) cut to printable ASCII and renamed: a font known to lack Hangul.

    Its ``.notdef`` keeps its outline, so a character it lacks is drawn as a box (tofu), as on a machine without a
    Hangul font.
    """
    import matplotlib
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"))
    options = subset.Options()
    options.notdef_outline = True
    options.name_IDs = [1, 2, 4, 6]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=range(0x20, 0x7F))
    subsetter.subset(font)
    for record in font["name"].names:
        if record.nameID in (1, 4):
            record.string = LATIN_ONLY
        elif record.nameID == 6:
            record.string = LATIN_ONLY.replace(" ", "")
    font.save(str(path))


@pytest.fixture
def no_hangul_fonts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fontconfig whose only font is the Latin-only one; Chromium started after this sees nothing else."""
    fonts = tmp_path / "fonts"
    fonts.mkdir()
    _latin_only_font(fonts / "latin-only.ttf")
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n'
        f"<fontconfig><dir>{fonts}</dir><cachedir>{tmp_path / 'fc-cache'}</cachedir></fontconfig>\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("FONTCONFIG_FILE", str(conf))
    return fonts


@pytest.fixture
def browser(no_hangul_fonts: Path, driver: object) -> Iterator[object]:  # noqa: F811
    """The driver fixture, started (after ``no_hangul_fonts``) on a machine without any Hangul font."""
    yield driver


def _wait(browser: object, seconds: float = STEP_S) -> object:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, seconds)


def _open_signed_in(browser: object, url: str, job_id: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    browser.get(f"{url}/#{job_id}")
    _wait(browser).until(ec.visibility_of_element_located((By.ID, "token"))).send_keys(TOKEN)
    browser.find_element(By.ID, "signin-button").click()


def _app(root: Path, tmp_path: Path) -> object:
    return create_app(offline(root), ServiceConfig(tokens={TOKEN: "ana"}, keepalive_s=2), cwd=tmp_path)


def test_the_report_shows_with_its_chart_linked_markers_and_no_script(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    root = tmp_path / "artifacts"
    job_id = rendered_job(root, "ana").name
    with ThreadedServer(_app(root, tmp_path)) as server:
        _open_signed_in(browser, server.url, job_id)
        report = _wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#report article.report")))
        assert report.find_element(By.TAG_NAME, "h1").text == "Sales report"
        assert "1,234,568 KRW [1]" in report.text

        image = report.find_element(By.CSS_SELECTOR, "figure img")
        image.location_once_scrolled_into_view  # noqa: B018  (loading="lazy": bring it into view)
        loaded = "return arguments[0].complete && arguments[0].naturalWidth"
        _wait(browser).until(lambda d: d.execute_script(loaded, image))
        assert browser.execute_script("return arguments[0].naturalWidth", image) > 0  # the chart itself came
        assert image.get_attribute("src").endswith(f"/jobs/{job_id}/artifacts/charts/amount_by_category.png")
        assert "Figure 1:" in report.find_element(By.TAG_NAME, "figcaption").text

        cells = [cell.text for cell in report.find_elements(By.CSS_SELECTOR, "td, th")]
        assert SCRIPT_CELL in cells and SCRIPT_COLUMN in cells  # shown as the text the model wrote
        assert browser.execute_script("return typeof window.__pwned") == "undefined"  # and nothing of it ran
        assert len(report.find_elements(By.TAG_NAME, "img")) == 1 and not report.find_elements(By.TAG_NAME, "script")

        marker = report.find_element(By.CSS_SELECTOR, "p a.cite")
        assert marker.text == "[1]"
        marker.click()
        entry = report.find_element(By.ID, "report-ref-1")
        _wait(browser).until(lambda _d: "flash" in (entry.get_attribute("class") or ""))
        assert "SELECT SUM(Amount) FROM sales" in entry.text and "verified" in entry.text
        assert "sum of Amount" in entry.text
        assert browser.current_url.endswith(f"#{job_id}")  # following a marker keeps the job open
        screenshot = tmp_path / "report_page.png"
        assert browser.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 10_000


def _shot(element: object) -> object:
    from PIL import Image

    return Image.open(io.BytesIO(element.screenshot_as_png)).convert("L")


def _ink(image: object) -> int:
    return sum(image.histogram()[:128])  # pixels darker than mid-grey


def _in_latin_only(browser: object, element: object) -> object:
    """The element's screenshot with its text set in the Latin-only font (boxes for Hangul), then restored."""
    browser.execute_script(f"arguments[0].style.fontFamily = '\"{LATIN_ONLY}\"'", element)
    try:
        return _shot(element)
    finally:
        browser.execute_script("arguments[0].style.fontFamily = ''", element)


def _font_loaded(browser: object) -> bool:
    return bool(
        browser.execute_script(
            "return [...document.fonts].some((f) => f.family.includes('Insightloom CJK') && f.status === 'loaded')"
        )
    )


def test_korean_renders_as_glyphs_on_a_machine_without_a_hangul_font(browser, tmp_path: Path) -> None:
    from PIL import ImageChops
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    if web_font() is None:  # also waits for the build the app starts, as a server up for a few seconds has it
        pytest.skip("no CJK font on this machine to serve: pip install koreanize-matplotlib")
    root = tmp_path / "artifacts"
    job_id = rendered_job(root, "ana", language="ko").name
    with ThreadedServer(_app(root, tmp_path)) as server:
        _open_signed_in(browser, server.url, job_id)
        request = _wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#jobs .job-request")))
        assert request.get_attribute("textContent") == KOREAN_REQUEST
        first_look = _shot(request)  # before the web font is known to be there: never boxes, at most a blank

        _wait(browser).until(_font_loaded, "the Hangul web font (/fonts/cjk) never loaded: Korean stays boxes")
        browser.execute_async_script("document.fonts.ready.then(() => arguments[0]())")
        glyphs = _shot(request)
        boxes = _in_latin_only(browser, request)
        assert glyphs.size == boxes.size
        assert ImageChops.difference(glyphs, boxes).getbbox() is not None, "Korean is drawn as empty boxes"
        assert _ink(glyphs) > MIN_INK and _ink(boxes) > MIN_INK  # both drew something: glyphs, and boxes
        assert ImageChops.difference(first_look, boxes).getbbox() is not None, "the job list showed boxes first"

        title = _wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#report article h1")))
        assert title.text == "매출 보고서"
        title_glyphs = _shot(title)
        assert ImageChops.difference(title_glyphs, _in_latin_only(browser, title)).getbbox() is not None
        assert _ink(title_glyphs) > MIN_INK
        screenshot = tmp_path / "report_page_korean.png"
        assert browser.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 10_000
