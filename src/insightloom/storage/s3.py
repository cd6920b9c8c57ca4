"""The S3 artifact store: job folders under ``s3://bucket/prefix``, run from local working copies.

Keys are ``<prefix>/<job_id>/<relative>``; records beside the jobs are ``<prefix>/.<kind>/<job_id>``; the job lock is
``<prefix>/<job_id>/.lock`` (:mod:`.s3lock`). A worker :meth:`~S3Store.pull` s a job into ``work_dir/<job_id>``, runs
it there, and :meth:`~S3Store.push` es what changed; the API reads objects directly (:meth:`~S3Store.read_from` tails
``events.jsonl`` with a ranged GET).

One bad name never fails a whole sync: a push skips, with a warning, a local file whose name cannot be a key (a
script chose it: a backslash, bytes that are not UTF-8, a key too long), and a pull skips an object it cannot write
(S3 can hold ``charts`` and ``charts/x.png`` at once; locally the folder wins, and the file ``charts`` is skipped).

What was last sent or fetched is kept per job in ``work_dir/.manifests/<job_id>.json`` (relative path → ETag and
SHA-256), outside the job folder, so a script cannot edit it. Working copies hold untrusted scripts' output: pushes
read files without following links, and pulls replace a planted link instead of writing through it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import logging
import os
import shutil
import stat
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from botocore.exceptions import ClientError

from ..errors import BadInputError, ConfigError, UnsafePathError
from ..fileio import (
    MAX_READ_BYTES,
    file_digest,
    iter_real_files,
    open_regular,
    write_chunks_atomic,
    write_json,
)
from ..joblock import HEARTBEAT_S, STALE_AFTER_S
from .base import MetaKind, listed
from .ids import check_job_id, check_relative
from .s3lock import LOCK_CLIENT_CONFIG, LOCK_OBJECT, S3JobLock, error_code, is_missing, lock_alive

logger = logging.getLogger(__name__)
#: The largest object a pull downloads or a push uploads: far above what a job writes (see ``max_job_mb``).
MAX_OBJECT_BYTES = 2 * 1024**3
#: S3's limit on the length of a key, in UTF-8 bytes.
MAX_KEY_BYTES = 1024
#: Where the per-job manifests live inside ``work_dir``; hidden, and not a job id, so it is never taken for a job.
MANIFESTS_DIR = ".manifests"
META_KINDS: tuple[MetaKind, ...] = ("owners", "sweeps")
_MAX_META_BYTES = 64 * 1024
_CHUNK = 1024 * 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Why a pulled object may not fit the working copy: a folder where the file goes, a name the file system refuses.
_UNWRITABLE_ERRNOS = frozenset({errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG, errno.EILSEQ})
Manifest = dict[str, dict[str, str]]


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix`` → ``("bucket", "some/prefix")`` (the prefix may be empty).

    Raises:
        ConfigError: It is not an ``s3://`` URI with a bucket, or its prefix has empty, ``.`` or ``..`` parts.
    """
    bucket, _, prefix = uri.removeprefix("s3://").partition("/") if uri.startswith("s3://") else ("", "", "")
    prefix = prefix.strip("/")
    try:
        if prefix:
            check_relative(prefix)
    except BadInputError:
        bucket = ""
    if not bucket:
        raise ConfigError(
            f"{uri!r} is not an S3 location for artifacts.",
            "set INSIGHTLOOM_ARTIFACTS to s3://bucket or s3://bucket/prefix.",
        )
    return bucket, prefix


