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
import fcntl
import hashlib
import io
import json
import os
import secrets
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

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
    with atomic_writer(path, beneath=beneath) as handle:
        for chunk in chunks:
            digest.update(chunk)
            handle.write(chunk)
    return digest.hexdigest()


@contextlib.contextmanager
def atomic_writer(path: Path, *, beneath: Path) -> Iterator[BinaryIO]:
    """A binary handle on a temp file beside ``path``, renamed over it when the block ends without an error.

    For writers that stream (a Parquet writer fed in chunks): as :func:`write_chunks_atomic`, nothing is written
    through a link, and a failed block leaves no file behind.

    Raises:
        UnsafePathError: A folder below ``beneath`` is a symbolic link, or ``path`` is outside ``beneath``.
    """
    with _parent_dir(path, beneath, create=True) as (dir_fd, name):
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                yield handle
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise


@contextlib.contextmanager
def open_regular(path: Path, *, beneath: Path, max_bytes: int | None = None) -> Iterator[tuple[io.BufferedReader, int]]:
    """``path`` opened for binary reading without following a link, with its size.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        UnsafePathError: It or a folder below ``beneath`` is a link, it is not a regular file (a planted FIFO or
            device), or it is larger than ``max_bytes``.
    """
    handle, size = open_regular_handle(path, beneath=beneath, max_bytes=max_bytes)
    with handle:
        yield handle, size


def open_regular_handle(path: Path, *, beneath: Path, max_bytes: int | None = None) -> tuple[io.BufferedReader, int]:
    """As :func:`open_regular`, but the caller closes the handle: for a download streamed after its route returns.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        UnsafePathError: As for :func:`open_regular`.
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
    return os.fdopen(fd, "rb"), info.st_size


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


#: How deep a copied tree may nest: job folders are shallow, and each level holds a descriptor open while it copies.
MAX_COPY_DEPTH = 32
_COPY_CHUNK = 1024 * 1024


class _CopyCap:
    """The bytes a copy may still write, so a tree a script filled cannot fill the host's temporary folder."""

    def __init__(self, max_bytes: int | None) -> None:
        self.max_bytes = max_bytes
        self.copied = 0

    def take(self, size: int, path: Path) -> None:
        self.copied += size
        if self.max_bytes is not None and self.copied > self.max_bytes:
            raise UnsafePathError(
                f"{path}: the copy holds more than the {self.max_bytes:,} bytes it may take.",
                "delete the large files a script left in the job folder, then try again.",
            )


def _copy_refused(path: Path, why: str) -> UnsafePathError:
    return UnsafePathError(
        f"{path} {why}, so the host will not copy it (a link may point into another job's folder).",
        f"remove {path} from the job folder (a script may have planted it), put back the real file or folder, "
        "and try again.",
    )


