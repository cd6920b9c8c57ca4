"""Whole jobs through a live server (uvicorn on a loopback port): SSE, review, restart, resume and cancel."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from docx import Document
from servicekit import ANA_TOKEN, MOON, MOON_DIR, REQUEST, job_json, make_app

from crashing_job import run_crashing_job
from insightloom.agents import tool_agents
from insightloom.joblock import LOCK_FILE
from insightloom.service import ThreadedServer
from insightloom.service.client import ServiceClient
from repo_paths import load_contract

pytestmark = pytest.mark.e2e
TERMINAL = ("completed", "needs_review", "failed", "cancelled")


def test_a_whole_job_over_the_api_with_feedback_then_approval(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    with ThreadedServer(make_app(root, keepalive_s=2)) as server, ServiceClient(server.url, ANA_TOKEN) as api:
        job_id = api.submit([MOON], REQUEST, provider="offline", max_revisions=2)
        first = api.wait_for(job_id, ["plan_review_request", *TERMINAL], timeout=300)
        assert first[-1]["kind"] == "plan_review_request", first[-1]
        assert first[-1]["data"]["revision"] == 0 and first[-1]["data"]["max_revisions"] == 2
        assert {"stage", "agent_start", "agent_end", "usage"} <= {e["kind"] for e in first}
        view = api.job(job_id)
        assert (view["status"], view["revisions"]) == ("awaiting_review", 0) and "- [ ] Correlate" in view["plan"]

        api.review(job_id, approve=False, feedback="Skip the correlation analysis, please.")
        second = api.wait_for(job_id, ["plan_review_request", *TERMINAL], after=first[-1]["id"], timeout=300)
        assert [e["kind"] for e in second[-2:]] == ["plan_revised", "plan_review_request"]
        revised = second[-2]["data"]["plan"]
        assert revised.startswith("# Plan (Revised)") and "- [ ] Correlate" not in revised
        view = api.job(job_id)
        assert view["revisions"] == 1 and view["plan"] == revised and "Plan (Revised)" in view["plan_html"]

        api.review(job_id, approve=True)
        third = api.wait_for(job_id, TERMINAL, after=second[-1]["id"], timeout=600)
        assert third[-1]["kind"] == "completed" and third[-1]["data"]["report"] == "final_report.docx"
        assert {"tool_call", "tool_result"} <= {e["kind"] for e in third}

        done = api.job(job_id)
        assert (done["status"], done["stage"], done["report"]) == ("completed", "done", "final_report.docx")
        assert done["usage"]["total"]["input_tokens"] > 0 and "final_report.docx" in done["artifacts"]
        report = api.download(job_id, "final_report.docx", tmp_path / "report.docx")
        document = Document(str(report))
        assert (
            len(document.paragraphs) > 10
            and document.tables
            and "[1]" in "\n".join(p.text for p in document.paragraphs)
        )

        events = first + second + third
        assert [e["id"] for e in events] == list(range(1, len(events) + 1))  # every event once, in order
        schema = load_contract("event")
        for event in events:
            jsonschema.validate(event, schema)
        replay = [e for e in api.events(job_id, last_event_id=second[-1]["id"]) if e is not None]
        assert replay == third  # a reconnect gets exactly what came after its Last-Event-ID
        late = api.http.post(f"/jobs/{job_id}/review", json={"approve": True})
        assert late.status_code == 409 and "not awaiting review (it is completed)" in late.text


def test_a_job_awaiting_review_survives_a_server_restart(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    with ThreadedServer(make_app(root, keepalive_s=2)) as first, ServiceClient(first.url, ANA_TOKEN) as api:
        job_id = api.submit([MOON], REQUEST, provider="offline")
        asked = api.wait_for(job_id, ["plan_review_request", *TERMINAL], timeout=300)
        assert asked[-1]["kind"] == "plan_review_request"
    assert job_json(root / job_id)["status"] == "awaiting_review"
    assert not (root / job_id / LOCK_FILE).exists()  # waiting holds no lock and no worker

    with ThreadedServer(make_app(root, keepalive_s=2)) as second, ServiceClient(second.url, ANA_TOKEN) as api:
        assert [(j["id"], j["status"]) for j in api.jobs()] == [(job_id, "awaiting_review")]
        api.review(job_id, approve=True)
        end = api.wait_for(job_id, TERMINAL, after=asked[-1]["id"], timeout=600)
        assert end[-1]["kind"] == "completed"
        assert api.job(job_id)["status"] == "completed" and (root / job_id / "final_report.docx").is_file()


def test_server_start_resumes_a_job_killed_mid_supervisor(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    child = run_crashing_job(MOON_DIR, artifacts=root, owner="ana")
    assert child.returncode == 9, child.stderr[-2000:]
    (job,) = [p for p in root.iterdir() if (p / "job.json").exists()]
    assert (job_json(job)["status"], job_json(job)["stage"]) == ("running", "supervise")
    before = json.loads((job / "calculation_metadata.json").read_text())["calculations"]
    last_id = json.loads((job / "events.jsonl").read_text().splitlines()[-1])["id"]

    with ThreadedServer(make_app(root, keepalive_s=2)) as server, ServiceClient(server.url, ANA_TOKEN) as api:
        end = api.wait_for(job.name, TERMINAL, after=last_id, timeout=600)
        assert end[-1]["kind"] == "completed", end[-3:]
    after = json.loads((job / "calculation_metadata.json").read_text())["calculations"]
    assert [c["id"] for c in after] == [c["id"] for c in before]  # nothing lost, nothing duplicated
    assert json.loads((job / "transcripts" / "coder.json").read_text())["invocations"].__len__() == 1
    assert not (job / LOCK_FILE).exists() and (job / "final_report.docx").is_file()


def test_cancel_stops_a_running_job_and_a_waiting_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tool_agents.run_tool_agent

    def coder_waits_for_cancel(role, rt, task):  # holds the job mid-Supervisor until the cancel arrives
        if role == "coder":
            assert rt.cancel.wait(60), "the cancel never reached the running job"
        return real(role, rt, task)

    monkeypatch.setattr(tool_agents, "run_tool_agent", coder_waits_for_cancel)
    root = tmp_path / "artifacts"
    with ThreadedServer(make_app(root, keepalive_s=2)) as server, ServiceClient(server.url, ANA_TOKEN) as api:
        running = api.submit([MOON], REQUEST, provider="offline", auto_approve=True)
        started = api.wait_for(running, ["tool_call", *TERMINAL], timeout=300)
        while started[-1]["kind"] == "tool_call" and started[-1]["data"]["tool"] != "coder":
            started += api.wait_for(running, ["tool_call", *TERMINAL], after=started[-1]["id"], timeout=300)
        assert started[-1]["data"] == {"agent": "supervisor", "tool": "coder"}
        assert api.cancel(running) == {"id": running, "cancel": "requested"}
        end = api.wait_for(running, TERMINAL, after=started[-1]["id"], timeout=300)
        assert end[-1]["kind"] == "cancelled" and api.job(running)["status"] == "cancelled"
        assert not (root / running / "citations.json").exists()  # nothing after the Coder ran

        waiting = api.submit([MOON], REQUEST, provider="offline")
        asked = api.wait_for(waiting, ["plan_review_request", *TERMINAL], timeout=300)
        assert api.cancel(waiting)["cancel"] in ("cancelled", "requested")  # "requested" while start winds down
        assert api.wait_for(waiting, TERMINAL, after=asked[-1]["id"], timeout=60)[-1]["kind"] == "cancelled"
