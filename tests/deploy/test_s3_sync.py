"""Live sync of a running job's working copy with S3 (moto's server on loopback)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError
from celery_lane import wait_until

from insightloom.events import EventLog
from insightloom.jobs import CANCEL_FILE
from insightloom.storage.s3 import S3Store
from insightloom.storage.sync import FINAL_PUSH_ATTEMPTS, LiveSync

JOB = "20260101T120000Z-0123456789ab"


class _Held:
    """A lock held elsewhere in the test (only what :class:`LiveSync` looks at)."""

    def __init__(self, lost: bool = False) -> None:
        self.fence = 1
        self.lost = threading.Event()
        if lost:
            self.lost.set()


def _event_ids(store: S3Store) -> list[int]:
    data = store.read_bytes(JOB, "events.jsonl") or b""
    return [json.loads(line)["id"] for line in data.decode().splitlines()]


def _job(store: S3Store) -> tuple[Path, EventLog]:
    job_dir = store.job_dir(JOB)
    job_dir.mkdir(parents=True)
    (job_dir / "job.json").write_text("{}")
    return job_dir, EventLog(job_dir / "events.jsonl", JOB)


def test_events_stage_outputs_and_cancel_cross_between_worker_and_s3(s3_uri: str, tmp_path: Path) -> None:
    worker = S3Store(s3_uri, work_dir=tmp_path / "worker")
    api = S3Store(s3_uri, work_dir=tmp_path / "api")  # another machine: it reads S3 and never pulls the job
    job_dir, events = _job(worker)
    with worker.lock(JOB) as held, LiveSync(worker, JOB, events, held, every_s=0.05, cancel_poll_s=0.05):
        events.emit("agent_start", agent="intake")
        wait_until(lambda: _event_ids(api) == [1], 10, "the first event in S3")
        assert api.list_files(JOB) == ["events.jsonl"]  # an event alone sends only events.jsonl

        (job_dir / "plan.md").write_text("# Plan\n")
        events.emit("stage", stage="plan")
        wait_until(lambda: "plan.md" in api.list_files(JOB), 10, "the stage's outputs in S3")
        assert api.read_bytes(JOB, "plan.md") == b"# Plan\n"

        api.write_bytes(JOB, CANCEL_FILE, b"2026-01-01T00:00:00Z\n")
        wait_until((job_dir / CANCEL_FILE).is_file, 10, "the cancel request in the working copy")
        (job_dir / "late.md").write_text("written after the last event\n")
    assert not api.job_dir(JOB).exists()
    assert api.read_bytes(JOB, "late.md") == b"written after the last event\n"  # the final push on exit
    assert _event_ids(api) == [1, 2]


def test_an_event_line_still_being_written_is_not_sent_half(s3_uri: str, tmp_path: Path) -> None:
    store = S3Store(s3_uri, work_dir=tmp_path / "work")
    job_dir, _ = _job(store)
    (job_dir / "events.jsonl").write_bytes(b'{"id": 1}\n{"id": 2, "ki')
    assert store.push_file(JOB, "events.jsonl", whole_lines=True)
    assert store.read_bytes(JOB, "events.jsonl") == b'{"id": 1}\n'
    assert store.push(JOB) == 2  # job.json, and the whole events file differs from what was sent


def test_nothing_is_written_once_the_lock_is_lost(s3_uri: str, tmp_path: Path) -> None:
    store = S3Store(s3_uri, work_dir=tmp_path / "work")
    job_dir, events = _job(store)
    with LiveSync(store, JOB, events, _Held(lost=True), every_s=0.0, cancel_poll_s=0.0):
        events.emit("stage", stage="intake")
        events.emit("completed")
    assert store.list_files(JOB) == []


def test_a_local_store_makes_live_sync_a_no_op(tmp_path: Path) -> None:
    class LocalOnly:
        remote = False

        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"LiveSync used {name} of a local store")

    job_dir = tmp_path / JOB
    job_dir.mkdir()
    events = EventLog(job_dir / "events.jsonl", JOB)
    with LiveSync(LocalOnly(), JOB, events, _Held()):
        events.emit("stage", stage="intake")
    assert (job_dir / "events.jsonl").is_file()


class _Flaky:
    """An S3 client whose PUTs of keys ending in ``suffix`` fail the first ``failures`` times (S3 briefly away)."""

    def __init__(self, client: Any, suffix: str, failures: int) -> None:
        self._client = client
        self.suffix = suffix
        self.failures = failures
        self.puts: list[str] = []

    def put_object(self, **kwargs: Any) -> Any:
        self.puts.append(kwargs["Key"])
        if kwargs["Key"].endswith(self.suffix) and self.failures > 0:
            self.failures -= 1
            raise EndpointConnectionError(endpoint_url="http://127.0.0.1:1")
        return self._client.put_object(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _flaky_store(s3_uri: str, work_dir: Path, suffix: str, failures: int) -> tuple[S3Store, _Flaky]:
    plain = S3Store(s3_uri, work_dir=work_dir)
    flaky = _Flaky(plain.client, suffix, failures)
    return S3Store(s3_uri, work_dir=work_dir, client=flaky), flaky


def test_a_failed_stage_push_is_retried_while_the_job_runs(s3_uri: str, tmp_path: Path) -> None:
    worker, flaky = _flaky_store(s3_uri, tmp_path / "worker", "/plan.md", failures=1)
    api = S3Store(s3_uri, work_dir=tmp_path / "api")
    job_dir, events = _job(worker)
    with LiveSync(worker, JOB, events, _Held(), every_s=0.05, cancel_poll_s=60, retry_s=0.05):
        (job_dir / "plan.md").write_text("# Plan\n")
        events.emit("stage", stage="plan")  # its full push fails at plan.md: the next one must send it
        wait_until(lambda: "plan.md" in api.list_files(JOB), 10, "the stage's outputs in S3 after a failed push")
    assert flaky.failures == 0


def test_the_final_push_is_tried_again_before_it_fails_the_run(s3_uri: str, tmp_path: Path) -> None:
    worker, flaky = _flaky_store(s3_uri, tmp_path / "worker", "/late.md", failures=FINAL_PUSH_ATTEMPTS - 1)
    job_dir, events = _job(worker)
    with LiveSync(worker, JOB, events, _Held(), every_s=0.05, cancel_poll_s=60, retry_s=0.01):
        (job_dir / "late.md").write_text("written after the last event\n")
    assert worker.read_bytes(JOB, "late.md") == b"written after the last event\n"
    assert flaky.puts.count(f"jobs/{JOB}/late.md") == FINAL_PUSH_ATTEMPTS


def test_a_final_push_that_keeps_failing_fails_the_run(s3_uri: str, tmp_path: Path) -> None:
    worker, flaky = _flaky_store(s3_uri, tmp_path / "worker", "/late.md", failures=FINAL_PUSH_ATTEMPTS)
    job_dir, events = _job(worker)
    with (
        pytest.raises(EndpointConnectionError),
        LiveSync(worker, JOB, events, _Held(), every_s=0.05, cancel_poll_s=60, retry_s=0.01),
    ):
        (job_dir / "late.md").write_text("never sent\n")
    assert flaky.puts.count(f"jobs/{JOB}/late.md") == FINAL_PUSH_ATTEMPTS


def test_a_push_under_way_stops_as_soon_as_the_lock_is_lost(s3_uri: str, tmp_path: Path) -> None:
    held = _Held()
    plain = S3Store(s3_uri, work_dir=tmp_path / "worker")

    class LosesTheLock(_Flaky):
        def put_object(self, **kwargs: Any) -> Any:
            reply = super().put_object(**kwargs)
            held.lost.set()  # the lock's watch gave up while this PUT was on its way
            return reply

    client = LosesTheLock(plain.client, "", failures=0)
    worker = S3Store(s3_uri, work_dir=tmp_path / "worker", client=client)
    job_dir, events = _job(worker)
    for name in ("a.md", "b.md", "c.md"):
        (job_dir / name).write_text(name)
    with LiveSync(worker, JOB, events, held, every_s=0.05, cancel_poll_s=60):
        events.emit("stage", stage="plan")
        wait_until(lambda: client.puts, 10, "the stage push to start")
    assert len(client.puts) == 1  # nothing after the PUT that was under way, and no final push
    assert len(worker.list_files(JOB)) == 1
    assert worker.push(JOB, stop=held.lost) == 0
