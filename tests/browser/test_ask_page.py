"""A real headless Chromium asks a finished job a question on its page and sees a cited answer, then its history.

Same harness as ``test_web_page.py`` (Debian's chromium and chromium-driver, nothing downloaded).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_web_page import STEP_S, TOKEN, driver  # noqa: F401  (the driver fixture)

from finished_jobs import ANSWERABLE, UNANSWERABLE, offline, run_finished_job
from insightloom.fileio import write_text_atomic
from insightloom.service import ServiceConfig, ThreadedServer, create_app
from insightloom.service.manager import OWNERS_DIR

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, str]]:
    """An artifacts folder with ana's finished job and one run from the CLI (no owner)."""
    root = tmp_path_factory.mktemp("ask-page") / "artifacts"
    anas = run_finished_job(root).name
    write_text_atomic(root / OWNERS_DIR / anas, "ana\n")
    yield root, anas, run_finished_job(root).name


def _wait(browser: object, seconds: float = STEP_S) -> object:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, seconds)


def _ask(browser: object, question: str, count: int) -> object:
    """Type and send a question; the ``count``-th answer once it is complete (not the pending placeholder)."""
    from selenium.webdriver.common.by import By

    box = browser.find_element(By.ID, "question")
    box.clear()
    box.send_keys(question)
    browser.find_element(By.ID, "ask-button").click()
    selector = "#ask-history li.assistant:not(.pending)"
    _wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, selector)) >= count)
    return browser.find_elements(By.CSS_SELECTOR, selector)[count - 1]


def test_a_finished_job_page_answers_a_question_with_linked_sources(driver, artifacts, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    root, anas, _cli = artifacts
    app = create_app(offline(root), ServiceConfig(tokens={TOKEN: "ana"}, keepalive_s=2), cwd=tmp_path)
    with ThreadedServer(app) as server:
        driver.get(f"{server.url}/#{anas}")
        _wait(driver).until(ec.visibility_of_element_located((By.ID, "token"))).send_keys(TOKEN)
        driver.find_element(By.ID, "signin-button").click()  # a cookie session: the ask POST needs its CSRF token
        _wait(driver).until(ec.visibility_of_element_located((By.ID, "ask-form")))

        answer = _ask(driver, ANSWERABLE, 1)
        assert "abstained" not in answer.get_attribute("class")
        links = answer.find_elements(By.CSS_SELECTOR, "a.cite")
        assert links and links[0].text.startswith("[F")
        sources = answer.find_element(By.CSS_SELECTOR, "details.sources")
        assert sources.get_attribute("open") is None  # folded until a citation is followed
        links[0].click()
        fragment_id = links[0].text.strip("[]")
        source = answer.find_element(By.ID, f"cite-1-{fragment_id}")
        _wait(driver).until(lambda _d: source.is_displayed())
        assert source.find_element(By.TAG_NAME, "blockquote").text.strip()  # the fragment's own text
        assert driver.current_url.endswith(f"#{anas}")  # following a citation keeps the job open

        nothing = _ask(driver, UNANSWERABLE, 2)
        assert "abstained" in nothing.get_attribute("class") and not nothing.find_elements(By.CSS_SELECTOR, "a.cite")
        screenshot = tmp_path / "ask_page.png"
        assert driver.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 10_000

        driver.refresh()  # the conversation is the session's: it comes back with the page
        history = "#ask-history li"
        _wait(driver).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, history)) == 4)
        roles = [item.get_attribute("class") for item in driver.find_elements(By.CSS_SELECTOR, history)]
        assert roles == ["user", "assistant", "user", "assistant"]
        assert driver.find_elements(By.CSS_SELECTOR, history)[0].text == ANSWERABLE

        driver.find_element(By.ID, "ask-forget-button").click()
        driver.switch_to.alert.accept()
        _wait(driver).until(lambda d: not d.find_elements(By.CSS_SELECTOR, history))


def test_without_a_token_the_page_lists_and_opens_cli_jobs(driver, artifacts, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    root, anas, cli = artifacts
    with ThreadedServer(create_app(offline(root), ServiceConfig(keepalive_s=2), cwd=tmp_path)) as server:
        driver.get(server.url)
        entry = _wait(driver).until(
            ec.element_to_be_clickable((By.CSS_SELECTOR, f'#jobs button.job-link[data-id="{cli}"]'))
        )
        assert not driver.find_elements(By.CSS_SELECTOR, f'#jobs button.job-link[data-id="{anas}"]')
        entry.click()
        _wait(driver).until(ec.visibility_of_element_located((By.ID, "report-link")))
        assert driver.find_element(By.ID, "status").get_attribute("data-status") == "completed"
        answer = _ask(driver, ANSWERABLE, 1)
        assert answer.find_elements(By.CSS_SELECTOR, "a.cite")
