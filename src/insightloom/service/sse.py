"""Server-Sent Events from ``events.jsonl``.

The stream tails the file rather than an in-memory queue, so it works whoever writes the job (this process, a worker
elsewhere, a server that restarted) and a reconnect with ``Last-Event-ID`` replays exactly what was missed. The file
is read through a callable (the bytes after an offset), so it may sit in the local folder or in the artifact store
(S3). Jobs that run in this process also wake their streams at once through :class:`EventHub`; others are re-read
every ``poll_s``.
Each frame is ``id:`` (event id), ``event:`` (kind) and ``data:`` (the whole event as one JSON line).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from ..events import TERMINAL_KINDS, EventLog

logger = logging.getLogger(__name__)

RETRY_MS = 2000  # how soon a browser reconnects after the stream drops
KEEPALIVE = b": keepalive\n\n"


class EventHub:
    """Wakes the SSE streams of a job when this process appends an event to it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}

    def attach(self, events: EventLog) -> None:
        """Listen to a job's event log (one listener per log; logs live only as long as their runtime)."""
        job_id = events.job_id
        events.subscribe(lambda _event: self.notify(job_id))

    def notify(self, job_id: str) -> None:
        with self._lock:
            waiters = list(self._waiters.get(job_id, ()))
        for loop, event in waiters:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the stream's loop has closed
                continue

    def notify_all(self) -> None:
        with self._lock:
            job_ids = list(self._waiters)
        for job_id in job_ids:
            self.notify(job_id)

    @contextmanager
    def waiter(self, job_id: str) -> Iterator[asyncio.Event]:
        """An asyncio event set whenever the job gets a new event; call inside the stream's loop."""
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.setdefault(job_id, set()).add(entry)
        try:
            yield entry[1]
        finally:
            with self._lock:
                waiters = self._waiters.get(job_id, set())
                waiters.discard(entry)
                if not waiters:
                    self._waiters.pop(job_id, None)


#: Reads a job's ``events.jsonl`` after a byte offset (empty when there is nothing new, or no file yet).
Reader = Callable[[int], bytes]


class EventTail:
    """Reads complete new lines of ``events.jsonl`` since the last read; a half-written last line waits.

    Args:
        read: The bytes of the file after an offset, e.g. ``functools.partial(store.read_from, job_id, name)``.
    """

    def __init__(self, read: Reader) -> None:
        self.read = read
        self.offset = 0
        self.buffer = b""
        self.last_kind: str | None = None

    def read_new(self) -> list[tuple[dict[str, Any], str]]:
        """New events, each with its JSON line as written."""
        chunk = self.read(self.offset)
        self.offset += len(chunk)
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        out = []
        for raw in lines:
            line = raw.decode("utf-8", errors="replace").strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                event = None
            if not isinstance(event, dict) or not isinstance(event.get("id"), int) or "kind" not in event:
                logger.warning("skipping a malformed line in events.jsonl: %.80s", line)
                continue
            self.last_kind = event["kind"]
            out.append((event, line))
        return out


def frame(event: dict[str, Any], line: str) -> bytes:
    return f"id: {event['id']}\nevent: {event['kind']}\ndata: {line}\n\n".encode()


async def event_stream(
    read: Reader,
    wake: asyncio.Event,
    *,
    after_id: int = 0,
    keepalive_s: float = 15.0,
    poll_s: float = 1.0,
    stopping: Callable[[], bool] = lambda: False,
) -> AsyncIterator[bytes]:
    """SSE frames for the events after ``after_id``, then live ones, until a terminal event.

    The stream also ends when the file already ends with a terminal event (a replay of a finished job), or when the
    server stops (``stopping``); it never ends on ``plan_review_request``, which waits for a person.

    Args:
        read: Reads the job's ``events.jsonl`` after an offset (the file may not exist yet).
        wake: Set when the job may have a new event; the stream re-reads the file then, or after ``poll_s``.
        after_id: The client's ``Last-Event-ID``: events up to it are not sent again.
        keepalive_s: Seconds of silence after which a comment frame is sent.
        poll_s: Longest wait between two reads of the file.
        stopping: Whether the server is shutting down.
    """
    loop = asyncio.get_running_loop()
    tail = EventTail(read)
    yield f"retry: {RETRY_MS}\n\n".encode()
    quiet_since = loop.time()
    while not stopping():
        wake.clear()
        for event, line in await asyncio.to_thread(tail.read_new):  # a store read may be a network call
            if event["id"] <= after_id:
                continue
            yield frame(event, line)
            quiet_since = loop.time()
            if event["kind"] in TERMINAL_KINDS:
                return
        if tail.last_kind in TERMINAL_KINDS:
            return  # everything up to the job's end had been seen already
        silent = loop.time() - quiet_since
        if silent >= keepalive_s:
            yield KEEPALIVE
            quiet_since, silent = loop.time(), 0.0
        with suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), timeout=min(poll_s, keepalive_s - silent))
