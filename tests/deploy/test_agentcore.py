"""The AgentCore entrypoint through its HTTP interface (``/ping``, ``/invocations``) on loopback, over S3 (moto).

The whole-job tests run the entrypoint as real processes, each with its own empty work dir (a fresh microVM), as
AgentCore would; the in-process tests hold a step at a gate to see ``/ping`` and the lock while it works.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
import pytest
from celery_lane import free_port, stop_process, wait_until

from insightloom.config import Settings
from insightloom.errors import BadInputError
from insightloom.service.agentcore import check_outside_store, input_names, parse_decision
from insightloom.storage.s3 import S3Store
from insightloom.workflow import Decision
from repo_paths import child_env
from small_sales import write_small_sales_csv

REPO = Path(__file__).resolve().parents[2]
SHIM = REPO / "deploy" / "agentcore_entrypoint.py"
JOB_TIMEOUT_S = 180
ERROR_KEYS = {"detail", "fix"}


# -- helpers ----------------------------------------------------------------------------------------------------------


def _clean_env(home: Path, **extra: str) -> dict[str, str]:
    """No AWS or insightloom settings from the outside, HOME empty, never the instance-metadata address."""
    env = child_env("AWS_", "INSIGHTLOOM_")
    env.update(
        HOME=str(home),
        AWS_EC2_METADATA_DISABLED="true",
        AWS_SHARED_CREDENTIALS_FILE=str(home / "no-credentials"),
        AWS_CONFIG_FILE=str(home / "no-config"),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


class Entrypoint:
    """``python -m insightloom.service.agentcore --host 127.0.0.1 --port <free>``: one microVM."""

    def __init__(self, env: dict[str, str], folder: Path, name: str) -> None:
        self.port = free_port()
        self.work = folder / f"{name}-work"
        self.env = {**env, "INSIGHTLOOM_WORK_DIR": str(self.work)}
        self.log_path = folder / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Entrypoint:
        args = [sys.executable, "-m", "insightloom.service.agentcore", "--host", "127.0.0.1", "--port", str(self.port)]
        with self.log_path.open("ab") as log:
            proc = subprocess.Popen(args, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=self.log_path.parent)
        self.proc = proc
        wait_until(lambda: proc.poll() is not None or self._answers(), 60, "the entrypoint to answer /ping")
        assert proc.poll() is None, f"the entrypoint exited:\n{self.log()}"
        return self

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    def _answers(self) -> bool:
        try:
            self.ping()
        except OSError:
            return False
        return True

    def _call(self, request: urllib.request.Request) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def ping(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/ping", timeout=5) as reply:
            return str(json.loads(reply.read())["status"])

    def invoke(self, payload: Any, *, raw: bytes | None = None) -> tuple[int, Any]:
        body = raw if raw is not None else json.dumps(payload).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/invocations", body, {"Content-Type": "application/json"}, method="POST"
        )
        return self._call(request)

    def status(self, job_id: str) -> dict[str, Any]:
        code, body = self.invoke({"action": "status", "job_id": job_id})
        assert code == 200, body
        return dict(body)

    def kill(self) -> None:
        """kill -9, as when AgentCore ends a microVM mid-step."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        stop_process(self.proc, self.kill)


class PingWatch:
    """Polls ``/ping`` in a thread from now on and keeps every status seen (the step may be short)."""

    def __init__(self, entry: Entrypoint) -> None:
        self.entry = entry
        self.seen: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.seen.append(self.entry.ping())

    def stop(self) -> list[str]:
        self._stop.set()
        self._thread.join(timeout=10)
        return self.seen


@pytest.fixture
def entry_env(s3_env: dict[str, str], s3_uri: str, tmp_path: Path) -> dict[str, str]:
    """A microVM's environment: jobs in the test bucket, offline chosen explicitly, an empty HOME."""
    home = tmp_path / "home"
    home.mkdir()
    return _clean_env(home, **s3_env, INSIGHTLOOM_ARTIFACTS=s3_uri, INSIGHTLOOM_PROVIDER="offline")


