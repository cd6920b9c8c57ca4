"""Live sync of a running job's working copy with a remote store.

While a worker runs a job from its working copy, the API (on another machine) serves that job from the store, so the
store must keep up: events within about a second, stage outputs at every stage boundary, and the API's cancel
request must reach the worker. :class:`LiveSync` does that in one background thread, and does nothing for a store
that is not remote, so callers can always wrap a run in it.

A failed upload is tried again (the store may be briefly unreachable), and the final push on exit is tried a few
times before it fails the run. Once the job lock is lost nothing more is sent, not even the rest of a push that was
under way: the store checks right before each PUT.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol, runtime_checkable

from ..events import TERMINAL_KINDS, Event, EventLog
from ..fileio import write_text_atomic
from ..jobs import CANCEL_FILE
from ..timeutil import utc_now
from .base import ArtifactStore, HeldLock

logger = logging.getLogger(__name__)
EVENTS_FILE = "events.jsonl"
#: Events after which the whole working copy is pushed: a stage's outputs are complete, or the job waits or ended.
FULL_PUSH_KINDS = frozenset({"stage", "plan_review_request"}) | TERMINAL_KINDS
#: Tries of the final push on exit before the run fails with its error.
FINAL_PUSH_ATTEMPTS = 3


@runtime_checkable
class _PushesFiles(Protocol):
    """A store that sends files one by one (S3), so it can stop between them once ``stop`` is set, and send one
    file alone (S3 has no append, so ``events.jsonl`` is sent whole, without the full push)."""

    def push(self, job_id: str, *, stop: threading.Event | None = None) -> int: ...

    def push_file(
        self, job_id: str, relative: str, *, whole_lines: bool = False, stop: threading.Event | None = None
    ) -> bool: ...


class LiveSync:
    """Keep a remote store up to date with a job running in its working copy, while the ``with`` body runs.

    Args:
        store: The job's store; for a local one nothing happens.
        job_id: The job.
        events: The job's event log (subscribed to: each event marks ``events.jsonl`` as changed).
        held: The job lock held for the run; once :attr:`HeldLock.lost` is set nothing more is written.
        every_s: Least seconds between two uploads of ``events.jsonl`` while events keep coming.
        cancel_poll_s: Seconds between looks for ``cancel.request`` in the store.
        retry_s: Seconds before a failed upload is tried again (and between tries of the final push, growing).

    Raises:
        Exception: On exit, what the last try of the final push raised (unless the body itself raised).
    """

    def __init__(
        self,
        store: ArtifactStore,
        job_id: str,
        events: EventLog,
        held: HeldLock,
        *,
        every_s: float = 1.0,
        cancel_poll_s: float = 5.0,
        retry_s: float = 1.0,
    ) -> None:
        self.store = store
        self.job_id = job_id
        self.events = events
        self.held = held
        self.every_s = every_s
        self.cancel_poll_s = cancel_poll_s
        self.retry_s = retry_s
        self._wake = threading.Condition()
        self._events_changed = False
        self._full_wanted = False
        self._stopping = False
        self._cancel_seen = False
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LiveSync:
        if self.store.remote:
            self.events.subscribe(self._on_event)
            self._thread = threading.Thread(target=self._run, name=f"livesync-{self.job_id}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if self._thread is None:
            return
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        self._thread.join()
        try:
            self._final_push()
        except Exception:
            if exc_type is None:
                raise
            logger.exception("final push of job %s failed", self.job_id)

    def _final_push(self) -> None:
        """Push what the run left, trying again after a short, growing pause; raises what the last try raised."""
        for attempt in range(1, FINAL_PUSH_ATTEMPTS + 1):
            if self.held.lost.is_set():
                return
            try:
                self._push_all()
                return
            except Exception:
                if attempt == FINAL_PUSH_ATTEMPTS:
                    raise
                logger.warning("final push of job %s failed (try %d); trying again", self.job_id, attempt)
                self.held.lost.wait(self.retry_s * attempt)  # returns at once if the lock is lost meanwhile

    def _on_event(self, event: Event) -> None:
        """Called in the emitting thread after the event is in ``events.jsonl``."""
        with self._wake:
            if self._stopping:  # the log has no unsubscribe: a listener outliving the sync just ignores events
                return
            self._events_changed = True
            self._full_wanted = self._full_wanted or event.kind in FULL_PUSH_KINDS
            self._wake.notify_all()

    def _run(self) -> None:
        last_events = float("-inf")
        next_cancel = time.monotonic()
        retry_at = float("-inf")  # after a failed upload, nothing is sent again before this
        while not self.held.lost.is_set():
            with self._wake:
                due = [next_cancel]
                if self._full_wanted:
                    due.append(retry_at)
                elif self._events_changed:
                    due.append(max(last_events + self.every_s, retry_at))
                if not self._stopping:
                    self._wake.wait(max(0.0, min(due) - time.monotonic()))
                if self._stopping:
                    return
                now = time.monotonic()
                ready = now >= retry_at
                full = ready and self._full_wanted
                send_events = ready and self._events_changed and (full or now >= last_events + self.every_s)
                self._full_wanted = self._full_wanted and not full
                self._events_changed = self._events_changed and not send_events
            if self.held.lost.is_set():
                return
            try:
                if full:
                    self._push_all()
                elif send_events:
                    self._push_events()
                if send_events or full:
                    last_events = now
            except Exception:  # the store may be briefly unreachable: send the same again after a pause
                logger.warning("live sync of job %s failed; will retry", self.job_id, exc_info=True)
                retry_at = time.monotonic() + self.retry_s
                with self._wake:
                    self._full_wanted = self._full_wanted or full
                    self._events_changed = self._events_changed or send_events
            if now >= next_cancel:
                self._poll_cancel()
                next_cancel = now + self.cancel_poll_s

    def _push_all(self) -> None:
        if isinstance(self.store, _PushesFiles):
            self.store.push(self.job_id, stop=self.held.lost)
        else:
            self.store.push(self.job_id)

    def _push_events(self) -> None:
        if isinstance(self.store, _PushesFiles):
            self.store.push_file(self.job_id, EVENTS_FILE, whole_lines=True, stop=self.held.lost)
        else:
            self.store.push(self.job_id)

    def _poll_cancel(self) -> None:
        """Copy the store's ``cancel.request`` into the working copy, where the running job looks for it."""
        if self._cancel_seen:
            return
        try:
            data = self.store.read_bytes(self.job_id, CANCEL_FILE)
        except Exception:
            logger.warning("could not check job %s for a cancel request", self.job_id, exc_info=True)
            return
        if data is None or self.held.lost.is_set():
            return
        job_dir = self.store.job_dir(self.job_id)
        if not (job_dir / CANCEL_FILE).exists():
            text = data.decode("utf-8", "replace") or utc_now() + "\n"
            write_text_atomic(job_dir / CANCEL_FILE, text, beneath=job_dir)
        self._cancel_seen = True
