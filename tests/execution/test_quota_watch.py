"""The job-folder quota count and its watcher, without a runner: links and FIFOs a script planted are never followed
or counted, the count stops at the file cap, and the watcher stops a run whose folder is over a cap."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

from insightloom.execution._server import _read_spec
from insightloom.execution.limits import Limits
from insightloom.execution.quota import QuotaWatch, job_usage, quota_problem
from insightloom.execution.runner_base import classify


def test_the_count_takes_regular_files_only_and_never_follows_a_link(tmp_path: Path) -> None:
    job, elsewhere = tmp_path / "job", tmp_path / "elsewhere"
    (job / "out" / "deep").mkdir(parents=True)
    elsewhere.mkdir()
    (job / "a.csv").write_bytes(b"x" * 10)
    (job / "out" / "deep" / "b.csv").write_bytes(b"y" * 5)
    for i in range(50):
        (elsewhere / f"{i}.bin").write_bytes(b"z" * 1000)
    os.symlink(elsewhere, job / "linked_folder")
    os.symlink(elsewhere / "0.bin", job / "linked_file.bin")
    os.mkfifo(job / "pipe")  # opening it would block the host: it is never opened
    assert job_usage(job) == (15, 2)


def test_the_count_stops_once_past_the_file_cap(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"{i}.txt").write_text("x")
    _size, files = job_usage(tmp_path, stop_after_files=10)
    assert files == 11
    assert "max_job_files" in (quota_problem(tmp_path, None, 10) or "")
    assert quota_problem(tmp_path, 1, 100) is None


def test_the_watcher_stops_a_run_whose_folder_is_over_a_cap_and_names_the_setting(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"x" * (2 * 1024 * 1024))
    stopped = threading.Event()
    with QuotaWatch(tmp_path, 1, 1000, stopped.set) as watch:
        assert stopped.wait(10), "the watcher never stopped the run"
    assert watch.problem is not None and "max_job_mb" in watch.problem and "kept" in watch.problem
    assert watch.walks == 1


def test_without_caps_the_watcher_starts_no_thread(tmp_path: Path) -> None:
    before = threading.active_count()
    with QuotaWatch(tmp_path, None, None, lambda: None) as watch:
        assert threading.active_count() == before
    assert watch.problem is None and watch.walks == 0


def test_a_cap_that_killed_children_makes_a_run_that_exited_zero_not_ok() -> None:
    empty = {"head": "", "tail": "", "cut_bytes": 0, "total_bytes": 0}
    raw = {"exit_code": 0, "cpu_s": 0.1, "stdout": empty, "stderr": empty}
    caps = {"oom_kills": 3, "forks_refused": 0, "memory_cap_mb": 1792, "max_pids": 128}
    status, reason = classify({**raw, "cap_events": caps}, Limits())
    assert status == "memory" and reason is not None
    assert "memory cap (1.8 GiB" in reason and "killed 3 process(es)" in reason and "Fix:" in reason
    assert classify({**raw, "cap_events": {**caps, "oom_kills": 0, "forks_refused": 2}}, Limits())[0] == "processes"
    assert classify({**raw, "quota": "Quota exceeded"}, Limits()) == ("quota", "Quota exceeded")
    assert classify(raw, Limits()) == ("ok", None)


def test_a_stop_sent_with_the_spec_is_not_lost_by_the_fork_server() -> None:
    """The host may ask to stop before the server has read the spec: both arrive in one read, and the stop counts."""
    host, server = socket.socketpair()
    with host, server:
        host.sendall(json.dumps({"script": "x.py"}).encode() + b"\nS")
        spec, early = _read_spec(server)
    assert spec == {"script": "x.py"} and early == b"S"
