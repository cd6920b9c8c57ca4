"""The warm server restarts when it dies and falls back to cold processes when it cannot start."""

from __future__ import annotations

import logging
import os
import selectors
import signal
import threading
from pathlib import Path

import pytest

from insightloom.execution import Limits, WarmRunner

FAST = Limits(timeout_s=30)


def test_warm_runner_restarts_after_the_server_dies(make_job, write_script) -> None:
    job = make_job()
    script = write_script(job, "hi.py", "print('hi')\n")
    runner = WarmRunner()
    try:
        assert runner.run(script, job, FAST).runner == "warm"
        first_pid = runner.server_pid
        assert first_pid is not None and runner._last is not None and runner._last.proc is not None
        os.kill(first_pid, signal.SIGKILL)
        runner._last.proc.wait(30)  # the server is dead (not merely signalled) before the next script comes
        result = runner.run(script, job, FAST)
        assert result.status == "ok" and result.runner == "warm"
        assert runner.server_pid not in (None, first_pid)
    finally:
        runner.shutdown()


def test_unstartable_server_falls_back_to_cold_and_says_so_once(make_job, caplog, write_script) -> None:
    job = make_job()
    script = write_script(job, "hi.py", "print('hi')\n")
    runner = WarmRunner(python="/nonexistent/python3")
    with caplog.at_level(logging.WARNING, logger="insightloom.execution"):
        results = [runner.run(script, job, FAST) for _ in range(2)]
    assert [(r.status, r.runner) for r in results] == [("ok", "cold"), ("ok", "cold")]
    assert "hi" in results[1].stdout
    fallbacks = [r for r in caplog.records if "cold subprocesses" in r.getMessage()]
    assert len(fallbacks) == 1


def test_shutdown_stops_the_server(make_job, write_script) -> None:
    job = make_job()
    runner = WarmRunner()
    runner.run(write_script(job, "hi.py", "print('hi')\n"), job, FAST)
    pid = runner.server_pid
    runner.shutdown()
    assert runner.server_pid is None
    assert pid is not None and not os.path.exists(f"/proc/{pid}/cmdline") or _is_zombie_or_gone(pid)


def _is_zombie_or_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _host_pids_in(folder: Path) -> list[int]:
    """Host pids whose working folder is ``folder`` (the host sees every sandbox's processes)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/cwd") == str(folder):
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_sandboxed_scripts_die_with_their_killed_sandbox(make_job, write_script) -> None:
    """The same in a job's bubblewrap sandbox, where a script's /proc shows sandbox pids, not host ones."""
    from insightloom.execution.bwrap import bwrap_works

    if not bwrap_works()[0]:
        pytest.skip(f"bubblewrap is not usable here: {bwrap_works()[1]}")
    job = make_job().resolve()
    fifo = job / "started.fifo"
    os.mkfifo(fifo)
    body = f"import time\nwith open({str(fifo)!r}, 'w') as fh:\n    fh.write('up')\ntime.sleep(1000)\n"
    script = write_script(job, "long.py", body)
    runner = WarmRunner()
    results: list = []
    thread = threading.Thread(target=lambda: results.append(runner.run(script, job, Limits(timeout_s=60))))
    try:
        runner.start(job)
        server = runner.server_pid
        assert server is not None and runner.sandboxed
        thread.start()
        with open(fifo) as fh:  # the script is running (in the job folder) once it wrote this
            assert fh.read() == "up"
        assert _host_pids_in(job)
        os.kill(server, signal.SIGKILL)
        thread.join(60)
        assert results and results[0].status != "ok"
        assert not _host_pids_in(job), "a script survived its sandbox"
    finally:
        runner.shutdown()


def test_scripts_die_with_a_killed_server(make_job, write_script) -> None:
    """No script may outlive its supervisor: nobody would enforce its clock any more."""
    job = make_job()
    fifo = job / "started.fifo"
    os.mkfifo(fifo)
    # /proc/self names the host pid even inside a pid namespace; exec keeps that pid.
    script = write_script(
        job,
        "long.py",
        (
            "import os\n"
            f"with open({str(fifo)!r}, 'w') as fh:\n"
            "    fh.write(os.readlink('/proc/self'))\n"
            "os.execvp('sleep', ['sleep', '1000'])\n"
        ),
    )
    runner = WarmRunner(sandbox=False)  # the shared server: its scripts' /proc/self names host pids
    results: list = []
    thread = threading.Thread(target=lambda: results.append(runner.run(script, job, Limits(timeout_s=60))))
    try:
        runner.start()
        server = runner.server_pid
        assert server is not None
        thread.start()
        with open(fifo) as fh:  # blocks until the script has started
            script_pid = int(fh.read())
        pidfd = os.pidfd_open(script_pid)
        os.kill(server, signal.SIGKILL)
        thread.join(60)
        assert results and results[0].status != "ok"
        with selectors.DefaultSelector() as sel:
            sel.register(pidfd, selectors.EVENT_READ)
            assert sel.select(10), "the script survived its server"
        os.close(pidfd)
    finally:
        runner.shutdown()


def test_a_server_started_from_a_short_lived_thread_outlives_it(make_job, write_script) -> None:
    """Tool calls run in worker threads that end; a sandbox tied to its starting thread would die with it."""
    job = make_job()
    script = write_script(job, "hi.py", "print('hi')\n")
    runner = WarmRunner()
    try:
        starter = threading.Thread(target=runner.start, args=(job,))
        starter.start()
        starter.join(60)
        first = runner.server_pid
        assert first is not None and not starter.is_alive()
        for _ in range(3):
            result = runner.run(script, job, FAST)
            assert (result.status, result.runner) == ("ok", "warm")
        assert runner.server_pid == first  # the same server: it was never killed and restarted
    finally:
        runner.shutdown()
