"""Limits during the run, not after it (issue 24, hole 5): the job-folder quota stops a script while it writes, the
sandbox leaves a script no capability at all (bounding set included), and a cap that kills or refuses some of a
script's processes makes the run fail, naming the cap, even when the script itself exits 0.

The quota and cap tests go through ``write_and_execute_tool`` on the warm and the cold runner, as the Coder would.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from insightloom.config import Settings
from insightloom.execution import ColdRunner, Limits, WarmRunner, get_runner
from insightloom.execution.bwrap import SANDBOX_UID, bwrap_works
from insightloom.execution.cgroups import cgroup_support
from insightloom.jobs import JobFolder
from insightloom.runtime import JobRuntime
from insightloom.tools import write_and_execute
from insightloom.tools.job_quota import job_usage
from insightloom.tools.write_and_execute import make_write_and_execute

#: The quota tests allow this long from the script's crossing to the tool's answer (about a second is the aim; the
#: rest is headroom for a loaded two-core machine). Unstopped, each script would run for tens of seconds.
STOP_WITHIN_S = 5.0


@pytest.fixture(params=["warm", "cold"])
def rt(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JobRuntime]:
    job = JobFolder.create(tmp_path / "artifacts")
    yield JobRuntime.create(job, Settings(provider="offline", runner=request.param), "req", "en")
    get_runner(request.param).release(job.root)  # the job's own warm server ends with the test


def _call(rt: JobRuntime, name: str, body: str) -> tuple[object, str, float]:
    """Run ``body`` through the tool; return the raw result, its text and when it came back (monotonic clock)."""
    result = make_write_and_execute(rt)._tool_func(file_path=name, content=body)
    text = result["content"][0]["text"] if isinstance(result, dict) else str(result)
    return result, text, time.monotonic()


def _crossed_at(text: str) -> float:
    """The monotonic time (shared with the sandbox: there is no time namespace) at which the script was about to
    pass the cap: printed a little before the crossing, since the job's own files may put it over a write early."""
    match = re.search(r"crossed (\d+\.\d+)", text)
    assert match, text
    return float(match.group(1))


def test_a_script_writing_past_max_job_mb_is_stopped_while_it_runs_and_its_files_are_kept(rt: JobRuntime) -> None:
    rt.settings.max_job_mb = 5
    body = (
        "import os, time\n"
        "os.makedirs('out', exist_ok=True)\n"
        "end, written, crossed = time.monotonic() + 60, 0, False\n"
        "while time.monotonic() < end and written < 300 * 2**20:\n"  # 60 s or 300 MB when nothing stops it
        "    with open(f'out/{written // 2**18}.bin', 'wb') as fh:\n"
        "        fh.write(b'x' * 2**18)\n"
        "    written += 2**18\n"
        "    if written >= 4 * 2**20 and not crossed:\n"
        "        crossed = True\n"
        "        print('crossed', time.monotonic(), flush=True)\n"
        "    time.sleep(0.02)\n"
        "print('finished', written)\n"
    )
    result, text, returned = _call(rt, "01_balloon.py", body)
    assert isinstance(result, dict) and result["status"] == "error", text
    assert "Status: quota" in text and "max_job_mb" in text and "while the script ran" in text and "Fix:" in text
    assert "finished" not in text
    assert returned - _crossed_at(text) < STOP_WITHIN_S, text
    kept = list((rt.root / "out").iterdir())
    assert sum(p.stat().st_size for p in kept) >= 4 * 2**20  # what it wrote before the stop is still there
    assert job_usage(rt.root, 10**6)[0] > 5 * 2**20  # and the folder is still over the cap it passed
    assert len(kept) < 200  # far below the 1,200 files it would have written


def test_a_script_making_files_past_max_job_files_is_stopped_while_it_runs(rt: JobRuntime) -> None:
    rt.settings.max_job_files = 300
    body = (
        "import os, time\n"
        "os.makedirs('spam', exist_ok=True)\n"
        "end, i = time.monotonic() + 60, 0\n"
        "while time.monotonic() < end and i < 20000:\n"
        "    open(f'spam/{i}.txt', 'w').close()\n"
        "    i += 1\n"
        "    if i == 250:\n"
        "        print('crossed', time.monotonic(), flush=True)\n"
        "    time.sleep(0.002)\n"
        "print('finished', i)\n"
    )
    result, text, returned = _call(rt, "01_spam.py", body)
    assert isinstance(result, dict) and result["status"] == "error", text
    assert "Status: quota" in text and "max_job_files" in text and "Fix:" in text
    assert "finished" not in text
    assert returned - _crossed_at(text) < STOP_WITHIN_S, text
    # Past the cap as the watcher counts it (the job's other files count too), and far from the script's end.
    assert job_usage(rt.root)[1] > 300 and len(list((rt.root / "spam").iterdir())) < 20000


def test_a_job_already_over_quota_runs_no_long_script(rt: JobRuntime) -> None:
    """The watcher also stops a script that begins over the cap (a folder left full by the last one)."""
    (rt.root / "left.bin").write_bytes(b"x" * (2 * 2**20))
    rt.settings.max_job_mb = 1
    started = time.monotonic()
    result, text, returned = _call(rt, "02_wait.py", "import time\ntime.sleep(60)\nprint('finished')\n")
    assert isinstance(result, dict) and "max_job_mb" in text and "finished" not in text
    assert returned - started < 30  # the server's start-up included; never the script's 60 s


# ------------------------------------------------------------------------------------------ capabilities