def _real_parents(job_dir: Path, relative: str) -> None:
    """Remove what stands where the folders of ``relative`` belong, so a write lands in real folders.

    That is a link a script planted, or a file (an older object of the same name, or a script's): the object's key
    says a folder is there. The walk goes by folder descriptors and never follows a link, so nothing outside the
    job folder is touched even if a script swaps a folder for a link meanwhile (the write then refuses).
    """
    fd = os.open(job_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in relative.split("/")[:-1]:
            try:
                if not stat.S_ISDIR(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    os.unlink(part, dir_fd=fd)
                    return  # the folders from here down are made by the write
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                return  # missing (the write makes it), or changed meanwhile (the write refuses it)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


def _write_local(job_dir: Path, relative: str, chunks: Iterable[bytes]) -> str:
    """Write a job file from ``chunks`` atomically into real folders (whatever stands in their place is removed)."""
    _real_parents(job_dir, relative)
    return write_chunks_atomic(job_dir / relative, chunks, beneath=job_dir)


class S3Store:
    """Job folders in S3, with local working copies in ``work_dir`` (see the module docstring).

    Args:
        uri: ``s3://bucket`` or ``s3://bucket/prefix``.
        work_dir: The local folder holding one working copy per job, and the manifests.
        client: A boto3 S3 client; by default one from a fresh session, so ``AWS_ENDPOINT_URL_S3`` and the usual
            credential chain apply.
        lock_client: The client for the job lock; by default ``client`` when one is given, else one from the same
            session with short timeouts (:data:`~insightloom.storage.s3lock.LOCK_CLIENT_CONFIG`).
        lock_host: The machine name written into job locks (default the hostname).
        heartbeat_s: Seconds between job-lock heartbeats.
        stale_after_s: Age after which another host's job lock is taken over.
    """

    remote = True

    def __init__(
        self,
        uri: str,
        *,
        work_dir: Path,
        client: Any | None = None,
        lock_client: Any | None = None,
        lock_host: str | None = None,
        heartbeat_s: float = HEARTBEAT_S,
        stale_after_s: float = STALE_AFTER_S,
    ) -> None:
        self.bucket, self.prefix = parse_s3_uri(uri)
        self.uri = f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        self.root = Path(work_dir)
        if client is None:
            import boto3

            session = boto3.session.Session()
            client = session.client("s3")
            lock_client = lock_client or session.client("s3", config=LOCK_CLIENT_CONFIG)
        self.client = client
        self.lock_client = lock_client or client
        self._lock_options: dict[str, Any] = {
            "host": lock_host,
            "heartbeat_s": heartbeat_s,
            "stale_after_s": stale_after_s,
        }
        self._manifest_lock = threading.Lock()

    # keys and manifests

    def _base(self) -> str:
        return f"{self.prefix}/" if self.prefix else ""

    def _key(self, job_id: str, relative: str | None = None) -> str:
        check_job_id(job_id)
        return f"{self._base()}{job_id}/" + (check_relative(relative) if relative is not None else "")

    def _manifest_path(self, job_id: str) -> Path:
        return self.root / MANIFESTS_DIR / f"{check_job_id(job_id)}.json"

    def _load_manifest(self, job_id: str) -> Manifest:
        try:
            data = json.loads(self._manifest_path(job_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _record(self, job_id: str, updates: Manifest) -> None:
        """Merge what was just sent or fetched into the job's manifest (threads push and pull at once)."""
        if not updates:
            return
        with self._manifest_lock:
            manifest = self._load_manifest(job_id)
            manifest.update(updates)
            write_json(self._manifest_path(job_id), manifest)

    def _objects(self, job_id: str) -> Iterator[tuple[str, str, int]]:
        """``(relative, etag, size)`` of every object under the job's prefix whose name is a valid relative path."""
        base = self._key(job_id)
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=base):
            for obj in page.get("Contents", []):
                relative = obj["Key"][len(base) :]
                try:
                    check_relative(relative)
                except BadInputError:
                    logger.warning("ignoring the S3 object %s: not a job file name", obj["Key"])
                    continue
                yield relative, str(obj["ETag"]), int(obj["Size"])

    def _get(self, key: str, **extra: str) -> dict[str, Any] | None:
        """GET an object (None when missing), refusing one larger than :data:`MAX_OBJECT_BYTES`."""
        try:
            obj: dict[str, Any] = self.client.get_object(Bucket=self.bucket, Key=key, **extra)
        except ClientError as exc:
            if is_missing(exc):
                return None
            raise
        if int(obj.get("ContentLength", 0)) > MAX_OBJECT_BYTES:
            obj["Body"].close()
            raise UnsafePathError(
                f"s3://{self.bucket}/{key} is larger than {MAX_OBJECT_BYTES:,} bytes, so it is not read.",
                "delete or shrink it in the bucket.",
            )
        return obj

    # the store

    def job_dir(self, job_id: str) -> Path:
        return self.root / check_job_id(job_id)

    def job_ids(self) -> list[str]:
        ids: list[str] = []
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=self._base(), Delimiter="/"):
            for common in page.get("CommonPrefixes", []):
                name = common["Prefix"][len(self._base()) :].rstrip("/")
                with contextlib.suppress(BadInputError):
                    ids.append(check_job_id(name))
        return sorted(job_id for job_id in ids if self._exists(self._key(job_id, "job.json")))

    def _exists(self, key: str) -> bool:
        try:
            self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if is_missing(exc):  # HEAD has no body, so its error code is the bare "404"
                return False
            raise
        return True

    def read_bytes(self, job_id: str, relative: str) -> bytes | None:
        obj = self._get(self._key(job_id, relative))
        return None if obj is None else bytes(obj["Body"].read())

    def read_from(self, job_id: str, relative: str, offset: int) -> bytes:
        try:
            obj = self._get(self._key(job_id, relative), Range=f"bytes={max(offset, 0)}-")
        except ClientError as exc:
            if error_code(exc) == "InvalidRange":  # nothing after offset yet (or an empty object)
                return b""
            raise
        return b"" if obj is None else bytes(obj["Body"].read())

    def list_files(self, job_id: str) -> list[str]:
        return sorted(relative for relative, _, _ in self._objects(job_id) if listed(relative))

    def write_bytes(self, job_id: str, relative: str, data: bytes) -> None:
        key = self._key(job_id, relative)
        if not listed(relative):  # the lock and hidden files are the store's own, never a caller's
            raise BadInputError(f"{relative!r} is not a job file that can be written.", "name an artifact file.")
        reply = self.client.put_object(Bucket=self.bucket, Key=key, Body=data)
        job_dir = self.job_dir(job_id)
        if job_dir.is_dir():  # a machine that never pulled the job keeps no partial copy of it
            digest = _write_local(job_dir, relative, [data])
            self._record(job_id, {relative: {"etag": str(reply["ETag"]), "digest": digest}})

    def pull(self, job_id: str) -> Path:
        job_dir = self.job_dir(job_id)
        job_dir.mkdir(parents=True, exist_ok=True)
        manifest = self._load_manifest(job_id)
        for relative, etag, size in self._objects(job_id):
            if not listed(relative):
                continue
            if size > MAX_OBJECT_BYTES:
                logger.warning("not pulling %s of job %s: %d bytes is over the limit", relative, job_id, size)
                continue
            known = manifest.get(relative, {})
            if known.get("etag") == etag and file_digest(job_dir / relative, beneath=job_dir) == known.get("digest"):
                continue
            obj = self._get(self._key(job_id, relative))
            if obj is None:  # deleted since the listing
                continue
            try:
                with contextlib.closing(obj["Body"]) as body:
                    digest = _write_local(job_dir, relative, iter(lambda: body.read(_CHUNK), b""))
            except (UnsafePathError, OSError) as exc:
                if isinstance(exc, OSError) and exc.errno not in _UNWRITABLE_ERRNOS:
                    raise
                logger.warning("not pulling %s of job %s: it cannot be written here: %s", relative, job_id, exc)
                continue
            self._record(job_id, {relative: {"etag": str(obj["ETag"]), "digest": digest}})
        return job_dir

    def push(self, job_id: str, *, stop: threading.Event | None = None) -> int:
        """Upload what changed in the local copy (see :meth:`ArtifactStore.push`).

        Args:
            stop: Once set, nothing more is sent (checked right before every PUT): the holder's
                :attr:`~insightloom.storage.base.HeldLock.lost`, so a holder that lost the job stops writing.
        """
        job_dir = self.job_dir(job_id)
        if not job_dir.is_dir():
            return 0
        manifest = self._load_manifest(job_id)
        sent = 0
        for path in iter_real_files(job_dir):
            if stop is not None and stop.is_set():
                break
            relative = path.relative_to(job_dir).as_posix()
            if listed(relative) and self._push_one(job_id, relative, manifest.get(relative, {}), stop=stop):
                sent += 1
        return sent

    def push_file(
        self, job_id: str, relative: str, *, whole_lines: bool = False, stop: threading.Event | None = None
    ) -> bool:
        """Upload one job file if it changed since it was last sent; True when it was sent.

        Args:
            whole_lines: Send only up to the last newline, so a reader of the object never sees half a line that
                is still being appended (``events.jsonl``).
            stop: As for :meth:`push`.
        """
        check_relative(relative)
        if not listed(relative):
            return False
        known = self._load_manifest(job_id).get(relative, {})
        return self._push_one(job_id, relative, known, whole_lines=whole_lines, stop=stop)

    def _file_key(self, job_id: str, relative: str) -> str | None:
        """The key for a local job file, or None (with a warning) when its name, which a script chose, cannot be one."""
        try:
            key = self._key(job_id, relative)
            if len(key.encode("utf-8")) <= MAX_KEY_BYTES:
                return key
            why = f"its key would be longer than S3's {MAX_KEY_BYTES} bytes"
        except BadInputError:
            why = "it is not a plain path inside the job folder (a backslash?)"
        except UnicodeEncodeError:
            why = "its name is not UTF-8"
        logger.warning("not pushing %r of job %s: %s", relative, job_id, why)
        return None

    def _push_one(
        self,
        job_id: str,
        relative: str,
        known: dict[str, str],
        *,
        whole_lines: bool = False,
        stop: threading.Event | None = None,
    ) -> bool:
        job_dir = self.job_dir(job_id)
        key = self._file_key(job_id, relative)
        if key is None:
            return False
        try:
            with open_regular(job_dir / relative, beneath=job_dir, max_bytes=MAX_OBJECT_BYTES) as (handle, size):
                body: BinaryIO = handle
                if size <= MAX_READ_BYTES:  # a snapshot, so a file a script still writes uploads consistently
                    data = handle.read(MAX_READ_BYTES)
                    if whole_lines:
                        data = data[: data.rfind(b"\n") + 1]
                    digest = hashlib.sha256(data).hexdigest()
                    body = io.BytesIO(data)
                else:
                    digest = hashlib.file_digest(handle, "sha256").hexdigest()
                    handle.seek(0)
                if digest == known.get("digest") or (stop is not None and stop.is_set()):
                    return False
                reply = self.client.put_object(Bucket=self.bucket, Key=key, Body=body)
        except FileNotFoundError:  # removed since it was listed
            return False
        except UnsafePathError as exc:
            logger.warning("not pushing %s of job %s: %s", relative, job_id, exc.message)
            return False
        self._record(job_id, {relative: {"etag": str(reply["ETag"]), "digest": digest}})
        return True

    def delete_job(self, job_id: str) -> None:
        keys = [{"Key": self._key(job_id, relative)} for relative, _, _ in self._objects(job_id)]
        for start in range(0, len(keys), 1000):  # DeleteObjects takes at most 1,000 keys a call
            self.client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": keys[start : start + 1000], "Quiet": True}
            )
        for kind in META_KINDS:
            self.client.delete_object(Bucket=self.bucket, Key=self._meta_key(kind, job_id))
        job_dir = self.job_dir(job_id)
        if job_dir.is_dir() and not job_dir.is_symlink():
            shutil.rmtree(job_dir)  # rmtree removes links inside without following them
        self._manifest_path(job_id).unlink(missing_ok=True)

    def _meta_key(self, kind: MetaKind, job_id: str) -> str:
        if kind not in META_KINDS:
            raise BadInputError(f"{kind!r} is not a kind of job record.", f"use one of {', '.join(META_KINDS)}.")
        return f"{self._base()}.{kind}/{check_job_id(job_id)}"

    def read_meta(self, kind: MetaKind, job_id: str) -> str | None:
        try:
            obj = self.client.get_object(Bucket=self.bucket, Key=self._meta_key(kind, job_id))
        except ClientError as exc:
            if is_missing(exc):
                return None
            raise
        return bytes(obj["Body"].read(_MAX_META_BYTES)).decode("utf-8", "replace")

    def write_meta(self, kind: MetaKind, job_id: str, text: str) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self._meta_key(kind, job_id), Body=text.encode("utf-8"))

    def _lock_key(self, job_id: str) -> str:
        return self._key(job_id, LOCK_OBJECT)

    def lock(self, job_id: str) -> S3JobLock:
        return S3JobLock(self.lock_client, self.bucket, self._lock_key(job_id), **self._lock_options)

    def lock_alive(self, job_id: str) -> bool:
        options = self._lock_options
        return lock_alive(
            self.lock_client,
            self.bucket,
            self._lock_key(job_id),
            host=options["host"],
            stale_after_s=options["stale_after_s"],
        )
