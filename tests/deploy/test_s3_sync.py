"""Live sync of a running job's working copy with S3 (moto's server on loopback)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from celery_lane import wait_until

from insightloom.events import EventLog
from insightloom.jobs import CANCEL_FILE
from insightloom.storage.s3 import S3Store
from insightloom.storage.sync import LiveSync

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
