"""A queue whose broker is down: 503 with Retry-After and no orphan job, /healthz stays 200, /readyz says 503."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from servicekit import ANA, REQUEST, RecordingQueue, make_app, upload

from insightloom.errors import BrokerUnavailable, QueueFull
from insightloom.service.app import BrokerProbe
from insightloom.service.manager import JOB_ID, OWNERS_DIR
from insightloom.service.queue import WorkItem


class FlakyBrokerQueue(RecordingQueue):
    """A distributed-style queue whose broker can be taken down and brought back."""

    in_process = False

    def __init__(self) -> None:
        super().__init__()
        self.down = True
        self.checks = 0

    def put(self, item: WorkItem) -> None:
        if self.down:
            raise BrokerUnavailable(
                "Redis at 127.0.0.1:6379 refused the connection.", "start Redis and try again.", retry_after_s=7
            )
        super().put(item)

    def broker_ok(self) -> bool:
        self.checks += 1
        return not self.down


class InProcessFlakyQueue(FlakyBrokerQueue):
    in_process = True


@pytest.fixture
def queue() -> FlakyBrokerQueue:
    return FlakyBrokerQueue()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "artifacts"


@pytest.fixture
def client(root: Path, queue: FlakyBrokerQueue) -> Iterator[TestClient]:
    with TestClient(make_app(root, queue)) as test_client:
        test_client.app.state.broker.ttl_s = 0.0  # type: ignore[attr-defined]  # every probe asks the broker
        yield test_client


def submit(client: TestClient):
    return client.post("/jobs", headers=ANA, data={"request": REQUEST}, files=[upload()])


def job_folders(root: Path) -> list[str]:
    return [p.name for p in root.iterdir() if JOB_ID.fullmatch(p.name)] if root.is_dir() else []


def owner_records(root: Path) -> list[str]:
    owners = root / OWNERS_DIR
    return [p.name for p in owners.iterdir()] if owners.is_dir() else []


@pytest.mark.parametrize("queue_class", [FlakyBrokerQueue, InProcessFlakyQueue])
def test_submit_while_the_broker_is_down_is_a_503_that_leaves_no_job(root: Path, queue_class: type) -> None:
    queue = queue_class()
    with TestClient(make_app(root, queue)) as client:
        response = submit(client)
        assert response.status_code == 503
        assert response.headers["retry-after"] == "7"
        assert response.json() == {
            "detail": "Redis at 127.0.0.1:6379 refused the connection.",
            "fix": "start Redis and try again.",
        }
        assert client.get("/jobs", headers=ANA).json() == {"jobs": []}
        assert not client.app.state.manager._live  # type: ignore[attr-defined]  # no runtime kept for it
    assert job_folders(root) == [] and owner_records(root) == [] and queue.items == []


def test_a_full_queue_is_a_503_with_the_default_retry_after(root: Path) -> None:
    class FullQueue(RecordingQueue):
        def put(self, item: WorkItem) -> None:
            raise QueueFull("1000 items are already waiting")

    with TestClient(make_app(root, FullQueue())) as client:
        response = submit(client)
    assert response.status_code == 503 and response.headers["retry-after"] == "30"
    assert "busy" in response.json()["detail"] and response.json()["fix"] == "try again in a minute."
    assert job_folders(root) == [] and owner_records(root) == []


def test_health_stays_200_and_readiness_follows_the_broker(client: TestClient, queue: FlakyBrokerQueue) -> None:
    health = client.get("/healthz")
    assert health.status_code == 200
    assert health.json()["status"] == "ok" and health.json()["broker"] == "unreachable" and health.json()["version"]
    ready = client.get("/readyz")
    assert ready.status_code == 503 and int(ready.headers["retry-after"]) > 0
    assert ready.json()["detail"] == "The job queue's broker cannot be reached."
    assert "CELERY_BROKER_URL" in ready.json()["fix"]

    queue.down = False
    back = client.get("/readyz")
    assert back.status_code == 200 and back.json()["status"] == "ready" and back.json()["broker"] == "ok"
    assert client.get("/healthz").json()["broker"] == "ok"
    created = submit(client)
    assert created.status_code == 201
    assert [item.key for item in queue.items] == ["start@intake"]
    assert job_folders(client.app.state.manager.root) == [created.json()["id"]]  # type: ignore[attr-defined]


def test_probes_need_no_token_and_the_in_process_pool_has_no_broker(root: Path) -> None:
    with TestClient(make_app(root)) as client:  # the default queue: threads in this process
        health, ready = client.get("/healthz"), client.get("/readyz")
    assert health.status_code == 200 and health.json()["broker"] == "none"
    assert ready.status_code == 200 and ready.json() == {**ready.json(), "status": "ready", "broker": "none"}


def test_the_broker_is_asked_at_most_once_per_ttl(queue: FlakyBrokerQueue) -> None:
    now = [100.0]
    probe = BrokerProbe(lambda: queue, ttl_s=2.0, clock=lambda: now[0])
    assert [probe.state() for _ in range(5)] == ["unreachable"] * 5
    assert queue.checks == 1
    queue.down = False
    now[0] += 1.9
    assert probe.state() == "unreachable" and queue.checks == 1  # the cached answer still stands
    now[0] += 0.2
    assert probe.state() == "ok" and queue.checks == 2


def test_a_broker_check_that_raises_is_unreachable() -> None:
    class Broken(RecordingQueue):
        def broker_ok(self) -> bool:
            raise ConnectionError("connection refused")

    assert BrokerProbe(lambda: Broken()).state() == "unreachable"
