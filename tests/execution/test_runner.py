"""Behaviour of the warm and cold runners: fresh processes, limits, cleanup, confinement."""

from __future__ import annotations

import os
import random
import signal
import socket
import threading
from pathlib import Path

import pytest

from insightloom.errors import BadInputError
from insightloom.execution import Limits, get_runner, isolation_report

FAST = Limits(timeout_s=30, cpu_s=60)


def _active(feature_prefix: str) -> bool:
    return any(name.startswith(feature_prefix) and active for name, active, _ in _REPORT)


_REPORT = isolation_report()


def test_script_runs_as_main_in_job_folder_with_code_on_path(runner, make_job, write_script) -> None:
    job = make_job()
    write_script(job, "helper.py", "VALUE = 7\n")
    script = write_script(
        job,
        "main.py",
        (
            "import os, sys, helper\n"
            "print(__name__, helper.VALUE, os.getcwd() == os.environ['INSIGHTLOOM_JOB_DIR'])\n"
            "print('job', os.environ['INSIGHTLOOM_JOB_DIR'])\n"
            "print('backend', os.environ['MPLBACKEND'])\n"
            "print('argv0', sys.argv[0])\n"
        ),
    )
    result = runner.run(script, job, FAST)
    assert result.status == "ok", result.stderr
    assert "__main__ 7 True" in result.stdout
    assert f"job {job.resolve()}" in result.stdout
    assert "backend Agg" in result.stdout
    assert f"argv0 {script.resolve()}" in result.stdout


def test_no_variable_survives_between_scripts(runner, make_job, write_script) -> None:
    job = make_job()
    first = write_script(
        job, "a.py", ("import builtins, json\nLEAK = 42\njson.leaked = True\nbuiltins.LEAKED = 1\nprint('set')\n")
    )
    second = write_script(
        job,
        "b.py",
        (
            "import builtins, json\n"
            "print('leak', globals().get('LEAK'), hasattr(json, 'leaked'), hasattr(builtins, 'LEAKED'))\n"
        ),
    )
    assert runner.run(first, job, FAST).status == "ok"
    result = runner.run(second, job, FAST)
    assert "leak None False False" in result.stdout


def test_infinite_loop_is_killed_at_the_timeout(runner, make_job, write_script) -> None:
    job = make_job()
    script = write_script(job, "spin.py", "print('working')\nwhile True:\n    pass\n")
    result = runner.run(script, job, Limits(timeout_s=2, cpu_s=120))
    assert result.status == "timeout"
    assert "working" in result.stdout  # output printed before the kill is kept
    assert result.killed_reason == "killed after 2 s timeout"
    assert "killed after 2 s timeout" in result.summary(lines_written=2)


def _token() -> str:
    return f"0.{random.randrange(10**8, 10**9)}"


def _alive_with(token: str) -> list[int]:
    """Host pids whose command line carries the token (zombies have an empty cmdline and do not count)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if token.encode() in fh.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


SPAWNER = """\
import os, subprocess, time
TOKEN = {token!r}
subprocess.Popen(["sleep", "1000", TOKEN])
subprocess.Popen(["setsid", "sleep", "1000", TOKEN])
if os.fork() == 0:  # classic daemon: fork, setsid, fork again
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "1000", TOKEN])
    os._exit(0)

def running():
    count = 0
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{{entry}}/cmdline", "rb") as fh:
                count += TOKEN.encode() in fh.read()
        except OSError:
            pass
    return count

end = time.monotonic() + 10
while running() < 3 and time.monotonic() < end:
    time.sleep(0.02)
