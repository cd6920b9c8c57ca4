"""Whole-sandbox memory and process caps with cgroups: every process a job's scripts start counts together.

Per-process limits (``RLIMIT_AS``) let two forked children hold twice the cap, and a fork bomb is bounded only by
the machine. A cgroup holds a sandbox (the warm server and every script it forks, or one cold script) with a memory
cap and a process cap for all of them at once.

cgroup v2 is used where its ``memory`` and ``pids`` controllers are available to us; otherwise the v1 ``memory`` and
``pids`` hierarchies (what this kind of machine offers). Support is detected by the controllers, never by whether a
folder happens to be writable.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

logger = logging.getLogger(__name__)

ROOT = Path("/sys/fs/cgroup")
PARENT = "insightloom"
CONTROLLERS = ("memory", "pids")
#: Empty groups older than this were left by a process that died without closing them (kill -9, os._exit).
STALE_AFTER_S = 600.0


@dataclass(frozen=True)
class CapEvents:
    """How often the group's caps struck: processes the memory cap killed, forks the process cap refused."""

    oom_kills: int = 0
    forks_refused: int = 0

    def since(self, before: CapEvents) -> CapEvents:
        return CapEvents(self.oom_kills - before.oom_kills, self.forks_refused - before.forks_refused)


@dataclass(frozen=True)
class CgroupSupport:
    """Which cgroup version the runner can use, and why (for ``doctor``)."""

    version: int | None
    detail: str


def _v2_root() -> Path | None:
    for root in (ROOT, ROOT / "unified"):
        controllers = root / "cgroup.controllers"
        if controllers.is_file() and set(CONTROLLERS) <= set(controllers.read_text().split()):
            return root
    return None


@cache
def cgroup_support() -> CgroupSupport:
    """Detect usable controllers by creating (and removing) a probe group with the caps set."""
    v2 = _v2_root()
    if v2 is not None:
        try:
            parent = _v2_parent(v2)
            probe = parent / f"probe-{os.getpid()}"
            probe.mkdir(exist_ok=True)
            (probe / "pids.max").write_text("8")
            (probe / "memory.max").write_text(str(64 << 20))
            probe.rmdir()
            return CgroupSupport(2, f"cgroup v2 at {v2} with the memory and pids controllers")
        except OSError as exc:
            logger.debug("cgroup v2 unusable: %s", exc)
    try:
        for controller in CONTROLLERS:
            base = ROOT / controller
            if not (base / "cgroup.procs").is_file():
                raise OSError(f"no v1 {controller} hierarchy at {base}")
            probe = base / PARENT / f"probe-{os.getpid()}"
            probe.mkdir(parents=True, exist_ok=True)
            limit = "memory.limit_in_bytes" if controller == "memory" else "pids.max"
            (probe / limit).write_text(str(64 << 20) if controller == "memory" else "8")
            probe.rmdir()
        return CgroupSupport(1, "cgroup v1 memory and pids controllers")
    except OSError as exc:
        return CgroupSupport(None, f"no usable memory and pids cgroup controllers ({exc})")


def _v2_parent(root: Path) -> Path:
    parent = root / PARENT
    parent.mkdir(exist_ok=True)
    with contextlib.suppress(OSError):
        (root / "cgroup.subtree_control").write_text("+memory +pids")
    (parent / "cgroup.subtree_control").write_text("+memory +pids")
    return parent


