"""The cross-machine job lock: conditional writes on a real S3-protocol server, a fencing token, takeover."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from celery_lane import wait_until

from insightloom.errors import BadInputError
from insightloom.joblock import JobLocked
from insightloom.storage.s3 import S3Store, parse_s3_uri
from insightloom.storage.s3lock import S3JobLock, read_lock

JOB = "20260101T120000Z-0123456789ab"


@pytest.fixture
def target(s3_uri: str) -> tuple[Any, str, str]:
    """``(client, bucket, lock key)`` for one job."""
    import boto3

    bucket, prefix = parse_s3_uri(s3_uri)
    return boto3.session.Session().client("s3"), bucket, f"{prefix}/{JOB}/.lock"


def _record(target: tuple[Any, str, str]) -> dict[str, Any]:
    found = read_lock(*target)
    assert found is not None
    return found[0]


def _plant(target: tuple[Any, str, str], **record: Any) -> None:
    client, bucket, key = target
    client.put_object(Bucket=bucket, Key=key, Body=json.dumps(record).encode())


def test_a_second_machine_is_refused_while_the_first_beats(target: tuple[Any, str, str]) -> None:
    first = S3JobLock(*target, host="machine-a", heartbeat_s=0.05)
    with first:
        beat = _record(target)["heartbeat"]
        wait_until(lambda: _record(target)["heartbeat"] > beat, 10, "a heartbeat")
        with pytest.raises(JobLocked, match="on machine-a") as refused:
            S3JobLock(*target, host="machine-b").__enter__()
        assert "taken over" in refused.value.fix
        assert first.fence == 1 and not first.lost.is_set()
        assert _record(target)["token"] == first.token
    assert _record(target) == {"fence": 1, "released": pytest.approx(time.time(), abs=60)}

    with S3JobLock(*target, host="machine-b") as second:
        assert second.fence == 2  # the fence survives a release: it only ever grows


def test_a_stale_lock_from_another_host_is_taken_over_with_the_next_fence(target: tuple[Any, str, str]) -> None:
    _plant(target, token="old", fence=7, host="gone-machine", pid=4242, started=None, heartbeat=time.time() - 120)
    with S3JobLock(*target, host="machine-b") as lock:
        assert lock.fence == 8
        assert _record(target)["token"] == lock.token


def test_a_lock_of_a_dead_process_on_this_host_is_taken_over(target: tuple[Any, str, str]) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid names no process now (and "started" would not match a reuse of it)
    _plant(target, token="old", fence=3, host="this-host", pid=gone.pid, started="x", heartbeat=time.time())
    with S3JobLock(*target, host="this-host") as lock:
        assert lock.fence == 4


def test_the_taken_over_holder_learns_it_lost_and_never_releases_the_new_lock(target: tuple[Any, str, str]) -> None:
    old = S3JobLock(*target, host="machine-a", heartbeat_s=0.05)
    old.__enter__()
    try:
        # machine-b sees machine-a's heartbeat as stale at once (as if machine-a had stalled for a minute)
        with S3JobLock(*target, host="machine-b", stale_after_s=0.0) as new:
            assert new.fence == old.fence + 1
            wait_until(old.lost.is_set, 10, "the old holder to notice the takeover")
            old.__exit__(None, None, None)
            assert _record(target)["token"] == new.token  # the old holder's release left it alone
            assert not new.lost.is_set()
    finally:
        old.__exit__(None, None, None)
    assert _record(target)["released"]


def test_release_leaves_a_lock_someone_else_wrote(target: tuple[Any, str, str]) -> None:
    lock = S3JobLock(*target, host="machine-a", heartbeat_s=60)
    with lock:
        _plant(target, token="other", fence=9, host="machine-c", pid=1, heartbeat=time.time())
    assert _record(target)["token"] == "other"


def test_concurrent_acquires_have_exactly_one_winner(target: tuple[Any, str, str]) -> None:
    start = threading.Barrier(8)
    done = threading.Event()
    winners: list[int] = []
    refused: list[str] = []

    def contend(index: int) -> None:
        lock = S3JobLock(*target, host=f"machine-{index}")
        start.wait()
        try:
            with lock:
                winners.append(lock.fence)
                done.wait(30)
        except JobLocked as exc:
            refused.append(exc.message)

    threads = [threading.Thread(target=contend, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    wait_until(lambda: len(winners) + len(refused) == 8, 30, "every contender to finish trying")
    done.set()
    for thread in threads:
        thread.join(30)
    assert winners == [1]
    assert len(refused) == 7


def test_the_store_lock_is_seen_alive_by_another_machine(s3_uri: str, tmp_path: Path) -> None:
    here = S3Store(s3_uri, work_dir=tmp_path / "a", lock_host="machine-a")
    there = S3Store(s3_uri, work_dir=tmp_path / "b", lock_host="machine-b")
    assert not there.lock_alive(JOB)
    with here.lock(JOB) as held:
        assert held.fence == 1
        assert there.lock_alive(JOB) and here.lock_alive(JOB)
        with pytest.raises(JobLocked):
            there.lock(JOB).__enter__()
        for name in (".lock", "job.lock"):  # no caller can overwrite a lock through the store
            with pytest.raises(BadInputError):
                there.write_bytes(JOB, name, b"{}")
        assert here.lock_alive(JOB)
    assert not there.lock_alive(JOB)
