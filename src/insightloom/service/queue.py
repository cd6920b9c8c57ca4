"""The job queue: an interface, and the in-process bounded pool behind it.

Work items are plain data (a job id, an action and its arguments), so a distributed engine such as Celery over
Redis/SQS can carry them to workers on other machines that share the artifacts volume (see ``deploy/``). Whatever
engine sits behind :class:`JobQueue`, the items of one job must run one at a time and in order; ``job.lock`` refuses
a second runner anyway.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

from ..errors import QueueFull

logger = logging.getLogger(__name__)

Action = Literal["start", "review", "resume", "followup"]
#: The stage a ``start`` item expects to run first.
START_STAGE = "intake"


@dataclass(frozen=True)
class WorkItem:
    """One unit of work on one job.

    Attributes:
        job_id: The job (its folder is ``<artifacts>/<job_id>``).
        action: ``start`` (intake → plan), ``review`` (apply a decision) or ``resume`` (continue after a crash).
        decision: For ``review``: ``approve``, ``feedback`` or ``cancel``.
        feedback: For a ``feedback`` review: what the Planner should change.
        inputs: For ``start``: data file names inside the job's ``data/`` folder, in upload order (for the logs: a
            worker reads the inputs from the job folder, never paths from a message).
        question: For ``followup``: the question a bounded follow-up analysis answers (``stage`` is its request id).
        stage: The stage this item expects to run: ``intake`` for ``start``, ``rev<N>`` for the review of plan
            revision N, the job's stage for ``resume``. A worker that finds the job past it does nothing.
    """

    job_id: str
    action: Action
    decision: Literal["approve", "feedback", "cancel"] = "approve"
    feedback: str = ""
    inputs: tuple[str, ...] = ()
    stage: str = ""
    question: str = ""

    @property
    def key(self) -> str:
        """``start@intake``, ``review@rev2``, ``resume@supervise``: what the worker logs and checks."""
        return f"{self.action}@{self.stage or (START_STAGE if self.action == 'start' else '?')}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for engines that serialize their messages."""
        return {**asdict(self), "inputs": list(self.inputs)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkItem:
        return cls(**{**data, "inputs": tuple(data.get("inputs", ()))})


class JobQueue(Protocol):
    """Where the API puts work; some worker calls the handler with each item.

    Attributes:
        in_process: True when the items run in this process: the manager then keeps the runtime of each job with
            work here, so that a cancel reaches it and a second review of one plan is refused at once.
    """

    in_process: bool

    def put(self, item: WorkItem) -> None:
        """Queue an item. Items of one job run one at a time, in the order they were put.

        Raises:
            QueueFull: Too many items are waiting.
        """
        ...

    def close(self) -> None:
        """Stop taking items; items already running may finish or be abandoned (they resume on the next start)."""
        ...


def broker_reachable(queue: object) -> bool | None:
    """Whether the queue's broker answers now (``queue.broker_ok()``), or None for a queue with no broker."""
    check = getattr(queue, "broker_ok", None)
    return None if check is None else bool(check())


class ThreadPoolJobQueue:
    """A bounded pool of daemon threads in this process, with a FIFO in front.

    Daemon threads: a server that stops abandons its running jobs instead of waiting for them, and the next server
    start resumes them from disk.

    Args:
        handler: Runs one item; its exceptions are logged, never propagated.
        workers: Items that run at once.
        max_queued: Items that may wait (not counting running ones) before :meth:`put` raises QueueFull.
    """

    in_process = True

    def __init__(self, handler: Callable[[WorkItem], None], *, workers: int = 4, max_queued: int = 1000) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.handler = handler
        self.max_queued = max_queued
        self._cond = threading.Condition()
        self._ready: deque[WorkItem] = deque()
        self._later: dict[str, deque[WorkItem]] = {}  # items of a job that already has one ready or running
        self._claimed: set[str] = set()
        self._closed = False
        self._running = 0
        self._threads = [
            threading.Thread(target=self._work, name=f"insightloom-worker-{n}", daemon=True) for n in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._ready) + sum(len(q) for q in self._later.values())

    @property
    def running(self) -> int:
        with self._cond:
            return self._running

    def put(self, item: WorkItem) -> None:
        with self._cond:
            if self._closed:
                raise QueueFull("the server is shutting down")
            if len(self._ready) + sum(len(q) for q in self._later.values()) >= self.max_queued:
                raise QueueFull(f"{self.max_queued} items are already waiting")
            if item.job_id in self._claimed:
                self._later.setdefault(item.job_id, deque()).append(item)
            else:
                self._claimed.add(item.job_id)
                self._ready.append(item)
                self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _next(self) -> WorkItem | None:
        with self._cond:
            while not self._ready and not self._closed:
                self._cond.wait()
            if self._closed:
                return None
            self._running += 1
            return self._ready.popleft()

    def _finished(self, item: WorkItem) -> None:
        with self._cond:
            self._running -= 1
            later = self._later.get(item.job_id)
            if later:
                self._ready.append(later.popleft())  # the job stays claimed by its next item
                if not later:
                    del self._later[item.job_id]
                self._cond.notify()
            else:
                self._claimed.discard(item.job_id)

    def _work(self) -> None:
        while (item := self._next()) is not None:
            try:
                self.handler(item)
            except Exception:  # a broken item must not take a worker down with it
                logger.exception("work item %s on job %s failed", item.action, item.job_id)
            finally:
                self._finished(item)
