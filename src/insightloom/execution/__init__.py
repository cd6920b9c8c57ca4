"""The sandboxed script runner behind ``write_and_execute_tool``.

Public API::

    Limits, RunResult, ScriptRunner
    get_runner(mode="warm") -> ScriptRunner      # "warm" (shared fork server, lazily started) or "cold"
    run_script(script, job_dir, limits) -> RunResult
    resolve_script_path(job_dir, file_path) -> Path
    isolation_report() -> list[(feature, active, detail)]
    isolation_level() -> "bwrap+cgroup" | "bwrap" | "landlock+ns" | "landlock" | "none"
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from insightloom.errors import ConfigError
from insightloom.execution.cold import ColdRunner
from insightloom.execution.isolation import isolation_level, isolation_report
from insightloom.execution.limits import Limits, RunResult
from insightloom.execution.runner_base import ScriptRunner
from insightloom.execution.script_paths import resolve_script_path
from insightloom.execution.warm import WarmRunner

logger = logging.getLogger(__name__)

_runners: dict[str, ScriptRunner] = {}
_runners_lock = threading.Lock()


def get_runner(mode: str = "warm") -> ScriptRunner:
    """The process-wide runner for ``mode``: ``"warm"`` (default, started on first use) or ``"cold"``.

    Raises:
        ConfigError: ``mode`` is neither.
    """
    if mode not in ("warm", "cold"):
        raise ConfigError(f"Unknown script runner mode {mode!r}.", fix="Set the runner mode to 'warm' or 'cold'.")
    with _runners_lock:
        if mode not in _runners:
            _runners[mode] = WarmRunner() if mode == "warm" else ColdRunner()
        return _runners[mode]


def run_script(script: Path, job_dir: Path, limits: Limits | None = None, *, mode: str = "warm") -> RunResult:
    """Run one script with the shared runner (the seam named in ``docs/internals.md``)."""
    return get_runner(mode).run(script, job_dir, limits or Limits())


__all__ = [
    "ColdRunner",
    "Limits",
    "RunResult",
    "ScriptRunner",
    "WarmRunner",
    "get_runner",
    "isolation_level",
    "isolation_report",
    "resolve_script_path",
    "run_script",
]
