"""``job.lock``: one process runs a job at a time, across restarts and hosts.

The lock holds the owner's pid, host and a heartbeat. It is alive when its host is this one and the pid runs, or when
another host's heartbeat is under 60 s old (and not more than 60 s ahead of this clock). A stale lock is taken over.
The file sits in the job folder, where scripts write: it is read without following a link and only when it is a
small regular file, and whatever is not a lock is no lock.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from .errors import BadInputError, UnsafePathError
from .fileio import flock_within, open_lock_file, read_text, write_json

logger = logging.getLogger(__name__)
LOCK_FILE = "job.lock"
HEARTBEAT_S = 10.0
STALE_AFTER_S = 60.0
#: A heartbeat further ahead of this host's clock than this is not believed (a scribble, or a clock far off).
MAX_AHEAD_S = 60.0
#: A lock record is a few hundred bytes; anything bigger is not one.
_MAX_LOCK_BYTES = 4096
#: How long taking the lock waits for the guard: a script can hold a flock on it, and must not stall the host.
GUARD_WAIT_S = 30.0


class JobLocked(BadInputError):
    """Another live process holds the job's lock."""


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_start(pid: int) -> str | None:
    """An identity for the process ``pid`` that a later process reusing the pid cannot share: boot id + start tick.

    A restarted container keeps its hostname and runs as pid 1 again, so pid and host alone would make an old lock
    look alive forever.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return f"{boot}:{stat.rsplit(')', 1)[1].split()[19]}"  # field 22 (starttime), counted after the command name


def _read_lock(path: Path) -> dict[str, Any] | None:
    """The lock's content, or None when it is missing or not a lock.

    A script may have scribbled over it, or planted a link or a FIFO there (reading a FIFO would block the sweeper
    and the API's start-up forever), so it is read without following links, only as a small regular file.
    """
    try:
        data = json.loads(read_text(path, beneath=path.parent, max_bytes=_MAX_LOCK_BYTES))
        if isinstance(data, dict):
            int(data.get("pid", -1))
            float(data.get("heartbeat", 0))
            return data
    except (OSError, UnsafePathError, ValueError, TypeError):  # UnicodeDecodeError is a ValueError
        pass
    return None


def holder_alive(
    data: dict[str, Any], *, now: float | None = None, host: str | None = None, stale_after_s: float = STALE_AFTER_S
) -> bool:
    """Whether a lock's content (``pid``, ``host``, ``started``, ``heartbeat``) names a live owner.

    On this host (``host``, default the real hostname) the owner's process must run with the same start identity;
    on another host only the heartbeat can tell, so it must be under ``stale_after_s`` old, and not more than
    :data:`MAX_AHEAD_S` in the future (a heartbeat far ahead would otherwise keep a scribbled lock alive for years).
    """
    try:
        pid = int(data.get("pid", -1))
        age = (time.time() if now is None else now) - float(data.get("heartbeat", 0))
    except (TypeError, ValueError):
        return False
    if data.get("host") != (host or socket.gethostname()):
        return -MAX_AHEAD_S <= age < stale_after_s
    started = data.get("started")
    if pid <= 0 or (pid == 1 and started is None):
        # kill(0)/kill(-1) ask about process groups; pid 1 always runs, so only a genuine holder's start identity
        # (a container's main process, which writes one) tells it from a scribbled {"pid": 1}
        return False
    return _pid_running(pid) and (started is None or started == process_start(pid))


def lock_alive(job_dir: Path, *, now: float | None = None) -> bool:
    """Whether ``job.lock`` in ``job_dir`` belongs to a live owner."""
    data = _read_lock(job_dir / LOCK_FILE)
    return data is not None and holder_alive(data, now=now)


class JobLock:
    """Hold a job's lock while it runs, refreshing the heartbeat in a daemon thread.

    Taking the lock is serialized by ``flock`` on a guard file, so two processes (or threads) that both find a stale
    lock cannot both take it; a token in the lock lets the owner release or refresh only its own lock.

    Raises:
        JobLocked: On enter, when another live process holds the lock.
    """

    def __init__(self, job_dir: Path) -> None:
        self.path = job_dir / LOCK_FILE
        self.token = uuid.uuid4().hex
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _payload(self) -> dict[str, object]:
        return {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": process_start(os.getpid()),
            "heartbeat": time.time(),
            "token": self.token,
        }

    def _owned(self) -> bool:
        data = _read_lock(self.path)
        return data is not None and data.get("token") == self.token

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                if self._owned():
                    write_json(self.path, self._payload(), beneath=self.path.parent)
            except (OSError, UnsafePathError):
                logger.warning("could not refresh %s", self.path)

    def __enter__(self) -> JobLock:
        job_dir = self.path.parent
        fd = open_lock_file(self.path.with_name(f".{LOCK_FILE}.guard"), beneath=job_dir)
        try:
            self._take_guard(fd)
            try:
                if lock_alive(job_dir):
                    data = _read_lock(self.path) or {}
                    raise JobLocked(
                        f"Job {job_dir} is running elsewhere (pid {data.get('pid')} on {data.get('host')}).",
                        "wait for it to finish, or stop that process; a lock older than 60 s on another host is "
                        "ignored.",
                    )
                write_json(self.path, self._payload(), beneath=job_dir)  # a stale lock (its owner is gone) is replaced
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        self._thread = threading.Thread(target=self._beat, name=f"joblock-{self.path.parent.name}", daemon=True)
        self._thread.start()
        return self

    def _take_guard(self, fd: int) -> None:
        """``flock`` the guard, waiting at most :data:`GUARD_WAIT_S`: a script may hold it to stall the host."""
        if not flock_within(fd, GUARD_WAIT_S):
            raise JobLocked(
                f"Job {self.path.parent}: its lock guard stayed held for {GUARD_WAIT_S:.0f} s.",
                "stop whatever holds it (a leftover script process), or delete the guard file and retry.",
            )

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
        if self._owned():
            self.path.unlink(missing_ok=True)
