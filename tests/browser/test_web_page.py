"""A real headless Chromium drives the web page: sign in → submit → request changes → approve → download link.

Uses Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them); no browser or driver is downloaded.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from insightloom.config import Settings
from insightloom.service import ServiceConfig, ThreadedServer, create_app
from repo_paths import DATA

pytestmark = pytest.mark.e2e
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
INSTALL_HINT = "sudo apt-get install -y chromium chromium-driver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-proxy-server",
    "--window-size=1366,900",  # a laptop screen
)
TOKEN = "browser-test-token-0123456789"
MOON = DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"
STEP_S = 120
JOB_S = 600


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture
def driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    if not CHROMIUM.exists():
        if _in_ci():
            pytest.fail(f"{CHROMIUM} is missing in CI: .ci/run must install it ({INSTALL_HINT}).")
        pytest.skip(f"Chromium is not installed; to run the browser test: {INSTALL_HINT}")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must never fetch a driver or browser
    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    service = Service(executable_path=str(CHROMEDRIVER), log_output=str(tmp_path / "chromedriver.log"))
    browser = webdriver.Chrome(options=options, service=service)
    try:
        yield browser
    finally:
        browser.quit()


def test_sign_in_submit_review_approve_and_download(driver, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select, WebDriverWait

    def wait(seconds: float = STEP_S) -> WebDriverWait:
        return WebDriverWait(driver, seconds)

    settings = Settings(artifacts=tmp_path / "artifacts").with_provider("offline")
    app = create_app(settings, ServiceConfig(tokens={TOKEN: "ana"}, keepalive_s=2), cwd=tmp_path)
    with ThreadedServer(app) as server:
        driver.get(server.url)
        wait().until(ec.visibility_of_element_located((By.ID, "token"))).send_keys(TOKEN)
        driver.find_element(By.ID, "signin-button").click()
        wait().until(ec.visibility_of_element_located((By.ID, "submit-form")))
        assert driver.find_element(By.ID, "user-name").text == "ana"
        assert "Noto Sans KR" in driver.execute_script("return getComputedStyle(document.body).fontFamily")
        hangul = driver.execute_async_script(  # Korean stays readable where the machine has no Hangul font
            "const done = arguments[0];"
            "document.fonts.load('16px \"Insightloom CJK\"', '한').then((faces) => done(faces.length), () => done(-1));"
        )
        assert hangul == 1

        driver.find_element(By.ID, "files").send_keys(str(MOON))
        driver.find_element(By.ID, "request").send_keys("Analyze this data and write a DOCX report")
        Select(driver.find_element(By.ID, "provider")).select_by_value("offline")
        driver.find_element(By.ID, "submit-button").click()

        wait().until(ec.element_to_be_clickable((By.ID, "approve-button")))
        plan = driver.find_element(By.ID, "plan")
        assert "Coder" in plan.text and plan.find_elements(By.CSS_SELECTOR, "li.task input[type=checkbox]")
        assert driver.find_element(By.ID, "plan-title").text == "Plan"

        driver.find_element(By.ID, "feedback").send_keys("Skip the correlation analysis, please.")
        driver.find_element(By.ID, "feedback-button").click()
        wait().until(ec.text_to_be_present_in_element((By.ID, "plan-title"), "Revised plan (revision 1 of 3)"))
        wait().until(ec.element_to_be_clickable((By.ID, "approve-button"))).click()

        link = wait(JOB_S).until(ec.visibility_of_element_located((By.ID, "report-link")))
        assert driver.find_element(By.ID, "status").get_attribute("data-status") == "completed"
        href = link.get_attribute("href")
        assert href.startswith(server.url) and href.endswith("/artifacts/final_report.docx")
        assert "Revised plan" in driver.find_element(By.ID, "plan-title").text
        driver.execute_script("window.scrollTo(0, 0)")
        screenshot = tmp_path / "web_page_completed.png"
        assert driver.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 10_000

        session = {c["name"]: c["value"] for c in driver.get_cookies()}  # the page's HttpOnly session
        download = httpx.get(href, cookies=session, timeout=30)
        assert download.status_code == 200 and download.content[:2] == b"PK"  # a DOCX is a zip
        assert httpx.get(href, timeout=30).status_code == 401  # and nothing without it