@pytest.fixture
def entrypoints(entry_env: dict[str, str], tmp_path: Path) -> Iterator[list[Entrypoint]]:
    """Two entrypoint processes (two microVMs) with their own empty work dirs."""
    entries = [Entrypoint(entry_env, tmp_path, name) for name in ("vm1", "vm2")]
    try:
        for entry in entries:
            entry.start()
        yield entries
    finally:
        for entry in entries:
            entry.stop()


@pytest.fixture
def sales_uri(s3_uri: str, tmp_path: Path) -> str:
    """A small sales table uploaded beside the jobs' prefix, as a caller would put its inputs."""
    bucket = s3_uri.removeprefix("s3://").split("/")[0]
    csv = write_small_sales_csv(tmp_path / "sales.csv")
    boto3.session.Session().client("s3").upload_file(str(csv), bucket, "inputs/sales.csv")
    return f"s3://{bucket}/inputs/sales.csv"


def _s3_object(uri: str) -> bytes:
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    return bytes(boto3.session.Session().client("s3").get_object(Bucket=bucket, Key=key)["Body"].read())


def _stages(s3_uri: str, job_id: str) -> list[str]:
    events = _s3_object(f"{s3_uri}/{job_id}/events.jsonl").decode().splitlines()
    return [e["data"]["name"] for e in map(json.loads, events) if e["kind"] == "stage"]


def _start(entry: Entrypoint, sales_uri: str) -> tuple[str, list[str]]:
    """Start a job and follow it to its plan review; returns the id and the /ping statuses seen meanwhile."""
    watch = PingWatch(entry)
    code, body = entry.invoke({"action": "start", "request": "Revenue by region", "inputs": [sales_uri]})
    assert code == 202, body
    assert body["status"] == "queued"
    job_id = body["job_id"]
    wait_until(lambda: entry.status(job_id)["status"] == "awaiting_review", JOB_TIMEOUT_S, "the plan review")
    wait_until(lambda: entry.ping() == "Healthy", 30, "the start step to end")
    return job_id, watch.stop()


# -- whole jobs across microVMs ---------------------------------------------------------------------------------------


@pytest.mark.e2e
def test_start_then_review_in_a_fresh_microvm_completes(
    entrypoints: list[Entrypoint], sales_uri: str, s3_uri: str
) -> None:
    first, second = entrypoints
    job_id, seen = _start(first, sales_uri)
    assert "HealthyBusy" in seen, seen  # the SDK's async task tracking ran while intake and planning worked
    state = first.status(job_id)
    assert state["plan"] and state["report"] is None and not state["locked"]

    assert not (second.work / job_id).exists()  # a fresh microVM: it has never seen this job
    watch = PingWatch(second)
    code, body = second.invoke({"action": "review", "job_id": job_id, "approve": True})
    assert code == 202, body
    wait_until(lambda: second.status(job_id)["status"] == "completed", JOB_TIMEOUT_S, "the job to complete")
    wait_until(lambda: second.ping() == "Healthy", 30, "the review step to end")
    assert "HealthyBusy" in watch.stop()

    state = first.status(job_id)  # any microVM reads the same state from S3
    assert state["report"] == f"{s3_uri}/{job_id}/final_report.docx"
    assert _s3_object(state["report"]).startswith(b"PK")  # a real .docx (a zip)
    assert _stages(s3_uri, job_id).count("intake") == 1
    for action in ({"action": "review", "approve": True}, {"action": "resume"}):
        code, body = first.invoke({**action, "job_id": job_id})
        assert code == 409 and set(body) == ERROR_KEYS, body  # a finished job is not reviewed or resumed again