class SandboxCgroup:
    """One cgroup (v2) or a pair (v1 memory + pids) holding one sandbox's processes.

    Args:
        name: Unique name (job id and a counter).
        memory_mb: Memory cap for all the processes together.
        max_pids: Process cap for all the processes together.
    """

    def __init__(self, name: str, memory_mb: float, max_pids: int) -> None:
        support = cgroup_support()
        if support.version is None:
            raise OSError(support.detail)
        self.version = support.version
        self.memory_mb = memory_mb
        self.max_pids = max_pids
        _sweep_stale_once()
        memory = str(int(memory_mb * 1024 * 1024))
        if self.version == 2:
            root = _v2_root()
            assert root is not None
            self.dirs = [_v2_parent(root) / name]
            self.dirs[0].mkdir(exist_ok=True)
            (self.dirs[0] / "memory.max").write_text(memory)
            if (self.dirs[0] / "memory.swap.max").exists():
                (self.dirs[0] / "memory.swap.max").write_text("0")
            (self.dirs[0] / "pids.max").write_text(str(max_pids))
        else:
            self.dirs = [ROOT / c / PARENT / name for c in CONTROLLERS]
            for folder in self.dirs:
                folder.mkdir(parents=True, exist_ok=True)
            (self.dirs[0] / "memory.limit_in_bytes").write_text(memory)
            with contextlib.suppress(OSError):  # swap accounting may be off; then swap is not counted
                (self.dirs[0] / "memory.memsw.limit_in_bytes").write_text(memory)
            (self.dirs[1] / "pids.max").write_text(str(max_pids))

    def set_memory(self, memory_mb: float) -> None:
        """Change the memory cap (per script: its limit plus what the server holds); a refusal is only logged."""
        limit = str(int(memory_mb * 1024 * 1024))
        try:
            if self.version == 2:
                (self.dirs[0] / "memory.max").write_text(limit)
            else:
                with contextlib.suppress(OSError):  # memsw must stay >= the memory limit: raise it first
                    (self.dirs[0] / "memory.memsw.limit_in_bytes").write_text(limit)
                (self.dirs[0] / "memory.limit_in_bytes").write_text(limit)
                with contextlib.suppress(OSError):
                    (self.dirs[0] / "memory.memsw.limit_in_bytes").write_text(limit)
            self.memory_mb = memory_mb
        except OSError as exc:
            logger.debug("memory cap of %s unchanged: %s", self.dirs[0], exc)

    def add(self, pid: int) -> None:
        """Move ``pid`` (and later its children) into the group."""
        for folder in self.dirs:
            (folder / "cgroup.procs").write_text(str(pid))

    def adopt_tree(self, pid: int) -> None:
        """Move ``pid`` and every process it has forked so far into the group."""
        pending = [pid]
        while pending:
            current = pending.pop()
            try:
                self.add(current)
            except OSError:
                continue  # it exited meanwhile
            pending += _children(current)

    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder in self.dirs:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(x) for x in (folder / "cgroup.procs").read_text().split())
        return sorted(found)

    def oom_kills(self) -> int:
        """How many processes the memory cap has killed so far."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        return _counter(self.dirs[0] / name, "oom_kill")

    def forks_refused(self) -> int:
        """How many forks the process cap has refused so far (``max`` in ``pids.events``, v1 and v2 alike)."""
        return _counter(self.dirs[-1] / "pids.events", "max")

    def events(self) -> CapEvents:
        """Both counters now: read before and after a script to learn what its caps did to it."""
        return CapEvents(self.oom_kills(), self.forks_refused())

    def close(self) -> None:
        """Kill whatever is left in the group and remove it."""
        for _ in range(50):
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)  # the kernel needs a moment to reap what it killed before rmdir succeeds
        for folder in self.dirs:
            with contextlib.suppress(OSError):
                folder.rmdir()


def _counter(path: Path, name: str) -> int:
    """One ``key value`` line of a cgroup events file, 0 when absent or unreadable."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    return 0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError, ValueError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(x) for x in handle.read().split()]
    return found


_swept = False


def _sweep_stale_once() -> None:
    global _swept
    if not _swept:
        _swept = True
        sweep_stale()


def sweep_stale(older_than: float = STALE_AFTER_S, match: str = "") -> None:
    """Remove empty groups that dead processes left behind (an in-use group refuses ``rmdir``, so it stays).

    Args:
        older_than: Only groups whose folder is older than this many seconds.
        match: Only groups whose name starts with this.
    """
    now = time.time()
    parents = [ROOT / c / PARENT for c in CONTROLLERS]
    v2 = _v2_root()
    if v2 is not None:
        parents.append(v2 / PARENT)
    for parent in parents:
        with contextlib.suppress(OSError):
            for group in parent.iterdir():
                with contextlib.suppress(OSError):
                    if group.is_dir() and group.name.startswith(match) and now - group.stat().st_mtime > older_than:
                        group.rmdir()
