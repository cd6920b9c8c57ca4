"""The CLI's job registry: every job folder the CLI made, wherever it is, so ``insightloom jobs`` lists them all.

``--job-dir`` puts a job anywhere, and the artifacts folder follows the working directory and the config, so the CLI
records each folder it makes in one small JSON file in the user's data directory (the ``jobs_registry`` setting,
``INSIGHTLOOM_JOBS_REGISTRY``). Only the host CLI writes it: each writer holds an ``flock`` on a guard file beside it
and replaces the file atomically, so concurrent runs lose no entry and a reader never sees half a file.

An entry names a job folder, which the job's scripts may rewrite, so it is believed only as far as the host can
check it: an absolute path with no link on the way, to a real folder whose ``job.json`` is a regular file giving the
id the CLI recorded. Anything else is skipped, and an entry whose folder (or its job.json) is gone is pruned.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import BadInputError, UnsafePathError
from .fileio import flock_within, open_lock_file, read_text, write_json
from .jobs import iter_jobs
from .storage.ids import JOB_ID_RE, job_id_of
from .timeutil import utc_now

logger = logging.getLogger(__name__)

#: The most entries kept (the oldest are dropped): ``insightloom jobs`` reads one job.json per entry.
MAX_ENTRIES = 10_000
#: A registry of MAX_ENTRIES is about 1.5 MB; anything much bigger is not one.
_MAX_REGISTRY_BYTES = 8 * 1024 * 1024
#: job.json is a few hundred bytes; a script may have grown it to slow the listing down.
_MAX_STATUS_BYTES = 256 * 1024
#: How long a writer waits for another CLI run's write to finish.
LOCK_WAIT_S = 10.0


@dataclass(frozen=True)
class ListedJob:
    """A job folder and its job.json, as ``insightloom jobs`` and a single-user ``serve`` show it.

    Attributes:
        id: The job's id (for a registry entry, the one the CLI recorded, which job.json agrees with).
        root: The absolute job folder.
        status: Its job.json (written by the job: display it, never follow it).
    """

    id: str
    root: Path
    status: dict[str, Any]


def record_job(registry: Path, job_id: str, root: Path) -> None:
    """Add a job folder the CLI just made; folders that are gone are pruned on the way.

    A failure is logged, never raised: a registry that cannot be written must not stop the job.
    """
    try:
        with _locked(registry):
            entries = [e for e in _read_entries(registry) if e.get("path") != str(root) and not _gone(e)]
            entries.append({"id": job_id, "path": str(root), "recorded_at": utc_now()})
            _write_entries(registry, entries[-MAX_ENTRIES:])
    except (OSError, UnsafePathError) as exc:
        logger.warning(
            "Could not record job %s in the job registry %s (%s): `insightloom jobs` will not list it. Fix: make "
            "that folder writable, or point INSIGHTLOOM_JOBS_REGISTRY (or jobs_registry in the config) at a file "
            "you can write.",
            job_id,
            registry,
            exc,
        )


def registered_jobs(registry: Path, *, prune: bool = False) -> list[ListedJob]:
    """The registry's jobs that pass every check, in the order they were recorded.

    Args:
        registry: The registry file (missing: no jobs).
        prune: Also drop the entries whose folder is gone from the file (the CLI's ``jobs``; a server only reads).
    """
    found, gone = [], 0
    for entry in _read_entries(registry):
        if _gone(entry):
            gone += 1
        elif (job := _checked(entry)) is not None:
            found.append(job)
    if prune and gone:
        _prune(registry)
    return found


class RegistryIndex:
    """The registry's entries by id, read again only when the file changed: a server looks a job up per request.

    Args:
        registry: The registry file (read only: pruning it is the CLI's).
    """

    def __init__(self, registry: Path) -> None:
        self.registry = registry
        #: (the file's inode, mtime and size; its entries by id), swapped as one: threads share the index.
        self._cache: tuple[tuple[int, int, int] | None, dict[str, dict[str, Any]]] = (None, {})

    def find(self, job_id: str) -> Path | None:
        """The folder recorded for ``job_id`` when it passes every check now, else None."""
        entry = self._by_id().get(job_id)
        job = _checked(entry) if entry is not None else None
        return job.root if job is not None else None

    def jobs(self) -> list[ListedJob]:
        """Every registered job that passes every check."""
        return registered_jobs(self.registry)

    def _by_id(self) -> dict[str, dict[str, Any]]:
        try:
            info = os.stat(self.registry)
        except OSError:
            return {}
        key = (info.st_ino, info.st_mtime_ns, info.st_size)  # an atomic replace is a new inode
        cached_key, by_id = self._cache
        if key != cached_key:
            by_id = {str(e.get("id")): e for e in _read_entries(self.registry)}
            self._cache = (key, by_id)
        return by_id


def known_jobs(artifacts: Path, registry: Path | None) -> list[ListedJob]:
    """The jobs in the artifacts folder and those the registry holds, each folder once, oldest first."""
    jobs: dict[Path, ListedJob] = {}
    for folder, status in iter_jobs(artifacts):
        try:  # the id as the folder gives it: job.json's alone may have been rewritten by a script
            job_id = job_id_of(folder, status.get("id"))
        except BadInputError:
            job_id = f"{folder.name} (job.json id refused)"
        jobs[folder.resolve()] = ListedJob(job_id, folder.resolve(), status)
    for job in registered_jobs(registry, prune=True) if registry is not None else []:
        jobs.setdefault(job.root, job)
    return sorted(jobs.values(), key=lambda job: (str(job.status.get("created_at") or ""), job.id))


def _read_entries(registry: Path) -> list[dict[str, Any]]:
    """The registry's entries as written (unchecked); a missing file has none, an unreadable one is logged."""
    try:
        data = json.loads(read_text(registry, beneath=registry.parent, max_bytes=_MAX_REGISTRY_BYTES))
    except FileNotFoundError:
        return []
    except (OSError, UnsafePathError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        logger.warning("Ignoring the job registry %s: %s. It is written again by the next run.", registry, exc)
        return []
    entries = data.get("jobs") if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _write_entries(registry: Path, entries: list[dict[str, Any]]) -> None:
    write_json(registry, {"version": 1, "jobs": entries}, beneath=registry.parent)


def _prune(registry: Path) -> None:
    try:
        with _locked(registry):  # read again under the lock: another run may have added a job since
            entries = _read_entries(registry)
            kept = [e for e in entries if not _gone(e)]
            if len(kept) < len(entries):
                _write_entries(registry, kept)
    except (OSError, UnsafePathError) as exc:
        logger.warning("Could not prune the job registry %s: %s", registry, exc)


def _path_of(entry: dict[str, Any]) -> Path | None:
    """The entry's folder when it is an absolute, normalized path without a NUL, else None."""
    raw = entry.get("path")
    if not isinstance(raw, str) or "\0" in raw or not os.path.isabs(raw) or os.path.normpath(raw) != raw:
        return None
    return Path(raw)


def _gone(entry: dict[str, Any]) -> bool:
    """Whether the entry's job is gone: its folder, or the folder's job.json (a malformed entry is only skipped)."""
    path = _path_of(entry)
    if path is None:
        return False
    try:
        os.lstat(path / "job.json")
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


def _checked(entry: dict[str, Any]) -> ListedJob | None:
    """The entry as a job when its folder is real and its job.json gives the recorded id, else None (logged)."""
    root, job_id = _path_of(entry), entry.get("id")
    if root is None or not isinstance(job_id, str) or not JOB_ID_RE.fullmatch(job_id):
        logger.debug("job registry: skipping a malformed entry %r", entry)
        return None
    status, why = _status_of(root, job_id)
    if status is None:
        logger.warning("job registry: skipping %s: %s", root, why)
        return None
    return ListedJob(job_id, root, status)


def _status_of(root: Path, job_id: str) -> tuple[dict[str, Any] | None, str]:
    """``root``'s job.json when the folder is real and it gives ``job_id``, else None and why not."""
    try:
        # The path was resolved when it was recorded, so any difference now is a link put on the way since.
        if not stat.S_ISDIR(os.lstat(root).st_mode) or os.path.realpath(root) != str(root):
            return None, "it is a symbolic link or not a folder"
        status = json.loads(read_text(root / "job.json", beneath=root, max_bytes=_MAX_STATUS_BYTES))
    except (OSError, ValueError, UnsafePathError) as exc:  # UnicodeDecodeError is a ValueError
        return None, f"no readable job.json ({getattr(exc, 'message', exc)})"
    if not isinstance(status, dict):
        return None, "job.json is not a job's status"
    try:
        recorded = job_id_of(root, status.get("id"))
    except BadInputError as exc:
        return None, exc.message
    if recorded != job_id:
        return None, f"job.json gives the id {recorded}, not {job_id} as recorded"
    return status, ""


@contextlib.contextmanager
def _locked(registry: Path) -> Iterator[None]:
    """Hold the registry's guard file (``<registry>.lock``) exclusively, waiting at most :data:`LOCK_WAIT_S`.

    Raises:
        OSError: The folder cannot be made, or the lock stayed held (``ETIMEDOUT``).
        UnsafePathError: The guard file is a link or not a regular file.
    """
    registry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # it lists the user's job folders
    fd = open_lock_file(registry.with_name(registry.name + ".lock"), beneath=registry.parent)
    try:
        if not flock_within(fd, LOCK_WAIT_S):
            raise OSError(errno.ETIMEDOUT, f"its lock stayed held for {LOCK_WAIT_S:.0f} s")
        yield
    finally:
        os.close(fd)  # closing releases the flock