@pytest.mark.e2e
def test_two_microvms_reviewing_one_job_at_once_run_it_once(
    entrypoints: list[Entrypoint], sales_uri: str, s3_uri: str
) -> None:
    first, second = entrypoints
    job_id, _ = _start(first, sales_uri)
    barrier = threading.Barrier(2)
    answers: dict[str, tuple[int, Any]] = {}

    def review(entry: Entrypoint, name: str) -> None:
        barrier.wait(timeout=10)
        answers[name] = entry.invoke({"action": "review", "job_id": job_id, "approve": True})

    threads = [threading.Thread(target=review, args=(e, n)) for e, n in ((first, "vm1"), (second, "vm2"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    codes = sorted(code for code, _ in answers.values())
    assert codes == [202, 409], answers
    refused = next(body for code, body in answers.values() if code == 409)
    assert set(refused) == ERROR_KEYS and refused["fix"], refused
    wait_until(lambda: first.status(job_id)["status"] == "completed", JOB_TIMEOUT_S, "the job to complete")
    assert _stages(s3_uri, job_id).count("supervise") == 1  # the analysis ran once


@pytest.mark.e2e
def test_a_job_whose_microvm_died_mid_supervise_resumes_elsewhere(
    entrypoints: list[Entrypoint], sales_uri: str, s3_uri: str
) -> None:
    first, second = entrypoints
    job_id, _ = _start(first, sales_uri)
    code, body = second.invoke({"action": "resume", "job_id": job_id})
    assert code == 409, body  # awaiting review is not stopped mid-step
    assert first.invoke({"action": "review", "job_id": job_id, "approve": True})[0] == 202
    wait_until(lambda: first.status(job_id)["stage"] == "supervise", JOB_TIMEOUT_S, "the supervise stage")
    first.kill()
    assert second.status(job_id)["status"] == "running"

    code, body = second.invoke({"action": "resume", "job_id": job_id})  # the dead holder's lock is taken over
    assert code == 202 and body["stage"] == "supervise", body
    wait_until(lambda: second.status(job_id)["status"] == "completed", JOB_TIMEOUT_S, "the job to complete")
    stages = _stages(s3_uri, job_id)
    assert stages.count("intake") == 1 and stages.count("supervise") == 2, stages  # resumed, not started over
    assert _s3_object(f"{s3_uri}/{job_id}/final_report.docx").startswith(b"PK")


# -- errors -----------------------------------------------------------------------------------------------------------


def test_errors_answer_with_the_error_body_and_status(entry_env: dict[str, str], tmp_path: Path) -> None:
    entry = Entrypoint(entry_env, tmp_path, "vm").start()
    try:
        cases: list[tuple[Any, int]] = [
            ({"action": "status", "job_id": "../../etc"}, 404),
            ({"action": "review", "job_id": "../../etc", "approve": True}, 404),
            ({"action": "status", "job_id": "20260101T000000Z-0123456789ab"}, 404),
            ({"action": "launch"}, 400),
            ({"request": "no action"}, 400),
            ({"action": "start", "inputs": ["s3://b/k.csv"]}, 400),
            ({"action": "start", "request": "x", "inputs": ["/etc/passwd"]}, 400),
            ({"action": "review", "approve": True}, 400),
            (["not", "an", "object"], 400),
        ]
        for payload, status in cases:
            code, body = entry.invoke(payload)
            assert (code, set(body)) == (status, ERROR_KEYS), (payload, code, body)
            assert body["detail"] and body["fix"], body
            assert "Traceback" not in body["detail"]
        code, body = entry.invoke(None, raw=b"{not json")
        assert (code, set(body)) == (400, ERROR_KEYS), body  # the SDK's own shape would be {"error", "details"}
        code, body = entry.invoke(None, raw=b'{"action": "status", "pad": "' + b"x" * (2 * 1024 * 1024) + b'"}')
        assert (code, set(body)) == (413, ERROR_KEYS), body
        assert not entry.work.exists() or not any(entry.work.iterdir())  # nothing was pulled for a bad id
        assert entry.ping() == "Healthy"
    finally:
        entry.stop()


def test_input_names_are_safe_unique_data_files() -> None:
    names = input_names(["s3://b/in/sales.csv", "s3://b/other/Sales.CSV", "s3://b/x/.hidden.xlsx", "s3://b/a$(rm).csv"])
    assert names == ["sales.csv", "Sales_2.csv", "hidden.xlsx", "a_rm.csv"]
    for bad in ("s3://b/notes.txt", "s3://b/", "s3://b", "https://b/k.csv", "/etc/passwd.csv"):
        with pytest.raises(BadInputError):
            input_names([bad])


def test_a_decision_is_explicit() -> None:
    assert parse_decision({"cancel": True, "approve": True}).action == "cancel"
    assert parse_decision({"approve": True}).action == "approve"
    assert parse_decision({"approve": False, "feedback": " more charts "}) == Decision("feedback", "more charts")
    for bad in ({}, {"approve": False}, {"approve": "yes"}, {"approve": False, "feedback": "  "}):
        with pytest.raises(BadInputError):
            parse_decision(bad)


def test_inputs_inside_the_job_store_are_refused() -> None:
    store = "s3://bucket/jobs"
    for inside in (
        "s3://bucket/jobs/20260101T000000Z-0123456789ab/data/sales.csv",
        "s3://bucket/jobs/.owners/x.csv",
        "s3://BUCKET/jobs/j/data/x.csv",
        "s3://bucket//jobs/j/x.csv",
        "s3://bucket/inputs/../jobs/j/x.csv",
        "s3://bucket/./jobs/j/x.csv",
    ):
        with pytest.raises(BadInputError) as refused:
            check_outside_store(inside, store)
        assert refused.value.fix and "outside s3://bucket/jobs/" in refused.value.fix, inside
    for outside in ("s3://bucket/inputs/sales.csv", "s3://bucket/jobs2/x.csv", "s3://other/jobs/j/x.csv"):
        check_outside_store(outside, store)
    with pytest.raises(BadInputError):
        check_outside_store("s3://bucket/inputs/sales.csv", "s3://bucket")  # a store without prefix is the bucket
    check_outside_store("s3://bucket/jobs/j/x.csv", "/srv/artifacts")  # a local store: no s3:// input is inside it


def _refusal(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    port = free_port()
    command = [sys.executable, *args, "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_refuses_to_start_without_credentials_and_provider_auto(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(home, INSIGHTLOOM_ARTIFACTS="s3://bucket/jobs", INSIGHTLOOM_WORK_DIR=str(tmp_path / "work"))
    done = _refusal(env, str(SHIM))  # the deploy/ shim, as the image runs it
    assert done.returncode == 2, done.stderr
    assert "AgentCore entrypoint" in done.stderr and "--provider offline" in done.stderr, done.stderr
    assert "Uvicorn running" not in done.stderr  # refused before binding


def test_refuses_a_local_artifacts_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(home, INSIGHTLOOM_ARTIFACTS=str(tmp_path / "artifacts"), INSIGHTLOOM_PROVIDER="offline")
    done = _refusal(env, "-m", "insightloom.service.agentcore")
    assert done.returncode == 2, done.stderr
    assert "INSIGHTLOOM_ARTIFACTS=s3://" in done.stderr, done.stderr
    assert not (tmp_path / "artifacts").exists()


def test_refuses_a_store_it_cannot_list(entry_env: dict[str, str], tmp_path: Path) -> None:
    missing = f"s3://insightloom-missing-{uuid.uuid4().hex[:12]}/jobs"
    env = {**entry_env, "INSIGHTLOOM_ARTIFACTS": missing, "INSIGHTLOOM_WORK_DIR": str(tmp_path / "work")}
    done = _refusal(env, "-m", "insightloom.service.agentcore")
    assert done.returncode == 2, done.stderr
    assert "NoSuchBucket" in done.stderr and "INSIGHTLOOM_ARTIFACTS" in done.stderr, done.stderr
    for permission in ("s3:ListBucket", "s3:GetObject", "s3:PutObject", "s3:DeleteObject"):
        assert permission in done.stderr, done.stderr
    assert "Uvicorn running" not in done.stderr  # refused before binding


def test_refuses_an_s3_endpoint_that_does_not_answer(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(
        home,
        AWS_ENDPOINT_URL_S3=f"http://127.0.0.1:{free_port()}",  # nothing listens there
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_REGION="us-east-1",
        AWS_MAX_ATTEMPTS="1",
        INSIGHTLOOM_ARTIFACTS="s3://bucket/jobs",
        INSIGHTLOOM_PROVIDER="offline",
        INSIGHTLOOM_WORK_DIR=str(tmp_path / "work"),
    )
    done = _refusal(env, "-m", "insightloom.service.agentcore")
    assert done.returncode == 2, done.stderr
    assert "EndpointConnectionError" in done.stderr and "s3:ListBucket on arn:aws:s3:::bucket" in done.stderr
    assert "Uvicorn running" not in done.stderr


# -- in process: a step held at a gate --------------------------------------------------------------------------------


@contextmanager
def _gated_app(
    s3_uri: str, work: Path, monkeypatch: pytest.MonkeyPatch, *, after: bool
) -> Iterator[tuple[Any, threading.Event, threading.Event, S3Store]]:
    """The app in this process over the test bucket; its ``start`` step waits for the gate before its work, or after
    it (``after``: the plan already awaits review, with the lock still held). Yields the client, the gate, an event
    set when a step reaches the gate, and the store."""
    from starlette.testclient import TestClient

    from insightloom.service import agentcore

    gate, reached = threading.Event(), threading.Event()
    real_start = agentcore.start

    def held_start(*args: Any, **kwargs: Any) -> Any:
        outcome = real_start(*args, **kwargs) if after else None
        reached.set()
        assert gate.wait(60), "the test never opened the gate"
        return outcome if after else real_start(*args, **kwargs)

    monkeypatch.setattr(agentcore, "start", held_start)
    store = S3Store(s3_uri, work_dir=work)
    settings = Settings(provider="offline", artifacts=store.root, artifact_store=s3_uri)
    app = agentcore.create_agentcore_app(settings, store)
    with TestClient(app) as client:
        try:
            yield client, gate, reached, store
        finally:
            gate.set()
            for thread in app.state.jobs.threads:
                thread.join(timeout=JOB_TIMEOUT_S)


@pytest.fixture
def gated(
    s3_env: dict[str, str], s3_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Any, threading.Event, S3Store]]:
    """The app in this process over the test bucket, its ``start`` step waiting for the returned event."""
    with _gated_app(s3_uri, tmp_path / "work", monkeypatch, after=False) as (client, gate, _, store):
        yield client, gate, store


@pytest.fixture
def gated_after(
    s3_env: dict[str, str], s3_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Any, threading.Event, threading.Event, S3Store]]:
    """As :func:`gated`, but the ``start`` step waits after its work: the plan awaits review, the lock is held."""
    with _gated_app(s3_uri, tmp_path / "work", monkeypatch, after=True) as gated:
        yield gated


def _invoke(client: Any, payload: dict[str, Any]) -> tuple[int, Any]:
    reply = client.post("/invocations", json=payload)
    return reply.status_code, reply.json()


def _state(client: Any, job_id: str) -> dict[str, Any]:
    code, body = _invoke(client, {"action": "status", "job_id": job_id})
    assert code == 200, body
    return dict(body)


def _wait_idle(client: Any) -> None:
    wait_until(lambda: client.get("/ping").json()["status"] == "Healthy", JOB_TIMEOUT_S, "the step to end")


def test_ping_is_busy_while_a_step_works_and_its_lock_refuses_others(
    gated: tuple[Any, threading.Event, S3Store], sales_uri: str
) -> None:
    client, gate, store = gated
    assert client.get("/ping").json()["status"] == "Healthy"
    reply = client.post("/invocations", json={"action": "start", "request": "Revenue by region", "inputs": [sales_uri]})
    assert reply.status_code == 202, reply.text
    job_id = reply.json()["job_id"]
    assert client.get("/ping").json()["status"] == "HealthyBusy"
    assert store.lock_alive(job_id)
    assert store.read_bytes(job_id, "job.json") is not None  # pushed before the answer

    review = client.post("/invocations", json={"action": "review", "job_id": job_id, "approve": True})
    assert review.status_code == 409 and set(review.json()) == ERROR_KEYS, review.text
    cancel = client.post("/invocations", json={"action": "review", "job_id": job_id, "cancel": True})
    assert cancel.status_code == 202 and cancel.json()["status"] == "cancel_requested", cancel.text
    assert store.read_bytes(job_id, "cancel.request")
    local = store.job_dir(job_id) / "cancel.request"  # the running step's LiveSync brings it to the working copy
    wait_until(local.exists, 30, "the cancel request to reach the working copy")

    gate.set()
    wait_until(lambda: client.get("/ping").json()["status"] == "Healthy", JOB_TIMEOUT_S, "the step to end")
    status = client.post("/invocations", json={"action": "status", "job_id": job_id}).json()
    assert status["status"] == "cancelled" and not status["locked"], status


def test_a_busy_runtime_answers_503_with_retry_after(
    gated: tuple[Any, threading.Event, S3Store], sales_uri: str
) -> None:
    client, gate, _ = gated
    client.app.state.jobs.max_steps = 1
    payload = {"action": "start", "request": "Revenue by region", "inputs": [sales_uri]}
    assert client.post("/invocations", json=payload).status_code == 202
    busy = client.post("/invocations", json=payload)
    assert busy.status_code == 503 and busy.headers["Retry-After"], busy.text
    assert set(busy.json()) == ERROR_KEYS
    gate.set()


def test_an_input_inside_the_job_store_is_refused_before_any_job_exists(
    gated: tuple[Any, threading.Event, S3Store], s3_uri: str, sales_uri: str, tmp_path: Path
) -> None:
    client, gate, store = gated
    gate.set()
    bucket, prefix = s3_uri.removeprefix("s3://").split("/", 1)
    planted = f"{prefix}/20260101T000000Z-0123456789ab/data/sales.csv"  # as if another job's input
    boto3.session.Session().client("s3").upload_file(str(write_small_sales_csv(tmp_path / "o.csv")), bucket, planted)
    for payload in (
        {"inputs": [f"s3://{bucket}/{planted}"]},
        {"inputs": [sales_uri, f"s3://{bucket}/inputs/../{planted}"]},
        {"inputs": [sales_uri], "columns": f"{s3_uri}/20260101T000000Z-0123456789ab/data/column_definitions.json"},
    ):
        code, body = _invoke(client, {"action": "start", "request": "Revenue by region", **payload})
        assert (code, set(body)) == (400, ERROR_KEYS), (payload, body)
        assert s3_uri in body["detail"] and "outside" in body["fix"], body
    assert store.job_ids() == []
    assert not store.root.exists() or not any(store.root.iterdir())  # nothing was created, not even locally
    assert client.get("/ping").json()["status"] == "Healthy"


def test_a_step_ignores_a_job_lock_planted_in_the_working_copy(
    gated: tuple[Any, threading.Event, S3Store], sales_uri: str
) -> None:
    client, gate, store = gated
    gate.set()
    code, body = _invoke(client, {"action": "start", "request": "Revenue by region", "inputs": [sales_uri]})
    assert code == 202, body
    job_id = body["job_id"]
    _wait_idle(client)
    assert _state(client, job_id)["status"] == "awaiting_review"
    # A script of the job writes a "live" local lock of another host; only the store's lock is the job's lock.
    poison = {"pid": 4242, "host": "elsewhere", "heartbeat": time.time(), "token": "planted"}  # fresh: "alive"
    (store.job_dir(job_id) / "job.lock").write_text(json.dumps(poison), encoding="utf-8")

    code, body = _invoke(client, {"action": "review", "job_id": job_id, "cancel": True})
    assert code == 202 and body["status"] == "running", body  # the lock was free: this process runs the cancel
    _wait_idle(client)
    assert _state(client, job_id)["status"] == "cancelled"


def test_a_cancel_requested_while_the_step_ends_in_review_is_applied(
    gated_after: tuple[Any, threading.Event, threading.Event, S3Store], sales_uri: str
) -> None:
    client, gate, reached, store = gated_after
    code, body = _invoke(client, {"action": "start", "request": "Revenue by region", "inputs": [sales_uri]})
    assert code == 202, body
    job_id = body["job_id"]
    assert reached.wait(JOB_TIMEOUT_S), "the start step never finished its work"
    assert store.lock_alive(job_id)  # the step still holds the lock: the plan awaits review

    code, body = _invoke(client, {"action": "review", "job_id": job_id, "cancel": True})
    assert code == 202 and body["status"] == "cancel_requested", body  # passed on to the lock's holder
    wait_until(lambda: _state(client, job_id)["status"] == "awaiting_review", 30, "the plan review to reach S3")
    gate.set()
    _wait_idle(client)
    state = _state(client, job_id)
    assert state["status"] == "cancelled" and not state["locked"], state  # not left awaiting a review
