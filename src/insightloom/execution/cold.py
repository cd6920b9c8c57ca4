"""The cold runner: a brand-new interpreter per script, with the same limits and confinement as the warm one.

It is the fallback when the warm server cannot start, and the config switch for anyone who prefers it. It costs the
full interpreter start and heavy imports (about 1.4 s for pandas + numpy + matplotlib on a 2-core machine).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from insightloom.execution.limits import Limits, RunResult
from insightloom.execution.runner_base import (
    HOST_GRACE_S,
    build_spec,
    child_env,
    default_isolation,
    host_killed,
    kill_leftovers,
    make_run_dir,
    snapshot,
    to_result,
)
from insightloom.execution.script_paths import ensure_inside_code

logger = logging.getLogger(__name__)

SANDBOX_FILE = Path(__file__).with_name("_sandbox.py")


class ColdRunner:
    """Run each script in a brand-new interpreter (no pre-imports): slow, simple, the fallback path."""

    name = "cold"

    def __init__(self, *, python: str = sys.executable, isolate: dict | None = None) -> None:
        self.python = python
        self.isolate = isolate or default_isolation()
        self._mpl_cache: str | None = None

    def run(self, script: Path, job_dir: Path, limits: Limits | None = None) -> RunResult:
        """Run ``script`` for ``job_dir`` under ``limits`` in a cold interpreter."""
        limits = limits or Limits()
        script = ensure_inside_code(script, job_dir)
        before = snapshot(Path(job_dir))
        run_dir = make_run_dir()
        started = time.monotonic()
        try:
            spec = build_spec(script, job_dir, limits, run_dir, self.isolate, mpl_cache=self._mpl_cache_dir())
            raw = self._supervise(spec, limits, run_dir)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        duration = time.monotonic() - started
        new_files = sorted(snapshot(Path(job_dir)) - before)
        return to_result(raw, limits, duration_s=duration, new_files=new_files, runner=self.name)

    def _supervise(self, spec: dict, limits: Limits, run_dir: str) -> dict:
        proc = subprocess.Popen(
            [self.python, str(SANDBOX_FILE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
            cwd=run_dir,
        )
        try:
            out, err = proc.communicate(json.dumps(spec).encode(), timeout=limits.timeout_s + HOST_GRACE_S)
        except subprocess.TimeoutExpired:
            kill_leftovers(run_dir)
            proc.kill()
            proc.communicate()
            return host_killed(limits, "timeout")
        try:
            return json.loads(out.decode())
        except ValueError:
            tail = err.decode(errors="replace")[-2000:]
            return {"runner_error": f"cold runner exited {proc.returncode} without a report:\n{tail}"}

    def _mpl_cache_dir(self) -> str | None:
        """matplotlib's cache folder (its own lookup rule), whose font list the child copies instead of rebuilding.

        Computed without importing matplotlib, so the host does not pay for it.
        """
        if self._mpl_cache is None:
            configured = os.environ.get("MPLCONFIGDIR")
            xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
            self._mpl_cache = configured or str(Path(xdg) / "matplotlib")
        return self._mpl_cache or None
