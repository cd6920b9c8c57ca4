"""Typed progress events: one object serialized to events.jsonl, the CLI display and (later) SSE.

Each job owns one EventLog. Listeners (the CLI progress display, a server stream) subscribe to it; nothing here is
process-global.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from .fileio import append_text, read_text
from .timeutil import utc_now

logger = logging.getLogger(__name__)

EventKind = Literal[
    "stage",
    "agent_start",
    "agent_end",
    "tool_call",
    "tool_result",
    "usage",
    "progress",
    "plan_review_request",
    "plan_revised",
    "error",
    "completed",
    "needs_review",
    "failed",
    "cancelled",
]
STAGES = ("intake", "coordinate", "plan", "review", "supervise", "done")
TERMINAL_KINDS = frozenset({"completed", "needs_review", "failed", "cancelled"})


@dataclass(frozen=True)
class Event:
    """One line of events.jsonl."""

    id: int
    ts: str
    job_id: str
    kind: EventKind
    data: dict[str, Any]

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


Listener = Callable[[Event], None]


class EventLog:
    """Appends events to ``events.jsonl`` with increasing ids and fans them out to listeners."""

    def __init__(self, path: Path, job_id: str) -> None:
        self.path = path
        self.job_id = job_id
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []
        self._next_id = self._last_id() + 1

    def _last_id(self) -> int:
        if not self.path.exists():
            return 0
        last = 0
        for line in read_text(self.path, beneath=self.path.parent).splitlines():
            try:
                last = max(last, int(json.loads(line)["id"]))
            except (ValueError, KeyError, TypeError):
                continue
        return last

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, kind: EventKind, **data: Any) -> Event:
        """Record an event and tell every listener; a failing listener never breaks the job."""
        with self._lock:
            event = Event(self._next_id, utc_now(), self.job_id, kind, data)
            self._next_id += 1
            append_text(self.path, event.to_json() + "\n", beneath=self.path.parent)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a display bug must not fail the job
                logger.exception("event listener failed on %s", kind)
        return event

    def read(self, after_id: int = 0) -> list[Event]:
        """Events with an id above ``after_id``, for replay."""
        if not self.path.exists():
            return []
        events = []
        for line in read_text(self.path, beneath=self.path.parent).splitlines():
            raw = json.loads(line)
            if raw["id"] > after_id:
                events.append(Event(**raw))
        return events
