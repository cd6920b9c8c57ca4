"""The default artifact store: the local artifacts folder is the store itself (see :mod:`.base`).

Scripts are untrusted and may plant symbolic links (or FIFOs) anywhere in their job folder, so every read here walks
from the job folder one component at a time without following a link (:mod:`insightloom.fileio`), and listings skip
links to files and folders alike. Records beside the jobs (``<root>/.owners/<job_id>``...) are out of every script's
reach: the sandbox only sees its own job folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ..errors import BadInputError, UnsafePathError
from ..fileio import (
    MAX_READ_BYTES,
    iter_real_files,
    open_regular,
    open_regular_handle,
    write_chunks_atomic,
    write_text_atomic,
)
from ..job_registry import RegistryIndex
from ..joblock import JobLock, lock_alive
from .base import HeldLock, MetaKind, listed
from .ids import JOB_ID_RE, check_job_id, check_relative

#: Every kind of record kept beside the jobs (deleted with the job).
META_KINDS: tuple[MetaKind, ...] = ("owners", "sweeps")


@dataclass
class LocalHeld:
    """A held local lock: ``flock`` + heartbeat keep out a second holder, so the fence never needs to move."""

    fence: int = 0
    lost: threading.Event = field(default_factory=threading.Event)


class LocalStore:
    """Job folders in ``root`` (the artifacts folder); see :class:`~insightloom.storage.base.ArtifactStore`.

    Args:
        root: The artifacts folder (created on first write).
        registry: The CLI's job registry (:mod:`insightloom.job_registry`), for a single-user server: the jobs it
            holds are this store's too, wherever their folder is (``--job-dir``). A job in ``root`` wins over a
            registered one of the same id.
    """

    remote = False

    def __init__(self, root: Path, *, registry: Path | None = None) -> None:
        self.root = root.expanduser().resolve()
        self.uri = str(self.root)
        self._registry = RegistryIndex(registry) if registry is not None else None

    # -- job folders ----------------------------------------------------------------------------------------------

    def job_dir(self, job_id: str) -> Path:
        own = self.root / check_job_id(job_id)
        if self._registry is None or os.path.lexists(own):
            return own
        return self._registry.find(job_id) or own

    def job_ids(self) -> list[str]:
        ids: set[str] = set()
        if self.root.is_dir():
            found = (p.parent for p in self.root.glob("*/job.json"))
            ids = {d.name for d in found if JOB_ID_RE.fullmatch(d.name) and not d.is_symlink()}
        if self._registry is not None:
            ids.update(job.id for job in self._registry.jobs())
        return sorted(ids)

    def open_file(self, job_id: str, relative: str) -> tuple[BinaryIO, int] | None:
        """A listed, regular job file opened without passing through a link, and its size, or None; the caller
        closes it.

        A download streams from this handle: serving the path instead would open it again by name, through a link
        a running script may have swapped in since the check.
        """
        if not listed(relative):
            return None
        try:
            job = self._real_job_dir(job_id)
            return open_regular_handle(self._path(job_id, relative), beneath=job)
        except (OSError, BadInputError):
            return None

    def read_bytes(self, job_id: str, relative: str) -> bytes | None:
        try:
            with self._open(job_id, relative) as handle:
                return handle.read(MAX_READ_BYTES)
        except (OSError, BadInputError):
            return None

    def read_from(self, job_id: str, relative: str, offset: int) -> bytes:
        try:
            with self._open(job_id, relative) as handle:
                handle.seek(offset)
                return handle.read(MAX_READ_BYTES)
        except (OSError, BadInputError):
            return b""

    def list_files(self, job_id: str) -> list[str]:
        job = self.job_dir(job_id)
        if job.is_symlink() or not job.is_dir():
            return []
        found = (path.relative_to(job).as_posix() for path in iter_real_files(job))
        return sorted(p for p in found if listed(p))

    def write_bytes(self, job_id: str, relative: str, data: bytes) -> None:
        """Write atomically (temp file + rename) below the job folder, never through a link a script planted."""
        write_chunks_atomic(self._path(job_id, relative), [data], beneath=self.job_dir(job_id))

    def pull(self, job_id: str) -> Path:
        return self.job_dir(job_id)  # the folder is the store: nothing to bring over

    def push(self, job_id: str) -> int:
        self.job_dir(job_id)
        return 0

    def delete_job(self, job_id: str) -> None:
        job = self.job_dir(job_id)
        if job.is_symlink():  # never delete through a link; remove the link itself
            job.unlink()
        else:
            shutil.rmtree(job, ignore_errors=True)
        for kind in META_KINDS:
            self._meta_path(kind, job_id).unlink(missing_ok=True)

    # -- records beside the jobs ------------------------------------------------------------------------------------

    def read_meta(self, kind: MetaKind, job_id: str) -> str | None:
        try:
            return self._meta_path(kind, job_id).read_text(encoding="utf-8")
        except OSError:
            return None

    def write_meta(self, kind: MetaKind, job_id: str, text: str) -> None:
        write_text_atomic(self._meta_path(kind, job_id), text)

    # -- the job lock -----------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, job_id: str) -> Iterator[HeldLock]:
        with JobLock(self.job_dir(job_id)):
            yield LocalHeld()

    def lock_alive(self, job_id: str) -> bool:
        return lock_alive(self.job_dir(job_id))

    # -- helpers ----------------------------------------------------------------------------------------------------

    def _path(self, job_id: str, relative: str) -> Path:
        """The local path of a job file, once the id and the relative path are known to stay inside the folder."""
        return self.job_dir(job_id).joinpath(*check_relative(relative).split("/"))

    def _meta_path(self, kind: MetaKind, job_id: str) -> Path:
        """``<root>/.<kind>/<job_id>``: ``.owners`` is the folder the service has always kept owners in."""
        if kind not in META_KINDS:
            raise ValueError(f"unknown record kind {kind!r}")
        return self.root / f".{kind}" / check_job_id(job_id)

    @contextlib.contextmanager
    def _open(self, job_id: str, relative: str) -> Iterator[BinaryIO]:
        """A job file opened for reading without following a link; only regular files (never a planted FIFO)."""
        with open_regular(self._path(job_id, relative), beneath=self._real_job_dir(job_id)) as (handle, _):
            yield handle

    def _real_job_dir(self, job_id: str) -> Path:
        """The job's folder, refused when it is a link (the artifacts folder is the host's, but say so by name)."""
        job = self.job_dir(job_id)
        if job.is_symlink():
            raise UnsafePathError(f"{job} is a symbolic link.", "remove the link.")
        return job
