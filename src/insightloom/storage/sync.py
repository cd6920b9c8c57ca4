"""Live sync of a running job's working copy with a remote store.

While a worker runs a job from its working copy, the API (on another machine) serves that job from the store, so the
store must keep up: events within about a second, stage outputs at every stage boundary, and the API's cancel
request must reach the worker. :class:`LiveSync` does that in one background thread, and does nothing for a store
that is not remote, so callers can always wrap a run in it.
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


@runtime_checkable
class _PushesFiles(Protocol):
    """A store that can send one file (S3 has no append, so ``events.jsonl`` is sent whole, without the full push)."""

    def push_file(self, job_id: str, relative: str, *, whole_lines: bool = False) -> bool: ...


class LiveSync:
    """Keep a remote store up to date with a job running in its working copy, while the ``with`` body runs.

    Args:
        store: The job's store; for a local one nothing happens.
        job_id: The job.
        events: The job's event log (subscribed to: each event marks ``events.jsonl`` as changed).
        held: The job lock held for the run; once :attr:`HeldLock.lost` is set nothing more is written.
        every_s: Least seconds between two uploads of ``events.jsonl`` while events keep coming.
        cancel_poll_s: Seconds between looks for ``cancel.request`` in the store.

    Raises:
        Exception: On exit, what the final push raised (unless the body itself raised).
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
    ) -> None:
        self.store = store
        self.job_id = job_id
        self.events = events
        self.held = held
        self.every_s = every_s
        self.cancel_poll_s = cancel_poll_s
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
        if self.held.lost.is_set():
            return
        try:
            self.store.push(self.job_id)
        except Exception:
            if exc_type is None:
                raise
            logger.exception("final push of job %s failed", self.job_id)

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
        while not self.held.lost.is_set():
            with self._wake:
                due = [next_cancel] + ([last_events + self.every_s] if self._events_changed else [])
                if not (self._stopping or self._full_wanted):
                    self._wake.wait(max(0.0, min(due) - time.monotonic()))
                if self._stopping:
                    return
                now = time.monotonic()
                full, self._full_wanted = self._full_wanted, False
                send_events = self._events_changed and (full or now >= last_events + self.every_s)
                self._events_changed = self._events_changed and not send_events
            if self.held.lost.is_set():
                return
            try:
                if full:
                    self.store.push(self.job_id)
                elif send_events:
                    self._push_events()
                if send_events or full:
                    last_events = now
            except Exception:  # the store may be briefly unreachable: send again after the next event
                logger.warning("live sync of job %s failed; will retry", self.job_id, exc_info=True)
                with self._wake:
                    self._events_changed = True
            if now >= next_cancel:
                self._poll_cancel()
                next_cancel = now + self.cancel_poll_s

    def _push_events(self) -> None:
        if isinstance(self.store, _PushesFiles):
            self.store.push_file(self.job_id, EVENTS_FILE, whole_lines=True)
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
