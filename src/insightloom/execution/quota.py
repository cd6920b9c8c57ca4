"""The job-folder quota (settings ``max_job_mb`` and ``max_job_files``), counted without following links and watched
while a script runs.

A check after the script ends lets one 600-second script write gigabytes first, so the runners walk the job folder
on a host thread during the run and stop the script (as its timeout would: the whole sandboxed process tree) about
a second after it crosses either cap. The files it wrote stay; the result names the cap and the setting.

The walk opens every folder relative to its parent's descriptor with ``O_NOFOLLOW`` and ``lstat``s the entries, so
a link a script planted (to ``/``, another job, a FIFO) is never entered, opened or counted. Its cost is one
``fstatat`` per file and it stops counting once past ``max_job_files``, so it is bounded by the file cap itself.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
#: Folders deeper than this are counted as one file each and not entered (one descriptor is open per level).
MAX_DEPTH = 256
#: The first walk waits this long: most scripts end before it and pay nothing.
FIRST_CHECK_S = 0.25
#: How often the filesystem's usage is read between walks (one ``statvfs``).
TICK_S = 0.2
#: A walk starts no sooner than this many walk-times after the last one ended (at most a quarter of one core).
WALK_SPACING = 3.0
#: The folder is walked at least this often whatever the filesystem shows, and at most a twentieth of the time.
FULL_WALK_EVERY_S = 5.0
FULL_WALK_SPACING = 20.0
_MB = 1024 * 1024


def job_usage(root: Path, stop_after_files: int | None = None) -> tuple[int, int]:
    """(bytes, files) of the regular files in the job folder, never through a link; stops once past the cap.

    Args:
        root: The job folder (the host's own path; everything below it is hostile).
        stop_after_files: Stop counting once more files than this were seen (the answer is then a lower bound).
    """
    size = files = 0
    try:
        top = os.open(root, _DIR_FLAGS)
    except OSError:
        return 0, 0
    stack: list[tuple[int, list[str]]] = [(top, [])]  # (folder fd, subfolders not yet entered): one fd per level
    try:
        size, files = _list(top, stack[-1][1], size, files, stop_after_files)
        while stack and (stop_after_files is None or files <= stop_after_files):
            fd, pending = stack[-1]
            if not pending:
                os.close(stack.pop()[0])
                continue
            name = pending.pop()
            if len(stack) >= MAX_DEPTH:
                files += 1  # too deep to enter: still counts against the file cap
                continue
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue  # removed meanwhile, or swapped for a link (O_NOFOLLOW refuses it)
            stack.append((child, []))
            size, files = _list(child, stack[-1][1], size, files, stop_after_files)
    finally:
        for fd, _pending in stack:
            os.close(fd)
    return size, files


def _list(fd: int, subdirs: list[str], size: int, files: int, stop_after_files: int | None) -> tuple[int, int]:
    """Add the regular files directly in folder ``fd`` to the running totals and its subfolders to ``subdirs``."""
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        subdirs.append(entry.name)
                    elif entry.is_file(follow_symlinks=False):
                        size += entry.stat(follow_symlinks=False).st_size
                        files += 1
                except OSError:
                    continue  # removed while we looked
                if stop_after_files is not None and files > stop_after_files:
                    break
    except OSError:
        pass
    return size, files


def quota_problem(root: Path, max_mb: float | None, max_files: int | None, *, stopped: bool = False) -> str | None:
    """What is over quota in the job folder, with the fix, or None when within both caps.

    Args:
        root: The job folder.
        max_mb: The ``max_job_mb`` cap, or None for no cap on bytes.
        max_files: The ``max_job_files`` cap, or None for no cap on files.
        stopped: The runner stopped the script for this (worded as such), rather than finding it after the end.
    """
    size, files = job_usage(root, max_files)
    return describe_overage(size, files, max_mb, max_files, stopped=stopped)


def describe_overage(
    size: int, files: int, max_mb: float | None, max_files: int | None, *, stopped: bool = False
) -> str | None:
    """The tool error for a job folder of ``size`` bytes and ``files`` files, naming the cap and its setting."""
    when = "passed" if stopped else "holds"
    then = " while the script ran, so the runner stopped the script (the files it wrote are kept)" if stopped else ""
    if max_files is not None and files > max_files:
        return (
            f"Quota exceeded: the job folder {when} more than {max_files:,} files (setting max_job_files){then}. "
            "Fix: delete the files the last script made that the report does not need, and write fewer, larger "
            "files (one CSV or Parquet instead of one file per row); if the job truly needs more, raise "
            "max_job_files in the config file."
        )
    if max_mb is not None and size > max_mb * _MB:
        return (
            f"Quota exceeded: the job folder {when} {size / _MB:,.0f} MB, over {max_mb:,.0f} MB (setting "
            f"max_job_mb){then}. Fix: delete large intermediate files the last script wrote and keep only what the "
            "report needs; if the job truly needs more, raise max_job_mb in the config file."
        )
    return None


@dataclass(frozen=True)
class _FsUsage:
    """What the job folder's whole filesystem uses (``statvfs``: a few microseconds, whatever the folder holds)."""

    bytes: int
    inodes: int | None  # None where the filesystem does not count inodes (btrfs)


def _fs_usage(root: Path) -> _FsUsage | None:
    try:
        vfs = os.statvfs(root)
    except OSError:
        return None
    inodes = vfs.f_files - vfs.f_ffree if vfs.f_files else None
    return _FsUsage((vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize, inodes)


@dataclass(frozen=True)
class _Walked:
    """The last walk: the filesystem's usage just before it, and what it counted in the job folder."""

    fs: _FsUsage | None
    size: int
    files: int
    ended: float
    spent: float


class QuotaWatch:
    """Watch the job folder on a thread while a script runs; call ``stop`` once it is over quota.

    Walking 20,000 files costs a few hundred milliseconds here (one ``fstatat`` each), too much to repeat every
    second for a whole run. So every ``TICK_S`` the watcher reads the filesystem's usage (``statvfs``), and walks
    the job folder only when the filesystem grew by more than the job's headroom since the last walk (it may then
    be over quota), and at least every ``FULL_WALK_EVERY_S`` for what the filesystem does not show (hard links,
    sparse files, compression). Growth elsewhere on the disk only causes extra walks, never a missed crossing.
    Use as a context manager around the wait for the script's report; with neither cap set it starts no thread.

    Args:
        root: The job folder.
        max_mb: ``max_job_mb``, or None.
        max_files: ``max_job_files``, or None.
        stop: Ends the script (tells its supervisor); called at most once, from the watcher thread.
    """

    def __init__(self, root: Path, max_mb: float | None, max_files: int | None, stop: Callable[[], object]) -> None:
        self.root = Path(root)
        self.max_mb = max_mb
        self.max_files = max_files
        self._stop = stop
        self.problem: str | None = None
        self.walks = 0
        self.walk_s = 0.0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> QuotaWatch:
        if self.max_mb is not None or self.max_files is not None:
            self._thread = threading.Thread(target=self._loop, name="insightloom-quota-watch", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        last: _Walked | None = None
        wait = FIRST_CHECK_S
        while not self._done.wait(wait):
            wait = TICK_S
            if last is not None and not self._walk_due(last):
                continue
            last = self._walk()
            if self.problem is not None:
                with contextlib.suppress(OSError):  # the script may have ended (and its channel closed) meanwhile
                    self._stop()
                return

    def _walk_due(self, last: _Walked) -> bool:
        """Whether the job folder may be over quota since the last walk (walks spaced to bound their cost)."""
        now = time.monotonic()
        if now < last.ended + last.spent * WALK_SPACING:
            return False
        if now >= last.ended + max(FULL_WALK_EVERY_S, last.spent * FULL_WALK_SPACING):
            return True
        fs = _fs_usage(self.root)
        if fs is None or last.fs is None:
            return True
        if self.max_mb is not None and fs.bytes - last.fs.bytes > self.max_mb * _MB - last.size:
            return True
        if self.max_files is not None:
            if fs.inodes is None or last.fs.inodes is None:
                return True
            return fs.inodes - last.fs.inodes > self.max_files - last.files
        return False

    def _walk(self) -> _Walked:
        fs = _fs_usage(self.root)  # before the walk: what is written meanwhile counts as growth next time
        began = time.perf_counter()
        size, files = job_usage(self.root, self.max_files)
        spent = time.perf_counter() - began
        self.walks += 1
        self.walk_s += spent
        self.problem = describe_overage(size, files, self.max_mb, self.max_files, stopped=True)
        return _Walked(fs, size, files, time.monotonic(), spent)
