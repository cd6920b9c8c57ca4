import json
import os
import socket
import time
from pathlib import Path

import pytest

from insightloom.joblock import LOCK_FILE, JobLock, JobLocked, lock_alive, process_start


def write_lock(folder: Path, **data) -> None:
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
