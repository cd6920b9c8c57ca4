"""The cross-machine job lock: conditional writes on a real S3-protocol server, a fencing token, takeover."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError
from celery_lane import wait_until

from insightloom.errors import BadInputError, ConfigError
from insightloom.joblock import JobLocked
from insightloom.storage.s3 import S3Store, parse_s3_uri
from insightloom.storage.s3lock import S3JobLock, read_lock, record_alive

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
    client, bucket, key = target
    old = S3JobLock(*target, host="machine-a", heartbeat_s=0.05)
    old.__enter__()
    try:
        # machine-b takes the lock over as a takeover does (If-Match the record it read, the next fence), as if it
        # had seen machine-a's heartbeat as stale (a clock far ahead, say) while machine-a still beats
        record, etag = read_lock(*target) or ({}, "")
        new = {"token": "new", "fence": record["fence"] + 1, "host": "machine-b", "pid": 4242, "heartbeat": time.time()}
        client.put_object(Bucket=bucket, Key=key, Body=json.dumps(new).encode(), IfMatch=etag)
        wait_until(old.lost.is_set, 10, "the old holder to notice the takeover")
        old.__exit__(None, None, None)
        assert _record(target) == new  # neither a heartbeat nor the release of the old holder touched it
    finally:
        old.__exit__(None, None, None)


def test_release_leaves_a_lock_someone_else_wrote(target: tuple[Any, str, str]) -> None:
    lock = S3JobLock(*target, host="machine-a", heartbeat_s=20)  # no heartbeat during the test
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


class _Hanging:
    """An S3 client whose PUTs hang once :attr:`hang` is set (a dead network path), until :attr:`release`."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.hang = threading.Event()
        self.release = threading.Event()

    def put_object(self, **kwargs: Any) -> Any:
        if self.hang.is_set():
            self.release.wait(60)
            raise EndpointConnectionError(endpoint_url="http://127.0.0.1:1")
        return self._client.put_object(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_a_holder_whose_heartbeats_hang_gives_up_before_another_machine_may_take_over(
    target: tuple[Any, str, str],
) -> None:
    client, bucket, key = target
    hanging = _Hanging(client)
    lock = S3JobLock(hanging, bucket, key, host="machine-a", heartbeat_s=0.5, stale_after_s=4.0)
    lock.__enter__()
    try:
        hanging.hang.set()  # the next heartbeat never returns
        assert lock.lost.wait(10), "the holder never gave up while its heartbeat hung"
        # it gave up while its last heartbeat is still fresh: nobody may have taken the job over yet
        assert time.time() - _record(target)["heartbeat"] < 4.0
        with pytest.raises(JobLocked):
            S3JobLock(*target, host="machine-b", heartbeat_s=0.5, stale_after_s=4.0).__enter__()
        assert lock.lost_after_s == 4.0 - 2 * 0.5
    finally:
        hanging.release.set()
        lock.__exit__(None, None, None)
    assert _record(target)["token"] == lock.token  # a lost holder does not release (it goes stale instead)


def test_the_store_locks_through_a_client_that_fails_fast(s3_uri: str, tmp_path: Path) -> None:
    store = S3Store(s3_uri, work_dir=tmp_path)
    config = store.lock(JOB).client.meta.config
    assert (config.connect_timeout, config.read_timeout, config.retries["total_max_attempts"]) == (5, 10, 2)
    assert store.client.meta.config.read_timeout == 60  # artifact transfers keep boto3's defaults


def test_a_lock_that_vanishes_while_being_taken_says_to_retry(target: tuple[Any, str, str]) -> None:
    client, bucket, key = target

    class Vanishing:
        """Deletes the lock just before the takeover write lands (another holder released and cleaned it)."""

        def put_object(self, **kwargs: Any) -> Any:
            client.delete_object(Bucket=bucket, Key=key)
            return client.put_object(**kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(client, name)

    _plant(target, token="old", fence=2, host="gone-machine", pid=4242, heartbeat=time.time() - 120)
    with pytest.raises(JobLocked, match="changed while this process was taking it") as refused:
        S3JobLock(Vanishing(), bucket, key, host="machine-b").__enter__()
    assert "try again" in refused.value.fix
    assert "None" not in refused.value.message


def test_scribbled_lock_records_are_not_alive(target: tuple[Any, str, str]) -> None:
    now = time.time()
    assert record_alive({"pid": 4242, "host": "elsewhere", "heartbeat": now}, host="here", now=now)
    assert not record_alive({"pid": 4242, "host": "elsewhere", "heartbeat": now + 3600}, host="here", now=now)
    assert not record_alive({"pid": 1, "host": "here", "heartbeat": now}, host="here", now=now)
    _plant(target, token="x", fence=5, host=socket.gethostname(), pid=1, heartbeat=now)
    with S3JobLock(*target) as lock:  # this host, pid 1, no start identity: a scribble, taken over
        assert lock.fence == 6


def test_a_lock_that_could_not_stop_before_a_takeover_is_a_config_error(target: tuple[Any, str, str]) -> None:
    with pytest.raises(ConfigError, match="cannot beat"):
        S3JobLock(*target, heartbeat_s=10.0, stale_after_s=20.0)
    assert read_lock(*target) is None
