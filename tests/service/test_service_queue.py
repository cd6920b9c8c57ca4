"""The in-process queue: bounded workers, one item per job at a time and in order, a bounded backlog."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from insightloom.service import QueueFull, ThreadPoolJobQueue, WorkItem

WAIT_S = 30.0


class GatedHandler:
    """Each item signals when it starts and then waits until the test opens its gate."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: dict[str, threading.Event] = {}
        self.gates: dict[str, threading.Event] = {}
        self.order: list[str] = []
        self.running = 0
        self.max_running = 0

    def key(self, item: WorkItem) -> str:
        return f"{item.job_id}:{item.feedback}"

    def event(self, table: dict[str, threading.Event], key: str) -> threading.Event:
        with self.lock:
            return table.setdefault(key, threading.Event())

    def __call__(self, item: WorkItem) -> None:
        key = self.key(item)
        with self.lock:
            self.order.append(key)
            self.running += 1
            self.max_running = max(self.max_running, self.running)
        self.event(self.started, key).set()
        try:
            if not self.event(self.gates, key).wait(WAIT_S):
                raise AssertionError(f"gate of {key} never opened")
            if item.decision == "boom":
                raise RuntimeError("a failing item")
        finally:
            with self.lock:
                self.running -= 1

    def wait_started(self, key: str) -> None:
        assert self.event(self.started, key).wait(WAIT_S), f"{key} never started"

    def open(self, key: str) -> None:
        self.event(self.gates, key).set()


def item(job: str, n: int, decision: str = "approve") -> WorkItem:
    return WorkItem(job, "review", decision=decision, feedback=str(n))


@pytest.fixture
def handler() -> GatedHandler:
    return GatedHandler()


@pytest.fixture
def queue(handler: GatedHandler) -> Iterator[ThreadPoolJobQueue]:
    pool = ThreadPoolJobQueue(handler, workers=3, max_queued=10)
    yield pool
    for gate in list(handler.gates.values()):
        gate.set()
    pool.close()


def test_items_of_one_job_run_one_at_a_time_in_order(queue: ThreadPoolJobQueue, handler: GatedHandler) -> None:
    queue.put(item("a", 1))
    queue.put(item("a", 2))
    queue.put(item("b", 1))
    queue.put(item("c", 1))
    for key in ("a:1", "b:1", "c:1"):  # three workers: a:2 waits for a:1 although a worker is free
        handler.wait_started(key)
    assert "a:2" not in handler.order and queue.running == 3 and queue.waiting == 1
    handler.open("a:1")
    handler.wait_started("a:2")
    assert handler.order.index("a:2") > handler.order.index("a:1")
    for key in ("a:2", "b:1", "c:1"):
        handler.open(key)


def test_the_pool_is_bounded_and_the_backlog_too(queue: ThreadPoolJobQueue, handler: GatedHandler) -> None:
    queue.max_queued = 3
    for job in ("a", "b", "c"):
        queue.put(item(job, 1))
    for job in ("a", "b", "c"):
        handler.wait_started(f"{job}:1")
    for job in ("d", "e", "f"):
        queue.put(item(job, 1))
    with pytest.raises(QueueFull):
        queue.put(item("g", 1))
    assert queue.waiting == 3 and handler.max_running == 3
    for job in "abcdef":
        handler.open(f"{job}:1")
    for job in "def":
        handler.wait_started(f"{job}:1")
    assert handler.max_running == 3


def test_a_failing_item_does_not_stop_its_worker(handler: GatedHandler) -> None:
    pool = ThreadPoolJobQueue(handler, workers=1)
    try:
        pool.put(item("a", 1, decision="boom"))
        pool.put(item("a", 2))
        handler.open("a:1")
        handler.wait_started("a:2")
        handler.open("a:2")
    finally:
        pool.close()
    with pytest.raises(QueueFull):
        pool.put(item("a", 3))  # closed


def test_work_items_round_trip_as_plain_data() -> None:
    original = WorkItem("20260101T000000Z-0123456789ab", "start", inputs=("a.csv", "b.xlsx"))
    assert WorkItem.from_dict(original.to_dict()) == original
    assert original.to_dict()["inputs"] == ["a.csv", "b.xlsx"]
