"""``job.lock``: one process runs a job at a time, across restarts and hosts.

The lock holds the owner's pid, host and a heartbeat. It is alive when its host is this one and the pid runs, or when
another host's heartbeat is under 60 s old. A stale lock is taken over.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from pathlib import Path

from .errors import BadInputError
from .jobs import write_json

logger = logging.getLogger(__name__)
LOCK_FILE = "job.lock"
HEARTBEAT_S = 10.0
STALE_AFTER_S = 60.0


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


def lock_alive(job_dir: Path, *, now: float | None = None) -> bool:
    """Whether ``job.lock`` in ``job_dir`` belongs to a live owner."""
    path = job_dir / LOCK_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if data.get("host") == socket.gethostname():
        pid = int(data.get("pid", -1))
        started = data.get("started")
        return _pid_running(pid) and (started is None or started == process_start(pid))
    return (now or time.time()) - float(data.get("heartbeat", 0)) < STALE_AFTER_S


class JobLock:
    """Hold a job's lock while it runs, refreshing the heartbeat in a daemon thread.

    Raises:
        JobLocked: On enter, when another live process holds the lock.
    """

    def __init__(self, job_dir: Path) -> None:
        self.path = job_dir / LOCK_FILE
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @staticmethod
    def _payload() -> dict[str, object]:
        return {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": process_start(os.getpid()),
            "heartbeat": time.time(),
        }

    def _write(self) -> None:
        write_json(self.path, self._payload())

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                self._write()
            except OSError:
                logger.warning("could not refresh %s", self.path)

    def __enter__(self) -> JobLock:
        for _ in range(2):
            try:  # O_EXCL makes taking the lock atomic between threads and processes
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if lock_alive(self.path.parent):
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                    raise JobLocked(
                        f"Job {self.path.parent} is running elsewhere (pid {data.get('pid')} on {data.get('host')}).",
                        "wait for it to finish, or stop that process; a lock older than 60 s on another host is "
                        "ignored.",
                    ) from None
                self.path.unlink(missing_ok=True)  # stale: its owner is gone
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self._payload(), fh)
            break
        self._thread = threading.Thread(target=self._beat, name=f"joblock-{self.path.parent.name}", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
        self.path.unlink(missing_ok=True)
