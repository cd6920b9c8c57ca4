"""Reviews and cancels over the API: what is queued, what is refused with 409, and what a job looks like."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from servicekit import ANA, RecordingQueue, job_json, make_app, make_job

from insightloom.joblock import lock_alive


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "artifacts"


@pytest.fixture
def queue() -> RecordingQueue:
    return RecordingQueue()


@pytest.fixture
def client(root: Path, queue: RecordingQueue) -> Iterator[TestClient]:
    with TestClient(make_app(root, queue)) as test_client:
        yield test_client


def test_job_view_has_status_plan_revisions_usage_and_artifacts(client: TestClient, root: Path) -> None:
    job = make_job(root, "ana", status="awaiting_review", stage="review", revision=1, max_revisions=3)
    (job / "plan.md").write_text("# Plan (Revised)\n## steps\n- [ ] Do <b>it</b>\n- [x] Done\n", encoding="utf-8")
    view = client.get(f"/jobs/{job.name}", headers=ANA).json()
    assert (view["status"], view["stage"], view["revisions"], view["max_revisions"]) == (
        "awaiting_review",
        "review",
        1,
        3,
    )
    assert view["plan"].startswith("# Plan (Revised)")
    assert "&lt;b&gt;it&lt;/b&gt;" in view["plan_html"] and "<b>" not in view["plan_html"]
    assert view["plan_html"].count('type="checkbox"') == 2 and "checked" in view["plan_html"]
    assert {"agents", "total"} <= set(view["usage"]) and view["report"] is None
    assert {"job.json", "plan.md", "request.json", "usage.json"} <= set(view["artifacts"])
    listed = client.get("/jobs", headers=ANA).json()["jobs"]
    assert listed == [
        {
            "id": job.name,
            "status": "awaiting_review",
            "stage": "review",
            "created_at": view["created_at"],
            "request": view["request"],
        }
    ]


def test_review_is_queued_once_and_refused_when_not_awaiting(client: TestClient, root: Path, queue) -> None:
    waiting = make_job(root, "ana", status="awaiting_review", stage="review", revision=0, max_revisions=3)
    running = make_job(root, "ana", status="running", stage="supervise")
    feedback = {"approve": False, "feedback": "Add a breakdown by region."}
    accepted = client.post(f"/jobs/{waiting.name}/review", headers=ANA, json=feedback)
    assert accepted.status_code == 202 and accepted.json()["accepted"] == "feedback"
    (item,) = queue.items
    assert (item.job_id, item.action, item.decision, item.feedback) == (
        waiting.name,
        "review",
        "feedback",
        "Add a breakdown by region.",
    )
    again = client.post(f"/jobs/{waiting.name}/review", headers=ANA, json={"approve": True})
    assert again.status_code == 409 and "already being applied" in again.json()["detail"]
    assert client.get(f"/jobs/{waiting.name}", headers=ANA).json()["review_pending"] is True
    not_waiting = client.post(f"/jobs/{running.name}/review", headers=ANA, json={"approve": True})
    assert not_waiting.status_code == 409 and "not awaiting review (it is running)" in not_waiting.json()["detail"]
    assert len(queue.items) == 1


def test_feedback_after_the_last_revision_is_409_but_approval_is_accepted(client: TestClient, root: Path) -> None:
    job = make_job(root, "ana", status="awaiting_review", stage="review", revision=2, max_revisions=2)
    late = client.post(f"/jobs/{job.name}/review", headers=ANA, json={"approve": False, "feedback": "more"})
    assert late.status_code == 409 and "No revisions left" in late.json()["detail"]
    assert client.post(f"/jobs/{job.name}/review", headers=ANA, json={"approve": True}).status_code == 202


@pytest.mark.parametrize(
    "body",
    [{"approve": False}, {"approve": False, "feedback": "  "}, {"feedback": "x"}, {"approve": True, "extra": 1}, []],
)
def test_malformed_reviews_are_422(client: TestClient, root: Path, body: object) -> None:
    job = make_job(root, "ana", status="awaiting_review", stage="review", revision=0, max_revisions=3)
    assert client.post(f"/jobs/{job.name}/review", headers=ANA, json=body).status_code == 422


def test_cancel_a_job_awaiting_review_ends_it_at_once(client: TestClient, root: Path, queue) -> None:
    job = make_job(root, "ana", status="awaiting_review", stage="review", revision=0, max_revisions=3)
    response = client.post(f"/jobs/{job.name}/cancel", headers=ANA)
    assert response.status_code == 202 and response.json()["cancel"] == "cancelled"
    assert job_json(job)["status"] == "cancelled" and queue.items == []
    last = json.loads((job / "events.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert last["kind"] == "cancelled"
    ended = client.post(f"/jobs/{job.name}/cancel", headers=ANA)
    assert ended.status_code == 409 and "already ended" in ended.json()["detail"]


def test_a_queued_job_cancelled_before_it_starts_never_runs(client: TestClient, root: Path, queue) -> None:
    job_id = client.post(
        "/jobs", headers=ANA, data={"request": "Analyze"}, files=[("files", ("a.csv", b"a,b\n1,2\n", "text/csv"))]
    ).json()["id"]
    assert client.post(f"/jobs/{job_id}/cancel", headers=ANA).json()["cancel"] == "requested"
    start, follow_up = queue.items
    assert (start.action, follow_up.action, follow_up.decision) == ("start", "review", "cancel")
    for item in (start, follow_up):
        client.app.state.manager.execute(item)  # what a worker does when the item's turn comes
    assert job_json(root / job_id)["status"] == "cancelled"
    assert not (root / job_id / "cache" / "profile.json").exists()  # intake never ran
    kinds = [json.loads(line)["kind"] for line in (root / job_id / "events.jsonl").read_text().splitlines()]
    assert kinds == ["cancelled"]  # and the follow-up found nothing left to cancel
    assert client.get(f"/jobs/{job_id}", headers=ANA).json()["status"] == "cancelled"


def test_a_job_running_in_another_process_is_asked_to_stop_through_its_folder(client: TestClient, root: Path) -> None:
    elsewhere = make_job(root, "ana", status="running", stage="supervise")
    response = client.post(f"/jobs/{elsewhere.name}/cancel", headers=ANA)
    assert response.status_code == 202 and response.json()["cancel"] == "requested"
    assert (elsewhere / "cancel.request").exists()  # the CancelGuard of the process running it reads this


def test_server_start_requeues_accepted_reviews_and_resumes_dead_jobs(root: Path) -> None:
    import os
    import socket

    host = socket.gethostname()
    feedback = make_job(
        root,
        "ana",
        status="awaiting_review",
        revision=0,
        max_revisions=3,
        pending_review={"decision": "feedback", "feedback": "Add a regional view."},
    )
    auto = make_job(root, "ana", status="awaiting_review", revision=0, max_revisions=3, auto_approve=True)
    waiting = make_job(root, "ana", status="awaiting_review", revision=0, max_revisions=3)
    dead = make_job(root, "ana", status="running", stage="supervise")
    reused = {"pid": os.getpid(), "host": host, "started": "earlier-boot:1", "heartbeat": 0}  # a restarted container
    (dead / "job.lock").write_text(json.dumps(reused))
    alive = make_job(root, "ana", status="running", stage="supervise")
    (alive / "job.lock").write_text(json.dumps({"pid": os.getppid(), "host": host, "heartbeat": 0}))
    cli_job = make_job(root, None, status="running", stage="supervise")
    queue = RecordingQueue()
    with TestClient(make_app(root, queue)) as client:
        items = {item.job_id: item for item in queue.items}
        assert set(items) == {feedback.name, auto.name, dead.name}  # not: waiting, alive (locked), cli_job
        assert (items[feedback.name].decision, items[feedback.name].feedback) == ("feedback", "Add a regional view.")
        assert items[auto.name].decision == "approve" and items[dead.name].action == "resume"
        assert not lock_alive(dead) and lock_alive(alive)
        again = client.post(f"/jobs/{feedback.name}/review", headers=ANA, json={"approve": True})
        assert again.status_code == 409  # the re-queued review holds the plan
        accepted = client.post(f"/jobs/{waiting.name}/review", headers=ANA, json={"approve": True})
        assert accepted.status_code == 202
        assert job_json(waiting)["pending_review"] == {"decision": "approve", "feedback": ""}
    assert job_json(cli_job)["status"] == "running"