@pytest.fixture(scope="module")
def runners() -> Iterator[dict[str, WarmRunner | ColdRunner]]:
    if not bwrap_works()[0]:
        pytest.skip(f"bubblewrap is not usable here: {bwrap_works()[1]}")
    made: dict[str, WarmRunner | ColdRunner] = {
        "warm": WarmRunner(),
        "warm-supervisor": WarmRunner(isolate={"network": True, "filesystem": True, "pidns": False}),
        "cold": ColdRunner(),
    }
    yield made
    for runner in made.values():
        if isinstance(runner, WarmRunner):
            runner.shutdown()


@pytest.fixture(params=["warm", "warm-supervisor", "cold"])
def runner(request: pytest.FixtureRequest, runners: dict) -> WarmRunner | ColdRunner:
    return runners[request.param]


@pytest.fixture
def job(tmp_path: Path) -> Path:
    folder = tmp_path / "job"
    (folder / "code").mkdir(parents=True)
    return folder


def test_every_runner_path_stops_a_script_in_a_folder_over_quota(runner: WarmRunner | ColdRunner, job: Path) -> None:
    """The stop reaches the script on each path: the fork server's own run, its per-run supervisor, a cold one."""
    (job / "left.bin").write_bytes(b"x" * (2 * 2**20))
    script = job / "code" / "wait.py"
    script.write_text(
        "import time\nprint('started', flush=True)\ntime.sleep(60)\nprint('finished')\n", encoding="utf-8"
    )
    result = runner.run(script, job, Limits(timeout_s=90, max_job_mb=1))
    assert result.status == "quota" and not result.ok, (result.status, result.stderr)
    assert "finished" not in result.stdout and result.duration_s < 30
    assert "max_job_mb" in (result.killed_reason or "") and (job / "left.bin").is_file()


CAPS_PROBE = (
    "import json, os, subprocess, sys\n"
    "def caps(text):\n"
    "    pairs = (line.split(':', 1) for line in text.splitlines() if line.startswith('Cap'))\n"
    "    return json.dumps({key: value.strip() for key, value in pairs})\n"
    "print('script', caps(open('/proc/self/status').read()))\n"
    "child = subprocess.run([sys.executable, '-c', 'print(open(\"/proc/self/status\").read())'],\n"
    "                       capture_output=True, text=True, check=True).stdout\n"
    "print('child', caps(child))\n"
    "print('uid', os.getuid(), os.geteuid())\n"
)


def test_scripts_and_their_children_hold_no_capability_not_even_in_the_bounding_set(
    runner: WarmRunner | ColdRunner, job: Path
) -> None:
    script = job / "code" / "caps.py"
    script.write_text(CAPS_PROBE, encoding="utf-8")
    result = runner.run(script, job, Limits(timeout_s=60))
    assert result.exit_code == 0, result.stderr
    zero = "0000000000000000"
    for who in ("script", "child"):
        line = next(line for line in result.stdout.splitlines() if line.startswith(who + " "))
        found = json.loads(line.split(" ", 1)[1])
        assert set(found) >= {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}, line
        assert all(value == zero for value in found.values()), (who, found)
    if os.geteuid() == 0:
        assert f"uid {SANDBOX_UID} {SANDBOX_UID}" in result.stdout  # the uid switch still happens, after the drop


# ------------------------------------------------------------------------------------------ caps that kill children


def _needs_cgroups() -> None:
    if cgroup_support().version is None:
        pytest.skip(cgroup_support().detail)


def test_a_memory_cap_that_kills_children_fails_the_run_and_names_the_cap(
    rt: JobRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    _needs_cgroups()
    # A 512 MiB script cap keeps the job's cgroup at about 1.2 GiB (warm) or 0.9 GiB (cold), so three 450 MB
    # children cannot all fit; each alone stays under its own rlimit, so only the cgroup can kill them.
    monkeypatch.setattr(write_and_execute, "Limits", functools.partial(Limits, memory_mb=512))
    hog = "import time; x = b'x' * (450 * 2**20); print('held', flush=True); time.sleep(3)"
    body = (
        "import subprocess, sys\n"
        f"children = [subprocess.Popen([sys.executable, '-c', {hog!r}]) for _ in range(3)]\n"
        "children.append(subprocess.Popen([sys.executable, '-c', 'print(\"small\")']))\n"
        "print('codes', [c.wait() for c in children])\n"
    )
    result, text, _returned = _call(rt, "03_hogs.py", body)
    codes = re.search(r"codes \[(.*?)\]", text)
    assert codes and "-9" in codes.group(1), text  # the cap killed at least one child; the script went on
    assert isinstance(result, dict) and result["status"] == "error", text
    assert "Status: ok" not in text and "Status: memory (exit code 0)" in text
    killed = re.search(r"the memory cap \((.+?) for all of this job's processes together\) killed (\d+) process", text)
    assert killed and int(killed.group(2)) >= codes.group(1).count("-9"), text
    assert "Fix:" in text


def test_a_process_cap_that_refuses_forks_fails_the_run_and_names_the_cap(
    runner: WarmRunner | ColdRunner, job: Path
) -> None:
    _needs_cgroups()
    body = (
        "import os, time\n"
        "count = 0\n"
        "try:\n"
        "    for _ in range(1000):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        count += 1\n"
        "except OSError:\n"
        "    print('refused after', count, flush=True)\n"
        "os._exit(0)\n"
    )
    script = job / "code" / "forks.py"
    script.write_text(body, encoding="utf-8")
    result = runner.run(script, job, Limits(timeout_s=60))
    assert "refused after" in result.stdout and result.exit_code == 0, result.stderr
    assert not result.ok and result.status == "processes"
    assert "the process cap (128 processes" in result.summary() and "Fix:" in result.summary()
