"""The service works through its artifact store: owners as records, job pages, events and downloads read through it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from servicekit import ANA, MOON, REQUEST, RecordingQueue, make_app, make_job, upload

from insightloom.storage import HeldLock
from insightloom.storage.local import LocalStore


class RemoteLike(LocalStore):
    """A local store that says it is remote, and records what the manager asks of it."""

    remote = True

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.calls: list[str] = []

    def pull(self, job_id: str) -> Path:
        self.calls.append("pull")
        return super().pull(job_id)

    def push(self, job_id: str) -> int:
        self.calls.append("push")
        return super().push(job_id)

    def write_bytes(self, job_id: str, relative: str, data: bytes) -> None:
        self.calls.append(f"write {relative}")
        super().write_bytes(job_id, relative, data)

    @contextlib.contextmanager
    def lock(self, job_id: str) -> Iterator[HeldLock]:
        self.calls.append("lock")
        with super().lock(job_id) as held:
            yield held
        self.calls.append("unlock")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "artifacts"


@pytest.fixture
def queue() -> RecordingQueue:
    return RecordingQueue()


@pytest.fixture
def client(root: Path, queue: RecordingQueue) -> Iterator[TestClient]:
    with TestClient(make_app(root, queue)) as test_client:
        yield test_client


def remote(client: TestClient) -> RemoteLike:
    manager = client.app.state.manager  # type: ignore[attr-defined]
    manager.store = RemoteLike(manager.root)
    return manager.store


def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.json"
    path.write_text(json.dumps({"request": "host secret", "calls": 99}), encoding="utf-8")
    return path


def test_submit_pushes_the_job_and_records_its_owner_in_the_store(client: TestClient, root: Path) -> None:
    store = remote(client)
    created = client.post("/jobs", headers=ANA, data={"request": REQUEST}, files=[upload()])
    assert created.status_code == 201
    job_id = created.json()["id"]
    assert store.read_meta("owners", job_id) == "ana\n"
    assert (root / ".owners" / job_id).read_text(encoding="utf-8") == "ana\n"  # where existing jobs keep theirs
    assert store.calls[0] == "push"
    assert f"data/{MOON.name}" in store.list_files(job_id)


def test_job_pages_never_read_through_a_planted_link(client: TestClient, root: Path, tmp_path: Path) -> None:
    job = make_job(root, "ana", status="awaiting_review")
    target = secret(tmp_path)
    for name in ("plan.md", "usage.json", "request.json"):
        (job / name).unlink(missing_ok=True)
        (job / name).symlink_to(target)
    page = client.get(f"/jobs/{job.name}", headers=ANA).json()
    assert page["plan"] is None and page["usage"] is None and page["request"] is None
    assert "plan.md" not in page["artifacts"] and "host secret" not in json.dumps(page)
    listed = client.get("/jobs", headers=ANA).json()["jobs"]
    assert [j["request"] for j in listed] == [""]


def test_events_are_read_through_the_store_never_through_a_link(client: TestClient, root: Path, tmp_path: Path) -> None:
    job = make_job(root, "ana", status="running")
    manager = client.app.state.manager  # type: ignore[attr-defined]
    read = manager.events_reader(job.name, "ana")
    assert read(0) == b""  # no events yet
    own = b'{"id": 1, "kind": "stage", "data": {"name": "intake"}}\n'
    (job / "events.jsonl").write_bytes(own)
    assert own and read(0) == own and read(len(own)) == b""
    (job / "events.jsonl").unlink()
    planted = tmp_path / "planted.jsonl"
    planted.write_text('{"id": 1, "kind": "completed", "data": {"report": "host secret"}}\n', encoding="utf-8")
    (job / "events.jsonl").symlink_to(planted)
    assert read(0) == b""


def test_a_remote_store_download_has_the_local_headers(client: TestClient, root: Path) -> None:
    job = make_job(root, "ana", status="completed")
    relative = f"data/{MOON.name}"
    (job / "data").mkdir(exist_ok=True)
    (job / relative).write_bytes(MOON.read_bytes())
    local = client.get(f"/jobs/{job.name}/artifacts/{relative}", headers=ANA)
    remote(client)
    served = client.get(f"/jobs/{job.name}/artifacts/{relative}", headers=ANA)
    assert local.status_code == served.status_code == 200
    assert served.content == local.content == MOON.read_bytes()
    for header in ("content-disposition", "content-security-policy", "cache-control", "x-content-type-options"):
        assert served.headers[header] == local.headers[header], header
    assert served.headers["content-type"].startswith("text/csv")
    assert client.get(f"/jobs/{job.name}/artifacts/job.lock", headers=ANA).status_code == 404


def test_cancel_of_a_job_running_elsewhere_writes_the_request_through_the_store(client: TestClient, root: Path) -> None:
    job = make_job(root, "ana", status="running")
    store = remote(client)
    assert client.post(f"/jobs/{job.name}/cancel", headers=ANA).json()["cancel"] == "requested"
    assert store.calls == ["write cancel.request"] and (job / "cancel.request").is_file()


def test_cancel_of_a_waiting_job_pulls_cancels_and_pushes_under_the_lock(client: TestClient, root: Path) -> None:
    job = make_job(root, "ana", status="awaiting_review")
    store = remote(client)
    assert client.post(f"/jobs/{job.name}/cancel", headers=ANA).json()["cancel"] == "cancelled"
    assert store.calls == ["lock", "pull", "push", "unlock"]
    assert json.loads((job / "job.json").read_text(encoding="utf-8"))["status"] == "cancelled"
    assert not (job / "job.lock").exists()


def test_a_review_names_the_plan_revision_it_answers(client: TestClient, root: Path, queue: RecordingQueue) -> None:
    job = make_job(root, "ana", status="awaiting_review", revision=2, max_revisions=3)
    assert client.post(f"/jobs/{job.name}/review", headers=ANA, json={"approve": True}).status_code == 202
    assert [item.key for item in queue.items] == ["review@rev2"]
