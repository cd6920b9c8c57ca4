"""What isolation the script runner really gets on this machine, for ``insightloom doctor``.

Each feature is tried in a throwaway process (the same code path the runner uses), never assumed from the uid.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

from insightloom.execution.runner_base import child_env

logger = logging.getLogger(__name__)

_SANDBOX_FILE = Path(__file__).with_name("_sandbox.py")
_CGROUP_ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")


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


def _cgroup_v2() -> tuple[bool, str]:
    for root in _CGROUP_ROOTS:
        is_v2 = os.path.exists(os.path.join(root, "cgroup.controllers"))
        if is_v2 and os.access(root, os.W_OK):
            return True, f"cgroup v2 at {root} is writable (unused: pid namespace + subreaper kill the tree)"
    return False, "no writable cgroup v2 hierarchy (not needed: pid namespace + subreaper kill the tree)"


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
    rows.append(("cgroup v2", *_cgroup_v2()))
    bwrap = shutil.which("bwrap")
    rows.append(
        (
            "bubblewrap",
            False,
            f"found at {bwrap} but not used: the warm fork server cannot exec through it; "
            "Landlock confines writes instead"
            if bwrap
            else "not installed and not needed (Landlock is used)",
        )
    )
    return rows


def _rlimits_ok() -> bool:
    return all(hasattr(resource, name) for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE"))
