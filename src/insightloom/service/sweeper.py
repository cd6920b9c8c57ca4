"""The sweeper: re-queue jobs that no live worker runs, so no API restart is needed after a worker dies.

A worker that dies with its whole container leaves its message unacknowledged until the broker's visibility timeout
(hours, since it must exceed a job's wall-clock ceiling) and its job ``running`` with a stale lock. Each worker runs
:class:`Sweeper` in a daemon thread; every ``interval_s`` it finds such jobs (:func:`due_items`) and queues an item
with the stage key the job is at. Items are idempotent (:mod:`.delivery`), so two sweepers or a late redelivery
queueing the same job only cost a no-op.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..events import TERMINAL_KINDS
from ..storage import ArtifactStore
from ..timeutil import utc_now
from .queue import WorkItem

logger = logging.getLogger(__name__)


def _age_s(stamp: object, now: float) -> float:
    """Seconds since an ISO 8601 UTC stamp (``...Z``); infinite when it is missing or malformed."""
    try:
        return now - datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return float("inf")


def _status(store: ArtifactStore, job_id: str) -> dict[str, Any] | None:
    raw = store.read_bytes(job_id, "job.json")
    try:
        data = json.loads(raw or b"")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def item_for(job_id: str, status: dict[str, Any], *, lock_alive: bool, age_s: float, grace_s: float) -> WorkItem | None:
    """The item a stopped job needs, or None when it needs nothing (ended, held by a live runner, or too recent).

    ``age_s`` is the time since job.json last changed: a job queued only moments ago has its start item waiting in
    the queue, so it is left alone for ``grace_s``. A running job with no live lock holder needs its resume now.
    """
    state, stage = status.get("status"), status.get("stage")
    if state in TERMINAL_KINDS or lock_alive:
        return None
    if state == "running":
        return WorkItem(job_id, "resume", stage=str(stage or "intake"))
    if age_s < grace_s:
        return None
    if state == "queued":
        return WorkItem(job_id, "start", stage="intake")
    if state == "awaiting_review":
        pending = status.get("pending_review") or ({"decision": "approve"} if status.get("auto_approve") else None)
        if pending:
            revision = int(status.get("revision", 0) or 0)
            return WorkItem(job_id, "review", pending["decision"], pending.get("feedback", ""), stage=f"rev{revision}")
    return None


def due_items(store: ArtifactStore, *, grace_s: float, now: float | None = None) -> list[WorkItem]:
    """Items for every service job (one with an owner) in the store that no live worker runs."""
    now = time.time() if now is None else now
    items = []
    for job_id in store.job_ids():
        if store.read_meta("owners", job_id) is None:
            continue  # a CLI job: `insightloom resume` is its owner's call
        status = _status(store, job_id)
        if status is None:
            continue
        alive = status.get("status") not in TERMINAL_KINDS and store.lock_alive(job_id)
        age = _age_s(status.get("updated_at"), now)
        item = item_for(job_id, status, lock_alive=alive, age_s=age, grace_s=grace_s)
        if item is not None:
            items.append(item)
    return items


class Sweeper:
    """Re-queue due jobs every ``interval_s`` (a daemon thread), each key at most once per ``grace_s``.

    Args:
        store: Where the jobs are.
        put: Queues an item (the Celery queue's ``put``); its errors are logged and the job is tried next round.
        interval_s: Seconds between sweeps.
        grace_s: How old a queued job or pending review must be before it counts as lost, and how long a swept key
            is not re-queued again (recorded in the store's ``sweeps`` records, so every worker sees it).
    """

    def __init__(
        self, store: ArtifactStore, put: Callable[[WorkItem], None], *, interval_s: float = 30.0, grace_s: float = 120.0
    ) -> None:
        self.store = store
        self.put = put
        self.interval_s = interval_s
        self.grace_s = grace_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _already_swept(self, item: WorkItem, updated_at: object, now: float) -> bool:
        """Whether this key was queued for the job within ``grace_s``, or (for a start or review) in its state now.

        A queued job whose start waits behind a long backlog is re-queued once, not once per pass; a running job
        with a dead lock, which nobody works on, is tried again after every grace period.
        """
        try:
            record = json.loads(self.store.read_meta("sweeps", item.job_id) or "{}")
        except ValueError:
            return False
        if not isinstance(record, dict) or record.get("key") != item.key:
            return False
        if _age_s(record.get("at"), now) < self.grace_s:
            return True
        return item.action != "resume" and record.get("updated_at") == updated_at

    def sweep_once(self) -> list[WorkItem]:
        """One pass: the items queued."""
        now = time.time()
        queued = []
        for item in due_items(self.store, grace_s=self.grace_s, now=now):
            updated_at = (_status(self.store, item.job_id) or {}).get("updated_at")
            if self._already_swept(item, updated_at, now):
                continue
            try:
                self.put(item)
            except Exception as exc:  # a broker outage: next round
                logger.warning("sweeper: could not queue %s for job %s: %s", item.key, item.job_id, exc)
                continue
            record = {"key": item.key, "at": utc_now(), "updated_at": updated_at}
            self.store.write_meta("sweeps", item.job_id, json.dumps(record))
            logger.info("sweeper: job %s had no live runner; queued %s", item.job_id, item.key)
            queued.append(item)
        return queued

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.sweep_once()
            except Exception:  # the store may be briefly unreachable; the sweeper must outlive it
                logger.exception("sweeper pass failed")

    def start(self) -> Sweeper:
        self._thread = threading.Thread(target=self._loop, name="insightloom-sweeper", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