def _open_beneath(path: Path, beneath: Path) -> int:
    """A read-only, non-blocking fd of ``path`` (a file, a folder, or ``beneath`` itself), reached without links."""
    if os.path.abspath(path) == os.path.abspath(beneath):
        return os.open(beneath, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the job folder itself is the host's
    return _open_file(path, beneath, os.O_RDONLY | os.O_NONBLOCK)


def _entries(dir_fd: int) -> list[tuple[str, str]]:
    """(name, kind) of each entry of the folder open as ``dir_fd``, sorted (kinds as :func:`_entry_kind` says)."""
    with os.scandir(dir_fd) as entries:  # the folder already opened without following a link, not its name again
        return sorted((entry.name, _entry_kind(entry)) for entry in entries)


def _copy_open(fd: int, path: Path, out_dir: int, name: str, depth: int, cap: _CopyCap) -> None:
    """Copy the open file or folder ``fd`` (the job's ``path``) to ``name`` in the folder ``out_dir``."""
    info = os.fstat(fd)  # the type of what was opened, not of what the listing saw: a swap in between is caught
    if stat.S_ISREG(info.st_mode):
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=out_dir)
        with os.fdopen(out, "wb") as handle:
            while chunk := os.read(fd, _COPY_CHUNK):
                cap.take(len(chunk), path)
                handle.write(chunk)
            handle.flush()
            os.utime(handle.fileno(), ns=(info.st_atime_ns, info.st_mtime_ns))
        return
    if not stat.S_ISDIR(info.st_mode):
        return  # a FIFO, socket or device holds no data to copy, and reading one could block the host
    if depth >= MAX_COPY_DEPTH:
        raise _copy_refused(path, f"is nested more than {MAX_COPY_DEPTH} folders deep")
    os.mkdir(name, 0o755, dir_fd=out_dir)
    sub = os.open(name, _DIR_FLAGS, dir_fd=out_dir)
    try:
        for child, kind in _entries(fd):
            if kind == "link":
                raise _copy_refused(path / child, "is a symbolic link")
            if kind == "other":
                continue  # never opened: opening a device can have effects of its own
            try:
                child_fd = os.open(child, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as exc:
                if exc.errno in _LINK_ERRNOS:  # swapped for a link since the listing
                    raise _copy_refused(path / child, "is a symbolic link") from exc
                raise
            try:
                _copy_open(child_fd, path / child, sub, child, depth + 1, cap)
            finally:
                os.close(child_fd)
    finally:
        os.close(sub)


def copy_regular_tree(src: Path, dest: Path, *, beneath: Path, max_bytes: int | None = None) -> int:
    """Copy the file or folder ``src`` of a job to ``dest``: regular files and folders only, never through a link.

    A script may replace a job folder (``data/``, ``code/``) or anything inside it with a link to another job's
    folder or files; a copy that followed it would hand them to whoever reads the copy. So ``src`` is reached from
    ``beneath`` one component at a time with ``O_NOFOLLOW``, each folder is listed through its own descriptor,
    each file is opened ``O_NOFOLLOW | O_NONBLOCK`` and copied only when ``fstat`` says it is a regular file, and
    every write goes below ``dest`` through descriptors, with new names only. FIFOs, sockets and devices are left
    out. Only the file contents and modification times are copied. A refused copy leaves what it had copied in
    ``dest``, for the caller to remove with its temporary folder.

    Args:
        src: The file or folder to copy, inside ``beneath``.
        dest: Where the copy goes; it must not exist, its parent must (a folder of the host's, such as a
            ``tempfile.mkdtemp`` folder).
        beneath: The job folder.
        max_bytes: The most the copy may hold (None: no cap).

    Returns:
        The bytes copied.

    Raises:
        FileNotFoundError: ``src`` does not exist.
        FileExistsError: ``dest`` exists.
        UnsafePathError: ``src``, a folder on the way to it or anything below it is a symbolic link (named); the
            tree nests deeper than ``MAX_COPY_DEPTH``; or it holds more than ``max_bytes``.
    """
    fd = _open_beneath(src, beneath)
    cap = _CopyCap(max_bytes)
    try:
        out_dir = os.open(dest.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the host's own folder
        try:
            _copy_open(fd, src, out_dir, dest.name, 0, cap)
        finally:
            os.close(out_dir)
    finally:
        os.close(fd)
    return cap.copied


def list_regular_files(folder: Path, *, beneath: Path) -> list[str]:
    """The names of the regular files directly in ``folder``, sorted; links, folders and special files left out.

    The listing ``glob`` would give, without following a link planted at ``folder`` or on the way to it.

    Raises:
        FileNotFoundError: ``folder`` does not exist.
        UnsafePathError: ``folder`` or a folder between ``beneath`` and it is a symbolic link, or not a folder.
    """
    fd = _open_beneath(folder, beneath)
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise _unsafe(folder, folder.name)
        return [name for name, kind in _entries(fd) if kind == "file"]
    finally:
        os.close(fd)


class FolderEntry(NamedTuple):
    """One entry of a folder as :func:`read_window` lists it: a link is named as a link, never followed."""

    name: str
    kind: str  # "file", "folder", "link" or "other" (a FIFO, socket or device a script planted)


class Window(NamedTuple):
    """What :func:`read_window` found: a window of a regular file's text, or a folder's entries.

    Attributes:
        text: The file's characters in the window (undecodable bytes as U+FFFD); "" for a folder.
        more: Characters (or, for a folder, entries) follow what is returned.
        size: The file's size in bytes when it was opened; 0 for a folder.
        entries: A folder's entries sorted by name, at most ``max_chars`` of them; None for a file.
    """

    text: str
    more: bool
    size: int
    entries: tuple[FolderEntry, ...] | None = None


def _entry_kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "folder"
    return "file" if entry.is_file(follow_symlinks=False) else "other"


def _folder_window(fd: int, max_entries: int) -> Window:
    """The entries of the folder open as ``fd``, read no further than one past ``max_entries``."""
    found: list[FolderEntry] = []
    with os.scandir(fd) as entries:  # the folder already opened without following a link, not its name again
        for entry in entries:
            found.append(FolderEntry(entry.name, _entry_kind(entry)))
            if len(found) > max_entries:
                break
    return Window("", len(found) > max_entries, 0, tuple(sorted(found)[:max_entries]))


def _text_window(handle: io.BufferedReader, offset: int, max_chars: int) -> tuple[str, bool]:
    """``max_chars`` characters from character ``offset``, decoded as they are read; and whether more follow.

    The incremental decoder reads a small chunk at a time, so at most about 4 bytes per character up to the end of
    the window (plus one chunk) are read, however large the file: never the whole file to return a page of it.
    """
    reader = io.TextIOWrapper(handle, encoding="utf-8", errors="replace")
    try:
        skip = offset
        while skip > 0:
            skipped = len(reader.read(min(skip, 1 << 16)))
            if not skipped:
                return "", False
            skip -= skipped
        return reader.read(max_chars), bool(reader.read(1))
    finally:
        reader.detach()  # the caller closes the file


def read_window(path: Path, *, beneath: Path, offset: int = 0, max_chars: int) -> Window:
    """``max_chars`` characters of ``path`` from character ``offset``, or the entries of the folder at ``path``.

    Both are reached from ``beneath`` without following a link (``beneath`` itself names the job folder). A folder
    is listed from the descriptor that was opened, so a folder swapped for a link is never listed through it, and a
    link inside it is listed as a link. A file is read only if it is regular (a FIFO neither blocks nor is read),
    and only up to the end of the window, so a huge file costs no more than the page returned.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        UnsafePathError: ``path`` or a folder below ``beneath`` is a symbolic link, ``path`` is outside
            ``beneath``, or it is neither a regular file nor a folder.
        OSError: It cannot be opened or read (permissions, I/O).
    """
    if os.path.abspath(path) == os.path.abspath(beneath):
        fd = os.open(beneath, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the job folder itself is the host's
    else:
        fd = _open_file(path, beneath, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            return _folder_window(fd, max_chars)
    finally:
        os.close(fd)
    with open_regular(path, beneath=beneath) as (handle, size):  # opened again, with the same checks, as a file
        text, more = _text_window(handle, max(0, offset), max_chars)
    return Window(text, more, size)


def open_lock_file(path: Path, *, beneath: Path) -> int:
    """A read-write descriptor of the regular file ``path`` (created if missing), for ``flock``, never through a link.

    A script can plant a link or a FIFO where the host keeps a lock guard; opening it by name would create the link's
    target outside the job, or block on the FIFO.

    Raises:
        UnsafePathError: ``path`` or a folder below ``beneath`` is a link, or ``path`` is not a regular file.
    """
    fd = _open_file(path, beneath, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, create=True)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePathError(
            f"{path} is not a regular file, so the host will not lock it.", "delete it; the host makes it again."
        )
    return fd


def flock_within(fd: int, wait_s: float) -> bool:
    """Take an exclusive ``flock`` on ``fd``, waiting at most ``wait_s``; False when another holder kept it.

    Bounded, because whoever holds it (a leftover script process, a stuck run) must not stall the host for good.
    """
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


def read_tail(path: Path, *, beneath: Path, max_bytes: int) -> str:
    """The last ``max_bytes`` of ``path`` as text (invalid UTF-8 replaced), or "" when it is missing, linked or special.

    For logs in folders a script can write: a planted FIFO or link answers "" instead of blocking or being followed.
    """
    try:
        with open_regular(path, beneath=beneath) as (handle, size):
            handle.seek(max(0, size - max_bytes))
            return handle.read(max_bytes).decode("utf-8", errors="replace")
    except (OSError, UnsafePathError):
        return ""
