"""Hostile scripts against the runner: the control channel, host /proc, reads outside the job, and whole-sandbox
caps on memory and processes (escape classes 1, 3 and 4 of the isolation issue, and its resource gaps).

Each test runs on the warm runner (the job's own sandboxed fork server) and the cold one (a sandbox per script).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from insightloom.execution import ColdRunner, Limits, WarmRunner
from insightloom.execution.bwrap import SANDBOX_UID, bwrap_works
from insightloom.execution.cgroups import cgroup_support
from insightloom.execution.runner_base import build_spec, default_isolation, make_run_dir

FAST = Limits(timeout_s=60)
HOST_SECRET = "host-secret-do-not-leak"


@pytest.fixture(scope="module")
def runners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, WarmRunner | ColdRunner]]:
    if not bwrap_works()[0]:
        pytest.skip(f"bubblewrap is not usable here: {bwrap_works()[1]} (apt-get install bubblewrap)")
    os.environ["INSIGHTLOOM_API_TOKEN"] = HOST_SECRET  # the host holds a secret while its runners start
    made = {"warm": WarmRunner(), "cold": ColdRunner()}
    yield made
    os.environ.pop("INSIGHTLOOM_API_TOKEN", None)
    for runner in made.values():
        if isinstance(runner, WarmRunner):
            runner.shutdown()


@pytest.fixture(params=["warm", "cold"])
def runner(request: pytest.FixtureRequest, runners: dict) -> WarmRunner | ColdRunner:
    return runners[request.param]


@pytest.fixture
def job(tmp_path: Path) -> Path:
    folder = tmp_path / "job"
    (folder / "code").mkdir(parents=True)
    return folder


def _run(runner: WarmRunner | ColdRunner, job: Path, body: str, limits: Limits = FAST) -> tuple[str, object]:
    script = job / "code" / "probe.py"
    script.write_text(body, encoding="utf-8")
    result = runner.run(script, job, limits)
    return result.stdout, result


def test_reads_outside_the_job_find_nothing(runner: WarmRunner | ColdRunner, job: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-job" / "data"
    other.mkdir(parents=True)
    (other / "customers.csv").write_text("name,card\nana,4111\n", encoding="utf-8")
    os.chmod(other / "customers.csv", 0o644)  # world-readable on the host
    body = (
        "import os\n"
        f"for path in ('/etc/shadow', '/etc/hostname', {str(other / 'customers.csv')!r}, '/root'):\n"
        "    try:\n"
        "        with open(path, 'rb') as fh:\n"
        "            print('READ', path, fh.read(40))\n"
        "    except OSError as exc:\n"
        "        print('blocked', path, type(exc).__name__)\n"
        "print('uid', os.getuid())\n"
    )
    out, result = _run(runner, job, body)
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert "READ" not in out and out.count("blocked") == 4
    if os.geteuid() == 0:
        assert f"uid {SANDBOX_UID}" in out  # root on the host is never root in the sandbox


def test_host_proc_and_the_sandbox_init_show_no_host_secret(runner: WarmRunner | ColdRunner, job: Path) -> None:
    body = (
        "import os\n"
        f"host = {os.getpid()}\n"
        "for path in (f'/proc/{host}/environ', '/proc/1/environ', f'/proc/{os.getppid()}/environ'):\n"
        "    try:\n"
        "        with open(path, 'rb') as fh:\n"
        "            data = fh.read()\n"
        f"        print('LEAK' if {HOST_SECRET!r}.encode() in data else 'clean', path)\n"
        "    except OSError as exc:\n"
        "        print('blocked', path, type(exc).__name__)\n"
        f"print('env', 'LEAK' if {HOST_SECRET!r} in str(os.environ) else 'clean')\n"
        "print('pids', sorted(int(p) for p in os.listdir('/proc') if p.isdigit())[-1] < 100)\n"
    )
    out, result = _run(runner, job, body)
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert "LEAK" not in out and "env clean" in out
    assert "pids True" in out  # a fresh /proc: the sandbox's own few processes, not the host's


def test_a_script_cannot_reach_any_runner_control_socket(runner: WarmRunner | ColdRunner, job: Path) -> None:
    own = ""
    if isinstance(runner, WarmRunner):
        runner.start(job)
        server = runner._servers[runner._key(job)]
        own = str(Path(server.dir or "", "server.sock"))
    body = (
        "import glob, socket\n"
        f"paths = glob.glob('/tmp/insightloom-warm-*/server.sock') + [p for p in [{own!r}] if p]\n"
        "print('candidates', len(paths))\n"
        "for path in paths:\n"
        "    s = socket.socket(socket.AF_UNIX)\n"
        "    try:\n"
        "        s.connect(path)\n"
        "        print('CONNECTED', path)\n"
        "    except OSError as exc:\n"
        "        print('blocked', type(exc).__name__)\n"
    )
    out, result = _run(runner, job, body)
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert "CONNECTED" not in out


def test_the_shared_server_refuses_specs_from_anyone_but_the_host(tmp_path: Path) -> None:
    """Without a sandbox the socket path is visible; the server checks its caller (SO_PEERCRED) instead."""
    job = tmp_path / "job"
    (job / "code").mkdir(parents=True)
    marker = tmp_path / "escaped.txt"
    payload = job / "code" / "payload.py"
    payload.write_text(f"open({str(marker)!r}, 'w').write('ran unconfined')\n", encoding="utf-8")
    runner = WarmRunner(sandbox=False)
    try:
        runner.start(job)
        server = runner._servers[runner._key(job)]
        sock_path = str(Path(server.dir or "", "server.sock"))
        spec = build_spec(payload, job, FAST, make_run_dir(), {"network": False, "filesystem": False, "pidns": False})
        attacker = (
            "import socket, sys\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            f"s.connect({sock_path!r})\n"
            f"s.sendall({json.dumps(spec)!r}.encode() + b'\\n')\n"
            "s.settimeout(20)\n"
            "print('reply', s.recv(100))\n"
        )
        (job / "code" / "attack.py").write_text(attacker, encoding="utf-8")
        result = runner.run(job / "code" / "attack.py", job, FAST)
        assert "reply b''" in result.stdout or result.exit_code != 0, result.stdout
        assert not marker.exists()
        assert runner.run(job / "code" / "attack.py", job, FAST).runner == "warm"  # the host still gets served
    finally:
        runner.shutdown()


def _needs_cgroups() -> None:
    if cgroup_support().version is None:
        pytest.skip(cgroup_support().detail)


def test_forked_children_over_the_memory_cap_together_are_killed(runner: WarmRunner | ColdRunner, job: Path) -> None:
    _needs_cgroups()
    # Each child holds its memory until the parent has heard from all four (or seen one die), so the four overlap
    # however slowly a loaded machine starts them: a timed sleep let them run one after another and never exceed.
    hog = "import sys; x = b'x' * (450 * 1024 * 1024); print('held', flush=True); sys.stdin.read()"
    body = (
        "import subprocess, sys\n"
        "children = [subprocess.Popen([sys.executable, '-c', " + repr(hog) + "], stdin=subprocess.PIPE, "
        "stdout=subprocess.PIPE) for _ in range(4)]\n"
        "for c in children:\n"
        "    print(c.stdout.readline().decode().strip() or 'gone', flush=True)\n"
        "for c in children:\n"
        "    c.stdin.close()\n"
        "codes = [c.wait() for c in children]\n"
        "print('codes', codes)\n"
    )
    limits = Limits(timeout_s=90, memory_mb=1024)  # each child fits its own cap; four together exceed the sandbox's
    out, result = _run(runner, job, body, limits)
    codes = json.loads(out.split("codes", 1)[1].strip()) if "codes" in out else []
    assert -9 in codes or result.exit_code != 0, (out, result.stderr)  # type: ignore[attr-defined]
    out, result = _run(runner, job, "print('still works')\n")
    assert "still works" in out  # the job goes on


def test_a_fork_bomb_stops_at_the_process_cap(runner: WarmRunner | ColdRunner, job: Path) -> None:
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
        "except OSError as exc:\n"
        "    print('refused after', count, type(exc).__name__, flush=True)\n"
        "os._exit(0)\n"
    )
    out, result = _run(runner, job, body, Limits(timeout_s=60))
    assert "refused after" in out, (out, result.stderr)  # type: ignore[attr-defined]
    assert int(out.split("refused after", 1)[1].split()[0]) < 200
    out, _result = _run(runner, job, "print('still works')\n")
    assert "still works" in out


def test_the_sandbox_runs_the_real_interpreter_read_only(runner: WarmRunner | ColdRunner, job: Path) -> None:
    body = (
        "import sys, os, sysconfig\n"
        "site = sysconfig.get_paths()['purelib']\n"
        "try:\n"
        "    open(os.path.join(site, 'sitecustomize.py'), 'w').write('print(1)')\n"
        "    print('WROTE')\n"
        "except OSError as exc:\n"
        "    print('readonly', type(exc).__name__)\n"
        "print('exe', sys.executable)\n"
    )
    out, result = _run(runner, job, body)
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert "readonly" in out and "WROTE" not in out
    assert not Path(sys.prefix, "sitecustomize.py").exists()
    assert default_isolation()["filesystem"]


@pytest.mark.parametrize("kind", ["warm", "cold"])
def test_without_bubblewrap_landlock_read_rules_still_hide_the_host(kind: str, job: Path, tmp_path: Path) -> None:
    """The fallback level (namespaces + Landlock) also confines reads: the runtime works, the host stays hidden."""
    from insightloom.execution._kernel import landlock_abi

    if landlock_abi() < 1:
        pytest.skip("Landlock is not available in this kernel")
    other = tmp_path / "other-job" / "data"
    other.mkdir(parents=True)
    (other / "customers.csv").write_text("name,card\nana,4111\n", encoding="utf-8")
    runner = WarmRunner(sandbox=False) if kind == "warm" else ColdRunner(sandbox=False)
    body = (
        "import duckdb, matplotlib.pyplot as plt, pandas as pd\n"
        f"for path in ('/etc/shadow', '/etc/hostname', {str(other / 'customers.csv')!r}):\n"
        "    try:\n"
        "        open(path, 'rb').read(10)\n"
        "        print('READ', path)\n"
        "    except OSError:\n"
        "        print('blocked', path)\n"
        "print(duckdb.connect().execute('SELECT 42').fetchone()[0], pd.DataFrame({'a': [1, 2]}).a.sum())\n"
    )
    try:
        out, result = _run(runner, job, body)
    finally:
        if isinstance(runner, WarmRunner):
            runner.shutdown()
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert "READ" not in out and out.count("blocked") == 3 and "42 3" in out
