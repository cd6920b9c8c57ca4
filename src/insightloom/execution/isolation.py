"""What isolation the script runner really gets on this machine, for ``insightloom doctor``.

Each feature is tried in a throwaway process (the same code path the runner uses), never assumed from the uid.
"""

from __future__ import annotations

import functools
import json
import logging
import resource
import subprocess
import sys
from pathlib import Path

from insightloom.execution.bwrap import SANDBOX_UID, bwrap_works
from insightloom.execution.cgroups import cgroup_support
from insightloom.execution.runner_base import child_env

logger = logging.getLogger(__name__)

_SANDBOX_FILE = Path(__file__).with_name("_sandbox.py")


def _probe() -> dict:
    """Run ``_sandbox.py --probe`` in a fresh interpreter: namespaces are entered there, not in the host."""
    try:
        done = subprocess.run(
            [sys.executable, str(_SANDBOX_FILE), "--probe"],
            capture_output=True,
            timeout=30,
            env=child_env(),
            check=False,
        )
        return json.loads(done.stdout.decode())
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return {"active": {}, "notes": [f"probe failed: {exc}"], "landlock_abi": 0}


def _note_for(probe: dict, prefix: str) -> str:
    return next((n for n in probe.get("notes", []) if n.startswith(prefix)), "")


def isolation_report() -> list[tuple[str, bool, str]]:
    """List ``(feature, active, detail)`` for every limit and confinement the runner applies."""
    probe = _probe()
    active = probe.get("active", {})
    abi = int(probe.get("landlock_abi", 0))
    rows: list[tuple[str, bool, str]] = []
    rows.append(
        (
            "process-tree kill (child subreaper)",
            bool(active.get("subreaper")),
            "orphaned and setsid'd descendants are re-parented to the run's supervisor and killed"
            if active.get("subreaper")
            else _note_for(probe, "subreaper") or "prctl unavailable",
        )
    )
    rows.append(
        (
            "pid namespace per script",
            bool(active.get("pidns")),
            "everything a script spawns dies with it; scripts cannot see or signal other jobs' processes"
            if active.get("pidns")
            else f"unavailable ({_note_for(probe, 'pid namespace')}); subreaper only",
        )
    )
    rows.append(
        (
            "network namespace (no network)",
            bool(active.get("netns")),
            "scripts run with only a down loopback interface"
            if active.get("netns")
            else f"unavailable ({_note_for(probe, 'network namespace')}); needs root or CAP_SYS_ADMIN",
        )
    )
    rows.append(
        (
            "Landlock: writes only in the job folder",
            abi >= 1,
            f"Landlock ABI {abi}" if abi else "Landlock not available in this kernel: scripts may write anywhere",
        )
    )
    rows.append(
        (
            "Landlock: TCP connect/bind denied",
            abi >= 4,
            "fallback network block when no network namespace" if abi >= 4 else "needs Landlock ABI >= 4",
        )
    )
    rows.append(
        (
            "Landlock: signal scoping",
            abi >= 6,
            "scripts cannot signal the runner or other jobs" if abi >= 6 else "needs Landlock ABI >= 6",
        )
    )
    rows.append(("rlimits (memory, CPU time, file size)", _rlimits_ok(), "RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE"))
    works, why = bwrap_works()
    rows.append(
        (
            "bubblewrap sandbox per job",
            works,
            f"{why}: scripts see only the runtime and their own job folder, as uid {SANDBOX_UID}"
            if works
            else f"{why}; scripts are confined by namespaces and Landlock only",
        )
    )
    cgroups = cgroup_support()
    rows.append(("cgroup caps (memory, processes) per sandbox", cgroups.version is not None, cgroups.detail))
    return rows


@functools.cache
def isolation_level() -> str:
    """The strongest isolation scripts get here, by name: ``bwrap+cgroup``, ``bwrap``, ``landlock+ns``,
    ``landlock`` or ``none`` (what ``doctor`` prints and ``run_info.json`` records)."""
    if bwrap_works()[0]:
        return "bwrap+cgroup" if cgroup_support().version is not None else "bwrap"
    probe = _probe()
    landlock = int(probe.get("landlock_abi", 0)) >= 1
    namespaces = bool(probe.get("active", {}).get("netns")) and bool(probe.get("active", {}).get("pidns"))
    if landlock:
        return "landlock+ns" if namespaces else "landlock"
    return "none"


def _rlimits_ok() -> bool:
    return all(hasattr(resource, name) for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE"))
