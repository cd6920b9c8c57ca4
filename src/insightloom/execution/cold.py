"""The cold runner: a brand-new interpreter per script, with the same limits and confinement as the warm one.

It is the fallback when the warm server cannot start, and the config switch for anyone who prefers it. It costs the
full interpreter start and heavy imports (about 1.4 s for pandas + numpy + matplotlib on a 2-core machine).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from insightloom.execution.bwrap import (
    BWRAP_ENV,
    SandboxSpec,
    bwrap_works,
    give_to_sandbox,
    sandbox_argv,
    seed_mpl_cache,
    start_sandboxed,
)
from insightloom.execution.cgroups import CapEvents, SandboxCgroup, cgroup_support
from insightloom.execution.limits import Limits, RunResult
from insightloom.execution.quota import QuotaWatch
from insightloom.execution.runner_base import (
    HOST_GRACE_S,
    build_spec,
    child_env,
    default_isolation,
    host_killed,
    kill_leftovers,
    make_run_dir,
    make_runs_root,
    note_run_limits,
    sandbox_env,
    sandboxed_isolation,
    snapshot,
    to_result,
)
from insightloom.execution.script_paths import ensure_inside_code

logger = logging.getLogger(__name__)

SANDBOX_FILE = Path(__file__).with_name("_sandbox.py")


class ColdRunner:
    """Run each script in a brand-new interpreter (no pre-imports): slow, simple, the fallback path."""

    name = "cold"

    def __init__(
        self, *, python: str = sys.executable, isolate: dict | None = None, sandbox: bool | None = None
    ) -> None:
        self.python = python
        self.isolate = isolate or default_isolation()
        self.sandboxed = bwrap_works()[0] if sandbox is None else sandbox
        self._mpl_cache: str | None = None

    def prestart(self, job_dir: Path) -> None:
        """Nothing to prepare: every script starts its own interpreter."""

    def release(self, job_dir: Path) -> None:
        """Nothing is held between scripts."""

    def run(self, script: Path, job_dir: Path, limits: Limits | None = None) -> RunResult:
        """Run ``script`` for ``job_dir`` under ``limits`` in a cold interpreter."""
        limits = limits or Limits()
        script = ensure_inside_code(script, job_dir)
        runs_root = make_runs_root() if self.sandboxed else None
        if runs_root is not None:
            give_to_sandbox(Path(runs_root))
            give_to_sandbox(Path(job_dir))
        before = snapshot(Path(job_dir))
        run_dir = make_run_dir(runs_root)
        started = time.monotonic()
        try:
            if runs_root is None:
                spec = build_spec(script, job_dir, limits, run_dir, self.isolate, mpl_cache=self._mpl_cache_dir())
                raw = self._supervise(spec, limits, Path(job_dir), run_dir)
            else:
                mpl = str(seed_mpl_cache(Path(run_dir) / "mpl-seed"))
                give_to_sandbox(Path(run_dir))
                isolate = {**self.isolate, **sandboxed_isolation()}
                spec = build_spec(script, job_dir, limits, run_dir, isolate, mpl_cache=mpl)
                raw = self._supervise_sandboxed(spec, limits, Path(job_dir), runs_root)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
            if runs_root is not None:
                shutil.rmtree(runs_root, ignore_errors=True)
        duration = time.monotonic() - started
        new_files = sorted(snapshot(Path(job_dir)) - before)
        return to_result(raw, limits, duration_s=duration, new_files=new_files, runner=self.name)

    def _supervise(self, spec: dict, limits: Limits, job_dir: Path, run_dir: str) -> dict:
        with _control_pipe() as (control, stop):
            proc = subprocess.Popen(
                [self.python, str(SANDBOX_FILE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=child_env(),
                cwd=run_dir,
                pass_fds=(control,),
            )
            leftovers = functools.partial(kill_leftovers, run_dir)
            exchanged = _exchange(proc, spec, (control, stop), limits, job_dir, before_kill=leftovers)
            if exchanged is None:
                return host_killed(limits, "timeout")
            out, err, watch = exchanged
        try:
            raw: dict = json.loads(out.decode())
        except ValueError:
            tail = err.decode(errors="replace")[-2000:]
            return {"runner_error": f"cold runner exited {proc.returncode} without a report:\n{tail}"}
        note_run_limits(raw, None, CapEvents(), watch)
        return raw

    def _supervise_sandboxed(self, spec: dict, limits: Limits, job_dir: Path, runs_root: str) -> dict:
        """The supervisor in a sandbox of its own, held to one memory and process cap with everything it starts."""
        env = sandbox_env({"HOME": spec["run_dir"], "TMPDIR": spec["run_dir"]})
        sandbox = SandboxSpec(
            writable=(job_dir.resolve(), Path(runs_root)), cwd=Path(spec["run_dir"]), env=env, switch_user=False
        )
        argv = sandbox_argv(sandbox, [self.python, str(SANDBOX_FILE)])
        cgroup = _run_cgroup(limits)
        try:
            with _control_pipe() as (control, stop):
                proc = start_sandboxed(
                    argv,
                    cgroup,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=BWRAP_ENV,
                    pass_fds=(control,),
                )
                # On a timeout, bwrap's death ends its pid namespace: the supervisor and every script process.
                exchanged = _exchange(proc, spec, (control, stop), limits, job_dir)
                if exchanged is None:
                    return host_killed(limits, "timeout")
                out, err, watch = exchanged
            try:
                raw: dict = json.loads(out.decode())
            except ValueError:
                tail = err.decode(errors="replace")[-2000:]
                oom = cgroup.oom_kills() if cgroup is not None else 0
                why = " (the run's processes together hit the memory cap)" if oom else ""
                return {"runner_error": f"cold runner exited {proc.returncode} without a report{why}:\n{tail}"}
            note_run_limits(raw, cgroup, CapEvents(), watch)  # a fresh group per run: its counters start at 0
            return raw
        finally:
            if cgroup is not None:
                cgroup.close()

    def _mpl_cache_dir(self) -> str | None:
        """matplotlib's cache folder (its own lookup rule), whose font list the child copies instead of rebuilding.

        Computed without importing matplotlib, so the host does not pay for it.
        """
        if self._mpl_cache is None:
            configured = os.environ.get("MPLCONFIGDIR")
            xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
            self._mpl_cache = configured or str(Path(xdg) / "matplotlib")
        return self._mpl_cache or None


def _exchange(
    proc: subprocess.Popen,
    spec: dict,
    pipe: tuple[int, int],
    limits: Limits,
    job_dir: Path,
    *,
    before_kill: Callable[[], None] | None = None,
) -> tuple[bytes, bytes, QuotaWatch] | None:
    """Send the spec to the supervisor and wait for its report while the job quota is watched; None on a timeout.

    ``pipe`` is the control pipe (the supervisor's end, the host's end): the watcher stops the run through it.
    """
    control, stop = pipe
    stopper = functools.partial(os.write, stop, b"S")
    with QuotaWatch(job_dir, limits.max_job_mb, limits.max_job_files, stopper) as watch:
        try:
            payload = json.dumps({**spec, "control_fd": control}).encode()
            out, err = proc.communicate(payload, timeout=limits.timeout_s + HOST_GRACE_S)
        except subprocess.TimeoutExpired:
            if before_kill is not None:
                before_kill()
            proc.kill()
            proc.communicate()
            return None
    return out, err, watch


#: A cold script's interpreter and imports, on top of its own memory cap, in its cgroup (MiB).
INTERPRETER_RESERVE_MB = 384
MAX_PIDS = 128


@contextlib.contextmanager
def _control_pipe() -> Iterator[tuple[int, int]]:
    """(read end for the supervisor, write end for the host): any byte written stops the script, EOF kills it."""
    read_end, write_end = os.pipe()
    try:
        yield read_end, write_end
    finally:
        os.close(read_end)
        os.close(write_end)


def _run_cgroup(limits: Limits) -> SandboxCgroup | None:
    if cgroup_support().version is None:
        return None
    try:
        name = f"cold-{os.getpid()}-{time.monotonic_ns()}"
        return SandboxCgroup(name, limits.memory_mb + INTERPRETER_RESERVE_MB, MAX_PIDS)
    except OSError as exc:
        logger.warning("no cgroup for this script: %s", exc)
        return None
