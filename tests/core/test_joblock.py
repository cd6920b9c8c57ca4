import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from insightloom.joblock import LOCK_FILE, JobLock, JobLocked, holder_alive, lock_alive, process_start


def write_lock(folder: Path, **data: object) -> None:
    (folder / LOCK_FILE).write_text(json.dumps(data), encoding="utf-8")


def test_a_held_lock_refuses_a_second_holder_and_is_released(tmp_path: Path) -> None:
    with JobLock(tmp_path):
        assert lock_alive(tmp_path)
        with pytest.raises(JobLocked) as info, JobLock(tmp_path):
            pass
        assert info.value.exit_code == 2 and "running elsewhere" in str(info.value)
    assert not (tmp_path / LOCK_FILE).exists() and not lock_alive(tmp_path)


def test_dead_owner_or_reused_pid_is_stale(tmp_path: Path) -> None:
    host = socket.gethostname()
    write_lock(tmp_path, pid=2**22 + 17, host=host, heartbeat=time.time())
    assert not lock_alive(tmp_path)
    # A restarted container: same host, same pid as us, but another process start.
    write_lock(tmp_path, pid=os.getpid(), host=host, started="other-boot:1", heartbeat=time.time())
    assert not lock_alive(tmp_path)
    write_lock(tmp_path, pid=os.getpid(), host=host, started=process_start(os.getpid()), heartbeat=time.time())
    assert lock_alive(tmp_path)
    with pytest.raises(JobLocked), JobLock(tmp_path):
        pass


def test_other_host_lock_lives_while_its_heartbeat_is_fresh(tmp_path: Path) -> None:
    now = time.time()
    write_lock(tmp_path, pid=1, host="elsewhere", heartbeat=now - 30)
    assert lock_alive(tmp_path, now=now)
    write_lock(tmp_path, pid=1, host="elsewhere", heartbeat=now - 61)
    assert not lock_alive(tmp_path, now=now)
    with JobLock(tmp_path):  # a stale lock is taken over
        assert json.loads((tmp_path / LOCK_FILE).read_text())["pid"] == os.getpid()


@pytest.mark.parametrize("junk", ["[]", "", '{"pid": "x"}', "null", '{"heartbeat": [1]}'])
def test_a_scribbled_lock_is_stale_not_a_crash(tmp_path: Path, junk: str) -> None:
    (tmp_path / LOCK_FILE).write_text(junk, encoding="utf-8")
    assert not lock_alive(tmp_path)
    with JobLock(tmp_path):
        assert lock_alive(tmp_path)


def test_release_leaves_a_lock_that_is_not_ours(tmp_path: Path) -> None:
    holder = JobLock(tmp_path)
    with holder:
        write_lock(tmp_path, pid=1, host="elsewhere", heartbeat=time.time(), token="theirs")
    assert json.loads((tmp_path / LOCK_FILE).read_text())["token"] == "theirs"


def _returns_within(call: Callable[[], object], seconds: float = 10.0) -> object:
    """Run ``call`` in a daemon thread; fail (instead of hanging the suite) when it blocks."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{call} blocked for {seconds:g} s"
    return result[0]


def test_a_planted_fifo_is_no_lock_and_never_blocks(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / LOCK_FILE)
    assert _returns_within(lambda: lock_alive(tmp_path)) is False

    def take() -> bool:
        with JobLock(tmp_path):
            return lock_alive(tmp_path)

    assert _returns_within(take) is True  # the FIFO is replaced by a real lock
    assert not (tmp_path / LOCK_FILE).exists()


def test_a_planted_link_is_never_followed(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    outside = tmp_path / "outside.json"  # a live lock of this very process, but outside the job folder
    write_lock(tmp_path, pid=os.getpid(), host=socket.gethostname(), started=process_start(os.getpid()))
    (tmp_path / LOCK_FILE).rename(outside)
    (job / LOCK_FILE).symlink_to(outside)
    assert not lock_alive(job)
    with JobLock(job):
        assert not (job / LOCK_FILE).is_symlink()
    assert json.loads(outside.read_text())["pid"] == os.getpid()  # the link's target was left alone


def test_a_heartbeat_far_in_the_future_is_stale(tmp_path: Path) -> None:
    now = time.time()
    write_lock(tmp_path, pid=4242, host="elsewhere", heartbeat=now + 30)  # a clock a little ahead: believed
    assert lock_alive(tmp_path, now=now)
    write_lock(tmp_path, pid=4242, host="elsewhere", heartbeat=now + 61)
    assert not lock_alive(tmp_path, now=now)
    write_lock(tmp_path, pid=4242, host="elsewhere", heartbeat=1e300)
    assert not lock_alive(tmp_path, now=now)


@pytest.mark.parametrize("pid", [1, 0, -1])
def test_a_scribbled_low_pid_on_this_host_is_stale(tmp_path: Path, pid: int) -> None:
    write_lock(tmp_path, pid=pid, host=socket.gethostname(), heartbeat=time.time())
    assert not lock_alive(tmp_path)
    with JobLock(tmp_path):
        assert lock_alive(tmp_path)


def test_pid_1_with_its_own_start_identity_is_a_live_holder() -> None:
    # A container's main process runs as pid 1 and writes its start identity: that lock is genuine.
    started = process_start(1)
    if started is None:
        pytest.skip("no /proc/1/stat here")
    assert holder_alive({"pid": 1, "host": "here", "started": started}, host="here")
    assert not holder_alive({"pid": 1, "host": "here", "started": "other-boot:1"}, host="here")
