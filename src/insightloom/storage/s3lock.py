"""The job lock across machines: one S3 object changed only by conditional writes, with a fencing counter.

``<prefix>/<job_id>/.lock`` holds ``{"token", "fence", "host", "pid", "started", "heartbeat"}``. It is taken with
``If-None-Match: *`` (no lock yet) or ``If-Match: <etag>`` (a stale or released lock), so of two machines that race
for it S3 lets exactly one write win; the loser gets 412 and :class:`~insightloom.joblock.JobLocked`. Liveness
follows :func:`insightloom.joblock.holder_alive`: on this host the owner's process must run, elsewhere the heartbeat
must be under 60 s old.

Every new holder writes ``fence = previous fence + 1``, and releasing leaves a ``released`` record that keeps the
fence (instead of deleting the object), so the number only ever grows: a holder that was taken over has a smaller
fence than the lock now shows. Its heartbeat (``If-Match`` its own last write) then fails with 412 and sets
:attr:`S3JobLock.lost`.

A holder whose heartbeats stop getting through (S3 unreachable, or a PUT that hangs) gives up on its own, and early:
:attr:`S3JobLock.lost` is set once ``stale_after_s - 2 * heartbeat_s`` pass without a heartbeat landing, measured
from when that heartbeat was taken, so the holder stops writing before another machine may take the lock over.
Lock calls use a client with short timeouts (:data:`LOCK_CLIENT_CONFIG`) so a hung call fails fast.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from ..errors import ConfigError
from ..joblock import HEARTBEAT_S, STALE_AFTER_S, JobLocked, holder_alive, process_start

logger = logging.getLogger(__name__)
#: The lock object's name inside the job's prefix; hidden, so it is never listed, served, pushed or pulled.
LOCK_OBJECT = ".lock"
#: A conditional write lost: 412, or 409 when S3 saw two conditional writes to one key at the same time.
_CONFLICT_CODES = frozenset({"PreconditionFailed", "ConditionalRequestConflict", "412", "409"})
_MISSING_CODES = frozenset({"NoSuchKey", "NotFound", "404"})
#: For the lock's own S3 client: a heartbeat that cannot get through must fail within seconds (two tries of at most
#: 5 s to connect and 10 s to read), not the default minutes (60 s each, three tries), so the holder learns in time.
LOCK_CLIENT_CONFIG = Config(connect_timeout=5, read_timeout=10, retries={"mode": "standard", "total_max_attempts": 2})


def error_code(exc: ClientError) -> str:
    """The S3 error code of a failed call (``NoSuchKey``, ``PreconditionFailed``, ``InvalidRange``, ...)."""
    return str(exc.response.get("Error", {}).get("Code", ""))


def is_conflict(exc: ClientError) -> bool:
    """Whether a conditional write failed because the object changed (or appeared) meanwhile."""
    return error_code(exc) in _CONFLICT_CODES


def is_missing(exc: ClientError) -> bool:
    """Whether a call failed because the object does not exist."""
    return error_code(exc) in _MISSING_CODES


def _parse(raw: bytes) -> dict[str, Any]:
    """The lock record, or ``{}`` when it is not one (then it is treated as stale, with fence 0)."""
    try:
        data = json.loads(raw)
        if isinstance(data, dict):
            int(data.get("fence", 0))
            if not data.get("released"):
                if int(data["pid"]) <= 0:  # pid 0 or -1 would make kill(pid, 0) ask about a whole group
                    return {}
                float(data["heartbeat"])
            return data
    except (ValueError, TypeError, KeyError):
        pass
    return {}


def read_lock(client: Any, bucket: str, key: str) -> tuple[dict[str, Any], str] | None:
    """The lock record and its ETag, or None when there is no lock object."""
    try:
        obj = client.get_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if is_missing(exc):
            return None
        raise
    return _parse(obj["Body"].read(64 * 1024)), str(obj["ETag"])


def record_alive(
    data: dict[str, Any], *, host: str | None = None, now: float | None = None, stale_after_s: float = STALE_AFTER_S
) -> bool:
    """Whether a lock record names a live holder (a released or unreadable record never does)."""
    return (
        bool(data) and not data.get("released") and holder_alive(data, now=now, host=host, stale_after_s=stale_after_s)
    )


def lock_alive(
    client: Any,
    bucket: str,
    key: str,
    *,
    host: str | None = None,
    now: float | None = None,
    stale_after_s: float = STALE_AFTER_S,
) -> bool:
    """Whether the lock object at ``key`` belongs to a live holder."""
    found = read_lock(client, bucket, key)
    return found is not None and record_alive(found[0], host=host, now=now, stale_after_s=stale_after_s)


class S3JobLock:
    """Hold a job's S3 lock while the ``with`` body runs, refreshing the heartbeat in a daemon thread.

    Args:
        client: A boto3 S3 client.
        bucket: The bucket.
        key: The lock object's key (``<prefix>/<job_id>/.lock``).
        host: This machine's name in the lock (default the hostname); tests pass two names to act as two machines.
        heartbeat_s: Seconds between heartbeats.
        stale_after_s: A lock from another host whose heartbeat is older than this is taken over.

    Attributes:
        fence: This holding's fencing token (0 until entered).
        lost: Set when a heartbeat finds that another holder took the lock over, or when no heartbeat got through
            for :attr:`lost_after_s` (two heartbeats before another machine may take it over); work under it must
            stop.

    Raises:
        ConfigError: ``stale_after_s`` is not above two heartbeats (the holder could never stop before a takeover).
        JobLocked: On enter, when a live holder has the lock or another process won the race for it.
    """

    def __init__(
        self,
        client: Any,
        bucket: str,
        key: str,
        *,
        host: str | None = None,
        heartbeat_s: float = HEARTBEAT_S,
        stale_after_s: float = STALE_AFTER_S,
    ) -> None:
        if stale_after_s <= 2 * heartbeat_s:
            raise ConfigError(
                f"A job lock that goes stale after {stale_after_s:g} s cannot beat every {heartbeat_s:g} s.",
                "make stale_after_s more than twice heartbeat_s (the defaults are 60 s and 10 s).",
            )
        self.client = client
        self.bucket = bucket
        self.key = key
        self.host = host or socket.gethostname()
        self.heartbeat_s = heartbeat_s
        self.stale_after_s = stale_after_s
        self.token = uuid.uuid4().hex
        self.fence = 0
        self.lost = threading.Event()
        self._etag = ""
        self._last_ok = 0.0  # monotonic time at which the heartbeat now in S3 was taken
        self._stop = threading.Event()
        self._io = threading.Lock()  # a heartbeat and the release never write at the same time
        self._threads: list[threading.Thread] = []

    @property
    def lost_after_s(self) -> float:
        """Seconds without a heartbeat landing after which this holder gives up (see the module docstring)."""
        return self.stale_after_s - 2 * self.heartbeat_s

    def _body(self) -> bytes:
        pid = os.getpid()
        return json.dumps(
            {
                "token": self.token,
                "fence": self.fence,
                "host": self.host,
                "pid": pid,
                "started": process_start(pid),
                "heartbeat": time.time(),
            }
        ).encode()

    def _put(self, body: bytes, **condition: str) -> str:
        reply = self.client.put_object(
            Bucket=self.bucket, Key=self.key, Body=body, ContentType="application/json", **condition
        )
        return str(reply["ETag"])

    def _still_ours(self) -> bool:
        """After a failed conditional write: whether the lock is ours anyway (a retried write of ours had landed)."""
        found = read_lock(self.client, self.bucket, self.key)
        if found is not None and found[0].get("token") == self.token:
            self._etag = found[1]
            return True
        return False

    def _refused(self, data: dict[str, Any]) -> JobLocked:
        if not data:  # the lock vanished, or is no lock, between our failed write and the read-back
            return JobLocked(
                f"Job lock {self.key} changed while this process was taking it.",
                "try again: another process took or released the lock at the same moment.",
            )
        return JobLocked(
            f"Job lock {self.key} is held by pid {data.get('pid')} on {data.get('host')}.",
            f"wait for it to finish, or stop that process; a lock whose heartbeat is older than "
            f"{self.stale_after_s:g} s on another host is taken over.",
        )

    def _acquire(self) -> None:
        found = read_lock(self.client, self.bucket, self.key)
        if found is not None and record_alive(found[0], host=self.host, stale_after_s=self.stale_after_s):
            raise self._refused(found[0])
        self.fence = int(found[0].get("fence", 0)) + 1 if found is not None else 1
        condition = {"IfMatch": found[1]} if found is not None else {"IfNoneMatch": "*"}
        taken = time.monotonic()  # before the body: another machine ages the lock from the heartbeat in it
        try:
            self._etag = self._put(self._body(), **condition)
        except ClientError as exc:
            if not (is_conflict(exc) or is_missing(exc)):
                raise
            if self._still_ours():
                self._last_ok = taken
                return
            latest = read_lock(self.client, self.bucket, self.key)  # the one who won the race
            raise self._refused(latest[0] if latest else {}) from None
        self._last_ok = taken
        if found is not None and found[0] and not found[0].get("released"):
            logger.warning(
                "took over the stale lock %s from pid %s on %s", self.key, found[0].get("pid"), found[0].get("host")
            )

    def _lose(self, why: str) -> None:
        if self.lost.is_set():  # the watch and a heartbeat may both find out
            return
        logger.warning("lost the lock %s (fence %d): %s", self.key, self.fence, why)
        self.lost.set()

    def _beat_once(self) -> bool:
        """Refresh the heartbeat; False when the lock turned out to be someone else's."""
        taken = time.monotonic()
        try:
            self._etag = self._put(self._body(), IfMatch=self._etag)
        except ClientError as exc:
            if not (is_conflict(exc) or is_missing(exc)):
                raise
            if not self._still_ours():
                self._lose("another holder took it over")
                return False
        self._last_ok = taken
        return True

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            with self._io:
                if self._stop.is_set() or self.lost.is_set():
                    return
                try:
                    if not self._beat_once():
                        return
                except (ClientError, BotoCoreError, OSError) as exc:
                    logger.warning("could not refresh the lock %s: %s", self.key, exc)

    def _watch(self) -> None:
        """Set :attr:`lost` once no heartbeat landed for :attr:`lost_after_s`, even while a heartbeat call hangs."""
        while True:
            left = self._last_ok + self.lost_after_s - time.monotonic()
            if left <= 0:
                if not self._stop.is_set():
                    self._lose(f"no heartbeat got through for {self.lost_after_s:g} s")
                return
            if self._stop.wait(left):
                return

    def __enter__(self) -> S3JobLock:
        self._acquire()
        for target, name in ((self._beat, "s3lock"), (self._watch, "s3lock-watch")):
            thread = threading.Thread(target=target, name=f"{name}-{self.key}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        with self._io:
            if self.lost.is_set():
                return
            try:
                self._release()
            except (ClientError, BotoCoreError, OSError) as error:  # it goes stale after stale_after_s anyway
                logger.warning("could not release the lock %s: %s", self.key, error)

    def _release(self) -> None:
        """Mark the lock released if it is still ours, keeping its fence; never touch another holder's lock."""
        found = read_lock(self.client, self.bucket, self.key)
        if found is None or found[0].get("token") != self.token:
            return
        try:
            self._put(json.dumps({"fence": self.fence, "released": time.time()}).encode(), IfMatch=found[1])
        except ClientError as exc:
            if not (is_conflict(exc) or is_missing(exc)):
                raise
