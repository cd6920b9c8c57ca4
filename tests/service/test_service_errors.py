"""One error body for every answer: ``{"detail", "fix"}``, generic for a 500, ``Retry-After`` on a 503."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from servicekit import ANA, RecordingQueue, make_app, make_job

from insightloom import errors
from insightloom.service import app as app_module
from insightloom.service.errors_http import error_body, error_response, http_status, internal_body


def test_the_body_is_the_message_and_the_fix() -> None:
    assert error_body(errors.JobConflict("Job x is locked.", "wait for it.")) == {
        "detail": "Job x is locked.",
        "fix": "wait for it.",
    }
    assert error_body(errors.JobNotFound("No such job.")) == {"detail": "No such job.", "fix": None}
    assert app_module.http_status is http_status  # the app still exports the table's lookup


def test_a_500_never_shows_the_error_text() -> None:
    body = error_body(errors.BudgetExceeded("/srv/secret/path went over the ceiling", "raise it"))
    assert body == internal_body()
    assert "secret" not in str(body) and "server log" in body["fix"]


def test_503s_say_when_to_retry_and_other_errors_do_not() -> None:
    broker = error_response(errors.BrokerUnavailable("Redis is down.", "start it.", retry_after_s=5))
    assert broker.status_code == 503 and broker.headers["retry-after"] == "5"
    assert error_response(errors.QueueFull("full")).headers["retry-after"] == "30"
    missing = error_response(errors.JobNotFound("No such job."))
    assert missing.status_code == 404 and "retry-after" not in missing.headers


def test_domain_errors_over_http_carry_their_fix(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    with TestClient(make_app(root, RecordingQueue())) as client:
        job = make_job(root, "ana", status="awaiting_review", revision=1, max_revisions=1)
        late = client.post(f"/jobs/{job.name}/review", headers=ANA, json={"approve": False, "feedback": "more"})
        unknown = client.get("/jobs", headers={"Authorization": "Bearer nope"})
    assert late.status_code == 409
    assert late.json() == {
        "detail": "No revisions left: 1 were allowed and this is revision 1.",
        "fix": "approve or cancel.",
    }
    assert unknown.status_code == 401 and unknown.json() == {"detail": unknown.json()["detail"], "fix": None}
    assert unknown.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("error", [RuntimeError("/srv/secret/path"), errors.ModelError("/srv/secret/path")])
def test_unexpected_and_unmapped_errors_are_a_generic_500(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    app = make_app(tmp_path / "artifacts", RecordingQueue())

    def boom(user: str) -> list[dict[str, str]]:
        raise error

    with TestClient(app, raise_server_exceptions=False) as client:
        monkeypatch.setattr(app.state.manager, "list_jobs", boom)
        response = client.get("/jobs", headers=ANA)
    assert response.status_code == 500 and response.json() == internal_body()
    assert "secret" not in response.text


def test_the_web_page_shows_the_fix_after_the_detail() -> None:
    source = (Path(app_module.__file__).parent / "static" / "app.js").read_text(encoding="utf-8")
    detail_of = re.search(r"function detailOf\(body\) \{.*?\n\}", source, re.DOTALL)
    assert detail_of is not None
    assert "body.fix" in detail_of.group(0) and "Fix: ${body.fix}" in detail_of.group(0)
