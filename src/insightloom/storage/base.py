"""Where job folders live: the contract every artifact store keeps.

A job always *runs* in a local folder (scripts, the sandbox and DuckDB need real files). The store says where that
folder's durable copy is: the local artifacts folder itself (:class:`~insightloom.storage.local.LocalStore`, the
default), or an S3 prefix (:class:`~insightloom.storage.s3.S3Store`) that workers pull from and push stage outputs
to, and that the API reads to serve job pages, artifacts and events. Beside the jobs, out of every script's reach,
the store keeps small records per job (``owners``: who submitted it; ``sweeps``: when the sweeper last re-queued it).
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Literal, Protocol

#: Records kept beside the jobs, one small text per job id: ``<root>/.<kind>/<job_id>``.
MetaKind = Literal["owners", "sweeps"]
#: Never listed, served or pushed: the lock, and hidden or temporary files (atomic writes use ``.name.tmp``).
LOCK_NAME = "job.lock"


def listed(relative: str) -> bool:
    """Whether a job file (posix path relative to its folder) is an artifact."""
    parts = relative.split("/")
    return parts[-1] != LOCK_NAME and not any(part.startswith(".") for part in parts)


class HeldLock(Protocol):
    """A job lock held by this process.

    Attributes:
        fence: A number that grows with every new holder of this job's lock (a fencing token): a holder that was
            taken over has a smaller one than the lock now shows.
        lost: Set when this process finds that it no longer holds the lock (another holder took it over after a
            missed heartbeat); work under it must stop and write nothing more.
    """

    fence: int
    lost: threading.Event


class ArtifactStore(Protocol):
    """The durable home of job folders.

    Attributes:
        uri: ``/abs/artifacts`` for a local store, ``s3://bucket/prefix`` for S3.
        remote: True when the job folders under :attr:`root` are working copies of a remote store.
        root: The local folder holding one folder per job (the store itself when local, working copies when remote).
    """

    uri: str
    remote: bool
    root: Path

    def job_dir(self, job_id: str) -> Path:
        """The job's local folder (``root / job_id``); it may not exist yet on this machine."""
        ...

    def job_ids(self) -> list[str]:
        """Ids of the job folders in the store that hold a ``job.json``, sorted (oldest first)."""
        ...

    def read_bytes(self, job_id: str, relative: str) -> bytes | None:
        """A job file's bytes from the store, or None when missing (never through a symlink, never outside)."""
        ...

    def read_from(self, job_id: str, relative: str, offset: int) -> bytes:
        """The bytes of a job file after ``offset`` (empty when there are none yet): how event streams tail."""
        ...

    def list_files(self, job_id: str) -> list[str]:
        """The job's real files in the store as sorted posix paths, without the lock or hidden/temporary files."""
        ...

    def write_bytes(self, job_id: str, relative: str, data: bytes) -> None:
        """Write one job file in the store (and the local copy), e.g. ``cancel.request`` from the API."""
        ...

    def pull(self, job_id: str) -> Path:
        """Bring the local copy up to date with the store (only what changed) and return :meth:`job_dir`."""
        ...

    def push(self, job_id: str) -> int:
        """Upload what changed in the local copy (never through a symlink); returns the number of files sent."""
        ...

    def delete_job(self, job_id: str) -> None:
        """Remove a job everywhere (store, local copy and its records beside the jobs)."""
        ...

    def read_meta(self, kind: MetaKind, job_id: str) -> str | None:
        """A record beside the jobs, or None."""
        ...

    def write_meta(self, kind: MetaKind, job_id: str, text: str) -> None:
        """Write a record beside the jobs."""
        ...

    def lock(self, job_id: str) -> AbstractContextManager[HeldLock]:
        """Hold the job's lock across processes and machines while the ``with`` body runs.

        Raises:
            JobLocked: Another live holder has it.
        """
        ...

    def lock_alive(self, job_id: str) -> bool:
        """Whether a live holder (its heartbeat is fresh, or its process runs on this host) has the job's lock."""
        ...
