"""The Celery deployment against a real ``redis-server`` on loopback and real worker processes (two of them).

Each test drives the API (in this process, queueing to Redis) and ``python -m insightloom.service.celery_queue
worker`` processes sharing one artifacts folder, as ``deploy/docker-compose.yml`` runs them. They cover what broke in
real operations: redelivery re-running work, a dead worker's job stuck until an API restart, and a broker outage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery_lane import CeleryWorker, RedisServer, wait_until, worker_env
from fastapi.testclient import TestClient

from insightloom.config import Settings
from insightloom.service import ServiceConfig, WorkItem, celery_queue, create_app
from repo_paths import DATA

pytestmark = pytest.mark.e2e

MOON = DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"
YUMMY = DATA / "yummy-food" / "yummy-food-market.csv"
TOKEN = "lane-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JOB_S = 240.0
TERMINAL = ("completed", "needs_review", "failed", "cancelled")


class Lane:
    """The artifacts folder, the API client and the workers of one test."""

    def __init__(self, root: Path, redis: RedisServer) -> None:
        self.root = root / "artifacts"
        self.logs = root / "logs"
        self.home = root / "home"
        for folder in (self.root, self.logs, self.home):
            folder.mkdir()
        self.redis = redis
        self.queue = celery_queue.CeleryJobQueue(redis.url)
        self.workers: dict[str, CeleryWorker] = {}
        settings = Settings(artifacts=self.root).with_provider("offline")
        self.app = create_app(settings, ServiceConfig(tokens={TOKEN: "ana"}, poll_s=0.2), queue=self.queue, cwd=root)

    def worker(self, name: str, **env: str) -> CeleryWorker:
        worker = CeleryWorker(name, worker_env(self.redis.url, str(self.root), self.home, **env), self.logs)
        self.workers[name] = worker.start()
        return worker

    def job(self, job_id: str) -> dict:
        return json.loads((self.root / job_id / "job.json").read_text(encoding="utf-8"))

    def events(self, job_id: str) -> list[dict]:
        path = self.root / job_id / "events.jsonl"
        if not path.exists():
            return []  # not started yet
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def stages(self, job_id: str) -> list[str]:
        return [e["data"]["name"] for e in self.events(job_id) if e["kind"] == "stage"]

    def wait_status(self, job_id: str, *statuses: str, timeout: float = JOB_S) -> dict:
        def reached() -> dict | None:
            status = self.job(job_id)
            if status.get("status") not in statuses:
                return None
            # job.json changes just before the terminal event is appended: wait for the event too
            ended = status["status"] not in TERMINAL or any(e["kind"] == status["status"] for e in self.events(job_id))
            return status if ended else None

        return wait_until(reached, timeout, f"job {job_id} to be one of {statuses}")

    def wait_stage(self, job_id: str, stage: str) -> None:
        wait_until(lambda: stage in self.stages(job_id), JOB_S, f"job {job_id} to reach {stage}", every=0.05)

    def runner_of(self, job_id: str) -> CeleryWorker:
        """The worker whose log shows the latest delivery for the job."""
        pattern = re.compile(rf"delivery task=\S+ key=\S+ job={job_id}")
        hits = [(w.log().rfind(m.group(0)), w) for w in self.workers.values() for m in pattern.finditer(w.log())]
        return max(hits, key=lambda hit: hit[0])[1]

    def log_text(self) -> str:
        return "\n".join(w.log() for w in self.workers.values())

    def close(self) -> None:
        for worker in self.workers.values():
            worker.kill()


@pytest.fixture
def lane(tmp_path: Path, redis_server: RedisServer) -> Iterator[Lane]:
    redis = redis_server
    if not redis.answers():
        redis.start()
    flush(redis)
    lane = Lane(tmp_path, redis)
    with TestClient(lane.app) as client:
        lane.client = client  # type: ignore[attr-defined]
        try:
            yield lane
        finally:
            lane.close()
    flush(redis)


def flush(redis: RedisServer) -> None:
    """Start each test with empty queues, so no message of another test reaches its workers."""
    import socket

    with socket.create_connection(("127.0.0.1", redis.port), timeout=5) as sock:
        sock.sendall(b"FLUSHALL\r\n")
        assert sock.recv(16).startswith(b"+OK")


def submit(lane: Lane, data: Path = MOON, *, auto_approve: bool = True) -> str:
    with data.open("rb") as fh:
        response = lane.client.post(  # type: ignore[attr-defined]
            "/jobs",
            headers=AUTH,
            data={"request": "Analyze this data and write a DOCX report", "auto_approve": str(auto_approve).lower()},
            files=[("files", (data.name, fh, "text/csv"))],
        )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_review_is_applied_by_another_worker_and_jobs_run_on_both(lane: Lane) -> None:
    first = lane.worker("w1")
    job = submit(lane, auto_approve=False)
    lane.wait_status(job, "awaiting_review")
    first.stop()  # the plan waits on disk, holding no worker; a different worker applies the review
    second = lane.worker("w2")
    approved = lane.client.post(f"/jobs/{job}/review", headers=AUTH, json={"approve": True})  # type: ignore[attr-defined]
    assert approved.status_code == 202, approved.text
    assert lane.wait_status(job, "completed", "needs_review", "failed")["status"] == "completed"
    assert f"key=start@intake job={job}" in first.log()
    assert f"key=review@rev0 job={job}" in second.log() and f"job={job}" not in second.log().split("key=review")[0]

    lane.worker("w1b")
    both = [submit(lane, MOON), submit(lane, YUMMY)]
    for job_id in both:
        assert lane.wait_status(job_id, "completed", "needs_review", "failed")["status"] == "completed"
    ran_on = {name for job_id in both for name, w in lane.workers.items() if f"job={job_id}" in w.log()}
    assert ran_on == {"w2", "w1b"}


def test_a_worker_child_killed_mid_supervise_is_redelivered_and_resumes_from_supervise(lane: Lane) -> None:
    lane.worker("w1")
    lane.worker("w2")
    job = submit(lane)
    lane.wait_stage(job, "supervise")
    lane.runner_of(job).kill_child()  # the pool restarts its child; Celery requeues the lost item at once
    assert lane.wait_status(job, "completed", "needs_review", "failed")["status"] == "completed"
    stages = lane.stages(job)
    assert stages.count("intake") == 1 and stages.count("coordinate") == 1 and stages.count("plan") == 1
    assert stages[-1] == "done" and stages.count("supervise") == 2  # re-entered once, where it stopped
    assert re.search(rf"key=start@intake job={job} redelivered=True", lane.log_text())
    assert "resume (the job is running in stage supervise" in lane.log_text()


def test_redelivered_items_of_a_finished_job_do_nothing(lane: Lane) -> None:
    worker = lane.worker("w1")
    job = submit(lane)
    assert lane.wait_status(job, "completed", "needs_review", "failed")["status"] == "completed"
    before = (lane.root / job / "job.json").read_bytes(), len(lane.events(job))
    for item in (
        WorkItem(job, "start", stage="intake"),
        WorkItem(job, "review", stage="rev0"),
        WorkItem(job, "resume", stage="supervise"),
    ):
        lane.queue.put(item)
    wait_until(
        lambda: worker.log().count(f"job {job}:") >= 3 and worker.log().count("nothing to do") >= 3,
        60,
        "three no-op acknowledgements",
    )
    assert ((lane.root / job / "job.json").read_bytes(), len(lane.events(job))) == before
    assert lane.stages(job).count("intake") == 1


def test_a_redis_restart_mid_job_loses_no_job(lane: Lane) -> None:
    lane.worker("w1")
    job = submit(lane)
    lane.wait_stage(job, "supervise")
    lane.redis.restart()
    assert lane.wait_status(job, "completed", "needs_review", "failed")["status"] == "completed"
    after = submit(lane, YUMMY)  # the workers reconnected and take new work
    assert lane.wait_status(after, "completed", "needs_review", "failed")["status"] == "completed"
    assert lane.stages(job).count("intake") == 1


def test_broker_down_answers_503_with_retry_after_and_leaves_no_job(lane: Lane) -> None:
    client = lane.client  # type: ignore[attr-defined]
    lane.redis.stop()
    try:
        with MOON.open("rb") as fh:
            refused = client.post(
                "/jobs", headers=AUTH, data={"request": "Analyze this"}, files=[("files", (MOON.name, fh, "text/csv"))]
            )
        assert refused.status_code == 503 and int(refused.headers["Retry-After"]) > 0
        assert "broker" in refused.json()["detail"] and refused.json()["fix"]
        assert not [p for p in lane.root.iterdir() if not p.name.startswith(".")]  # no orphan job folder
        assert not list((lane.root / ".owners").glob("*")) if (lane.root / ".owners").exists() else True
        health = client.get("/healthz")
        assert health.status_code == 200 and health.json()["broker"] == "unreachable"
        wait_until(lambda: client.get("/readyz").status_code == 503, 10, "/readyz to answer 503")
    finally:
        lane.redis.start()
    wait_until(lambda: client.get("/readyz").status_code == 200, 15, "/readyz to recover")
    assert client.get("/healthz").json()["broker"] == "ok"


def test_the_sweeper_recovers_a_dead_workers_job_without_an_api_restart(lane: Lane) -> None:
    lane.worker("w1")
    lane.worker("w2")
    job = submit(lane)
    lane.wait_stage(job, "supervise")
    dead = lane.runner_of(job)
    dead.kill()  # main process and child, as when a container dies: its item stays unacknowledged
    assert lane.wait_status(job, "completed", "needs_review", "failed")["status"] == "completed"
    survivor = next(w for w in lane.workers.values() if w is not dead)
    assert f"sweeper: job {job} had no live runner; queued resume@supervise" in survivor.log()
    stages = lane.stages(job)
    assert stages.count("intake") == 1 and stages[-1] == "done"


def test_worker_provider_auto_picks_bedrock_on_container_credentials_and_refuses_without(lane: Lane) -> None:
    from container_creds import ContainerCredentialsStub

    with ContainerCredentialsStub() as creds:
        lane.worker(
            "bedrock", INSIGHTLOOM_PROVIDER="auto", AWS_REGION="us-east-1", AWS_CONTAINER_CREDENTIALS_FULL_URI=creds.url
        )
    assert re.search(r"auto\W+bedrock", lane.workers["bedrock"].log())
    refused = CeleryWorker(
        "nocreds", worker_env(lane.redis.url, str(lane.root), lane.home, INSIGHTLOOM_PROVIDER="auto"), lane.logs
    )
    with pytest.raises(AssertionError, match="exited"):
        refused.start()
    assert refused.proc is not None and refused.proc.wait(timeout=30) == 2
    assert "Fix:" in refused.log() and "--provider offline" in refused.log() and "ready." not in refused.log()


def test_on_an_s3_store_workers_keep_their_own_copies_and_the_api_serves_from_s3(
    tmp_path: Path, redis_server: RedisServer, s3_env: dict[str, str], s3_uri: str
) -> None:
    redis = redis_server
    flush(redis)
    logs, home = tmp_path / "logs", tmp_path / "home"
    logs.mkdir()
    home.mkdir()
    settings = Settings(artifacts=tmp_path / "api-copy", artifact_store=s3_uri).with_provider("offline")
    config = ServiceConfig(tokens={TOKEN: "ana"}, poll_s=0.2)
    app = create_app(settings, config, queue=celery_queue.CeleryJobQueue(redis.url), cwd=tmp_path)

    def worker(name: str) -> CeleryWorker:
        env = worker_env(redis.url, s3_uri, home, INSIGHTLOOM_WORK_DIR=str(tmp_path / name), **s3_env)
        return CeleryWorker(name, env, logs).start()

    def status(client: TestClient, job_id: str, *wanted: str) -> dict:
        def reached() -> dict | None:
            body = client.get(f"/jobs/{job_id}", headers=AUTH).json()
            return body if body["status"] in wanted else None

        return wait_until(reached, JOB_S, f"job {job_id} to be one of {wanted}", every=0.3)

    first = worker("s1")
    second = None
    try:
        with TestClient(app) as client, MOON.open("rb") as fh:
            response = client.post(
                "/jobs", headers=AUTH, data={"request": "Analyze this data"}, files=[("files", (MOON.name, fh))]
            )
            job = response.json()["id"]
            status(client, job, "awaiting_review")
            first.stop()
            second = worker("s2")  # a second machine: its own empty working copy, the job only in S3
            assert client.post(f"/jobs/{job}/review", headers=AUTH, json={"approve": True}).status_code == 202
            assert status(client, job, "completed", "needs_review", "failed")["status"] == "completed"
            report = client.get(f"/jobs/{job}/artifacts/final_report.docx", headers=AUTH)
            assert report.status_code == 200 and report.content[:2] == b"PK"
            replay = client.get(f"/jobs/{job}/events", headers=AUTH)
            assert "event: completed" in replay.text and '"name": "supervise"' in replay.text
    finally:
        first.kill()
        if second is not None:
            second.kill()
    assert (tmp_path / "s1" / job / "plan.md").is_file() and (tmp_path / "s2" / job / "final_report.docx").is_file()
    assert not (tmp_path / "s1" / job / "final_report.docx").exists()  # s1 never ran the review
    assert f"key=review@rev0 job={job}" in second.log()


def test_a_worker_with_a_bad_sweep_interval_refuses_to_start_naming_the_fix(lane: Lane) -> None:
    bad = CeleryWorker(
        "bad", worker_env(lane.redis.url, str(lane.root), lane.home, INSIGHTLOOM_SWEEP_INTERVAL_S="0"), lane.logs
    )
    with pytest.raises(AssertionError, match="exited"):
        bad.start()
    assert bad.proc is not None and bad.proc.wait(timeout=30) == 2
    assert "INSIGHTLOOM_SWEEP_INTERVAL_S must be a number of seconds above 0" in bad.log() and "Fix:" in bad.log()


def test_a_follow_up_analysis_runs_on_a_worker_like_any_stage(lane: Lane) -> None:
    worker = lane.worker("w1")
    job = submit(lane)
    assert lane.wait_status(job, "completed", "needs_review", "failed")["status"] == "completed"
    calcs = lane.root / job / "calculation_metadata.json"
    before = json.loads(calcs.read_text(encoding="utf-8"))["calculations"]
    answer = lane.client.post(  # type: ignore[attr-defined]
        f"/jobs/{job}/ask",
        headers=AUTH,
        json={"question": "What was the average Qty of Coffee/Tea orders?", "analyze": True},
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["analyzed"] and body["new_calc_ids"] and not body["abstained"]
    assert re.search(rf"key=followup@[0-9a-f]{{32}} job={job}", worker.log())  # the worker ran it, not the API
    after = json.loads(calcs.read_text(encoding="utf-8"))["calculations"]
    assert after[: len(before)] == before and {c["id"] for c in after[len(before) :]} == set(body["new_calc_ids"])