print("spawned", running(), flush=True)
{tail}
"""


@pytest.mark.parametrize("ending", ["exit", "timeout"])
def test_spawned_and_daemonized_children_leave_nothing_behind(runner, make_job, ending: str, write_script) -> None:
    job = make_job()
    token = _token()
    tail = "time.sleep(1000)" if ending == "timeout" else ""
    script = write_script(job, "spawn.py", SPAWNER.format(token=token, tail=tail))
    limits = Limits(timeout_s=4 if ending == "timeout" else 30, cpu_s=60)
    try:
        result = runner.run(script, job, limits)
        assert "spawned 3" in result.stdout, result.stderr
        assert result.status == ("timeout" if ending == "timeout" else "ok")
        assert _alive_with(token) == []
    finally:
        for pid in _alive_with(token):  # never leave a stray sleep on the machine, even when failing
            os.kill(pid, signal.SIGKILL)


def test_allocating_10_gib_fails_cleanly_under_the_memory_cap(runner, make_job, write_script) -> None:
    job = make_job()
    script = write_script(job, "hog.py", "block = bytearray(10 * 1024 ** 3)\nprint('allocated')\n")
    result = runner.run(script, job, Limits(timeout_s=30, memory_mb=2048))
    assert result.status == "memory"
    assert "allocated" not in result.stdout
    assert "exceeded 2 GiB memory" in result.summary(lines_written=2)


def test_cpu_time_cap(runner, make_job, write_script) -> None:
    job = make_job()
    script = write_script(job, "burn.py", "while True:\n    pass\n")
    result = runner.run(script, job, Limits(timeout_s=30, cpu_s=1))
    assert result.status == "cpu"
    assert "CPU-time limit" in (result.killed_reason or "")


def test_file_size_cap(runner, make_job, write_script) -> None:
    job = make_job()
    script = write_script(job, "big.py", "open('big.bin', 'wb').write(b'0' * (3 * 1024 * 1024))\n")
    result = runner.run(script, job, Limits(timeout_s=30, file_size_mb=1))
    assert result.status == "file_size"
    assert "1 MiB file-size limit" in (result.killed_reason or "")


def test_ten_megabytes_of_output_are_cut_to_head_and_tail(runner, make_job, write_script) -> None:
    job = make_job()
    script = write_script(
        job, "loud.py", ("import sys\nsys.stdout.write('HEAD-MARK\\n' + 'x' * 10_000_000 + '\\nTAIL-MARK\\n')\n")
    )
    result = runner.run(script, job, Limits(timeout_s=30, max_output_bytes=200_000))
    assert result.status == "output_cut"
    assert result.stdout.startswith("HEAD-MARK") and result.stdout.rstrip().endswith("TAIL-MARK")
    assert len(result.stdout) < 210_000
    assert result.cut_chars > 9_700_000
    text = result.summary(lines_written=2)
    assert "HEAD-MARK" in text and "TAIL-MARK" in text
    assert len(text) < 2_500


def test_new_files_are_listed_relative_to_the_job(runner, make_job, write_script) -> None:
    job = make_job()
    script = write_script(
        job,
        "files.py",
        (
            "import os\nos.makedirs('charts', exist_ok=True)\n"
            "open('charts/c.png', 'wb').write(b'png')\nopen('result.csv', 'w').write('a\\n1\\n')\n"
        ),
    )
    result = runner.run(script, job, FAST)
    assert result.new_files == ["charts/c.png", "result.csv"]


def test_script_outside_code_is_refused_by_the_runner(runner, make_job, tmp_path: Path) -> None:
    job = make_job()
    outside = tmp_path / "x.py"
    outside.write_text("print('should not run')\n")
    with pytest.raises(BadInputError):
        runner.run(outside, job, FAST)


@pytest.mark.skipif(not _active("Landlock: writes"), reason="Landlock is not available here")
def test_writes_outside_the_job_folder_are_denied(runner, make_job, tmp_path: Path, write_script) -> None:
    job = make_job()
    target = tmp_path / "escape.txt"
    script = write_script(
        job,
        "escape.py",
        (
            f"try:\n    open({str(target)!r}, 'w').write('x')\n    print('WROTE')\n"
            "except OSError as exc:\n    print('denied', exc.errno)\n"
        ),
    )
    result = runner.run(script, job, FAST)
    assert "denied" in result.stdout
    assert not target.exists()


@pytest.mark.skipif(not (_active("network namespace") or _active("Landlock: TCP")), reason="no network isolation")
def test_no_network_even_to_a_local_listener(runner, make_job, write_script) -> None:
    job = make_job()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        script = write_script(
            job,
            "net.py",
            (
                "import socket\ntry:\n"
                f"    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n    print('CONNECTED')\n"
                "except OSError as exc:\n    print('blocked', exc.errno)\n"
            ),
        )
        result = runner.run(script, job, FAST)
    finally:
        listener.close()
    assert "blocked" in result.stdout


def test_two_jobs_at_once_never_see_each_others_files_or_cwd(runner, make_job, write_script) -> None:
    jobs = {name: make_job(name) for name in ("alpha", "beta")}
    probe = (
        "import os, time\n"
        "me = os.environ['INSIGHTLOOM_JOB_DIR']\n"
        "open('mine_{name}.txt', 'w').write('x')\n"
        "bad = []\n"
        "for _ in range(25):\n"
        "    if os.getcwd() != me or me != {job!r}:\n"
        "        bad.append(os.getcwd())\n"
        "    bad += [f for f in os.listdir('.') if f.startswith('mine_') and f != 'mine_{name}.txt']\n"
        "    time.sleep(0.01)\n"
        "try:\n"
        "    open({other!r} + '/intrusion.txt', 'w').write('x')\n"
        "    print('INTRUDED')\n"
        "except OSError:\n"
        "    print('kept out')\n"
        "print('BAD', bad)\n"
    )
    scripts, results = {}, {}
    for name, other in (("alpha", "beta"), ("beta", "alpha")):
        text = probe.format(name=name, job=str(jobs[name].resolve()), other=str(jobs[other].resolve()))
        scripts[name] = write_script(jobs[name], "probe.py", text)

    def go(name: str) -> None:
        results[name] = runner.run(scripts[name], jobs[name], FAST)

    threads = [threading.Thread(target=go, args=(n,)) for n in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, result in results.items():
        assert "BAD []" in result.stdout, (name, result.stdout, result.stderr)
        assert result.new_files == [f"mine_{name}.txt"]
        if _active("Landlock: writes"):
            assert "kept out" in result.stdout
            assert not (jobs[name] / "intrusion.txt").exists()


def test_failing_script_reports_its_traceback(runner, make_job, write_script) -> None:
    job = make_job()
    script = write_script(job, "boom.py", "raise KeyError('Amount')\n")
    result = runner.run(script, job, FAST)
    assert result.status == "error" and result.exit_code == 1
    assert "KeyError: 'Amount'" in result.summary(lines_written=1)
    assert "boom.py" in result.stderr and "_child.py" not in result.stderr  # the runner's frames are hidden


def test_sys_exit_code_is_kept(runner, make_job, write_script) -> None:
    job = make_job()
    result = runner.run(write_script(job, "bye.py", "import sys\nsys.exit(3)\n"), job, FAST)
    assert (result.status, result.exit_code) == ("error", 3)


def test_warm_children_do_not_share_random_state(runners, make_job, write_script) -> None:
    job = make_job()
    script = write_script(job, "rand.py", "import numpy as np\nprint(np.random.rand())\n")
    warm = runners["warm"]
    first, second = warm.run(script, job, FAST), warm.run(script, job, FAST)
    assert first.status == "ok" and first.stdout != second.stdout


def test_get_runner_is_shared_and_rejects_unknown_modes() -> None:
    assert get_runner("cold") is get_runner("cold")
    from insightloom.errors import ConfigError

    with pytest.raises(ConfigError):
        get_runner("lukewarm")


def test_isolation_report_names_each_feature() -> None:
    names = [name for name, _active_flag, _detail in _REPORT]
    for expected in (
        "process-tree kill",
        "pid namespace",
        "network namespace",
        "Landlock: writes",
        "bubblewrap sandbox",
        "cgroup caps",
    ):
        assert any(name.startswith(expected) for name in names), expected
    assert all(isinstance(active, bool) and detail for _n, active, detail in _REPORT)


def test_child_inherits_no_descriptors_from_the_runner(runner, make_job, write_script) -> None:
    job = make_job()
    text = "import os\nprint('fds', sorted(int(f) for f in os.listdir('/proc/self/fd')))\n"
    script = write_script(job, "fds.py", text)
    result = runner.run(script, job, FAST)
    # 0-2 are stdio; the one extra is the descriptor listdir itself opened.
    assert "fds [0, 1, 2, 3]" in result.stdout, result.stdout


def test_credentials_are_not_passed_to_scripts(runners, make_job, write_script, monkeypatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "do-not-leak")
    monkeypatch.setenv("OPENAI_API_KEY", "do-not-leak")
    job = make_job()
    text = "import os\nprint('leaked' if 'do-not-leak' in os.environ.values() else 'clean')\n"
    script = write_script(job, "env.py", text)
    assert "clean" in runners["cold"].run(script, job, FAST).stdout
