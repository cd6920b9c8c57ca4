"""Host-side file access: atomic writes, and writes, appends and reads that never follow a planted symlink.

Atomic: a reader (another agent, the service, a resumed job) sees the old file or the new one, never half of one.

No-follow: analysis scripts are untrusted and may write anywhere in their job folder, so a script can replace
``code/``, ``plan.md`` or ``events.jsonl`` with a symbolic link to a file outside the job. Every helper that takes
``beneath`` (the job folder) walks from there one component at a time with ``O_NOFOLLOW`` (``openat``), so the host
never writes, appends or reads through such a link: it raises :class:`~insightloom.errors.UnsafePathError`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import secrets
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .errors import UnsafePathError

#: The largest job file the host reads back (notes, reports, metadata): far above what a job writes.
MAX_READ_BYTES = 64 * 1024 * 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LINK_ERRNOS = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)


def _unsafe(path: Path, part: str) -> UnsafePathError:
    return UnsafePathError(
        f"{path}: '{part}' is a symbolic link or not a real folder, so the host will not follow it.",
        "job files and folders must be real ones: remove the link (a script may have planted it) and try again.",
    )


def _parts_below(path: Path, beneath: Path) -> list[str]:
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(beneath))
    parts = list(Path(rel).parts)
    if rel == os.curdir or parts[0] == os.pardir:
        raise UnsafePathError(f"{path} is not inside {beneath}.", "name a file inside the job folder.")
    return parts


@contextlib.contextmanager
def _parent_dir(path: Path, beneath: Path, *, create: bool) -> Iterator[tuple[int, str]]:
    """An fd of ``path``'s folder, reached from ``beneath`` without following links, and ``path``'s last name."""
    parts = _parts_below(path, beneath)
    fd = os.open(beneath, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the job folder itself is the host's
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise _unsafe(path, part) from exc
            except OSError as exc:
                if exc.errno in _LINK_ERRNOS:
                    raise _unsafe(path, part) from exc
                raise
            os.close(fd)
            fd = child
        yield fd, parts[-1]
    finally:
        os.close(fd)


def _open_file(path: Path, beneath: Path, flags: int, *, create: bool = False) -> int:
    with _parent_dir(path, beneath, create=create) as (dir_fd, name):
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in _LINK_ERRNOS:
                raise _unsafe(path, name) from exc
            raise


def write_text_atomic(path: Path, text: str, *, beneath: Path | None = None) -> None:
    """Write ``text`` through a temp file in the same folder, then rename it over ``path``.

    Args:
        path: The file to write; missing folders are created.
        text: The new content (UTF-8).
        beneath: The job folder: no folder between it and ``path`` may be a link. The rename replaces a link at
            ``path`` itself instead of writing through it.

    Raises:
        UnsafePathError: A folder below ``beneath`` is a symbolic link, or ``path`` is outside ``beneath``.
    """
    if beneath is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return
    write_chunks_atomic(path, [text.encode("utf-8")], beneath=beneath)


def write_chunks_atomic(path: Path, chunks: Iterable[bytes], *, beneath: Path) -> str:
    """Write ``chunks`` to ``path`` through a temp file renamed over it, never through a link; returns the SHA-256.

    The rename replaces a link planted at ``path`` itself; a link on a folder on the way raises.

    Raises:
        UnsafePathError: A folder below ``beneath`` is a symbolic link, or ``path`` is outside ``beneath``.
    """
    digest = hashlib.sha256()
    with _parent_dir(path, beneath, create=True) as (dir_fd, name):
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                for chunk in chunks:
                    digest.update(chunk)
                    handle.write(chunk)
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
    return digest.hexdigest()


@contextlib.contextmanager
def open_regular(path: Path, *, beneath: Path, max_bytes: int | None = None) -> Iterator[tuple[io.BufferedReader, int]]:
    """``path`` opened for binary reading without following a link, with its size.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        UnsafePathError: It or a folder below ``beneath`` is a link, it is not a regular file (a planted FIFO or
            device), or it is larger than ``max_bytes``.
    """
    fd = _open_file(path, beneath, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the open itself
    try:  # checked before fdopen, which refuses a folder with its own error and would leak the descriptor
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePathError(
                f"{path} is not a regular file, so the host will not read it.",
                "delete it; the job's own tools write that file again.",
            )
        if max_bytes is not None and info.st_size > max_bytes:
            raise UnsafePathError(
                f"{path} holds {info.st_size:,} bytes, more than the {max_bytes:,} a host read accepts.",
                "shrink or delete it; agents should keep notes and reports short and put data in files of their own.",
            )
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        yield handle, info.st_size


def append_text(path: Path, text: str, *, beneath: Path) -> None:
    """Append ``text`` to ``path`` (created if missing) without following a link at or above it.

    Raises:
        UnsafePathError: ``path`` or a folder below ``beneath`` is a symbolic link.
    """
    fd = _open_file(path, beneath, os.O_WRONLY | os.O_APPEND | os.O_CREAT, create=True)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(text)


def read_text(path: Path, *, beneath: Path, max_bytes: int = MAX_READ_BYTES) -> str:
    """Read ``path`` as UTF-8 without following a link at or above it.

    Only a regular file of at most ``max_bytes`` is read: a script can plant a FIFO (which would block the host's
    read forever) or a device such as ``/dev/zero`` (which never ends) under a name the host reads.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        UnsafePathError: ``path`` or a folder below ``beneath`` is a symbolic link, ``path`` is not a regular
            file, or it is larger than ``max_bytes``.
    """
    with open_regular(path, beneath=beneath, max_bytes=max_bytes) as (handle, _):
        return handle.read(max_bytes).decode("utf-8")  # bounded even if a script appends while the host reads


def is_regular_file(path: Path, *, beneath: Path) -> bool:
    """Whether ``path`` is a regular file reached from ``beneath`` without passing through a symbolic link.

    Opened with ``O_NONBLOCK``, so a planted FIFO answers False instead of blocking the host.
    """
    try:
        fd = _open_file(path, beneath, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, UnsafePathError):
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def file_digest(path: Path, *, beneath: Path) -> str | None:
    """SHA-256 of a regular file reached without following links, or None when it is missing, linked or special."""
    try:
        with open_regular(path, beneath=beneath) as (handle, _):
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except (OSError, UnsafePathError):
        return None


def write_json(path: Path, data: Any, *, beneath: Path | None = None) -> None:
    """Write indented UTF-8 JSON atomically; values JSON does not know (paths, dates) are written as text."""
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n", beneath=beneath)


def read_json(path: Path, *, beneath: Path | None = None) -> Any:
    """Parse a JSON file; with ``beneath``, without following a link at or above it."""
    return json.loads(read_text(path, beneath=beneath) if beneath is not None else path.read_text(encoding="utf-8"))


def iter_real_files(root: Path) -> Iterator[Path]:
    """Every regular file below ``root``, never through a symlink (to a file or a folder) that a script planted."""
    for folder, dirs, names in os.walk(root):  # os.walk does not descend into linked folders
        base = Path(folder)
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
        for name in names:
            path = base / name
            if not path.is_symlink() and path.is_file():
                yield path
