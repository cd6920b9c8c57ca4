"""The API over an S3 artifact store (moto's server on loopback): jobs, pages, downloads and events come from S3.

The API machine keeps only working copies; a second API process with an empty working folder must answer the same,
and whatever a script could have planted in a working copy (a symbolic link) is never served.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from insightloom.config import Settings
from insightloom.events import EventLog
from insightloom.service import ServiceConfig, WorkItem, create_app
from insightloom.storage.s3 import S3Store
from repo_paths import DATA

MOON = DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"
TOKEN = "ana-token-0123456789abcdef"
ANA = {"Authorization": f"Bearer {TOKEN}"}
REQUEST = "Analyze this data and write a DOCX report"


class RemoteQueue:
    """A distributed-style queue that only records: the work would run on a worker elsewhere."""

    in_process = False

    def __init__(self) -> None:
        self.items: list[WorkItem] = []

    def put(self, item: WorkItem) -> None:
        self.items.append(item)

    def close(self) -> None:
        pass


def s3_app(s3_uri: str, work_dir: Path, queue: RemoteQueue) -> FastAPI:
    settings = Settings(artifacts=work_dir, artifact_store=s3_uri).with_provider("offline")
    return create_app(settings, ServiceConfig(tokens={TOKEN: "ana"}), queue=queue, cwd=work_dir)


def keys(store: S3Store) -> set[str]:
    pages = store.client.get_paginator("list_objects_v2").paginate(Bucket=store.bucket)
    return {obj["Key"] for page in pages for obj in page.get("Contents", [])}


@pytest.fixture
def queue() -> RemoteQueue:
    return RemoteQueue()


@pytest.fixture
def submitted(s3_uri: str, tmp_path: Path, queue: RemoteQueue) -> Iterator[str]:
    """A job submitted through one API process (working copies in ``api-a``); yields its id."""
    with TestClient(s3_app(s3_uri, tmp_path / "api-a", queue)) as client:
        created = client.post(
            "/jobs", headers=ANA, data={"request": REQUEST}, files=[("files", (MOON.name, MOON.read_bytes()))]
        )
        assert created.status_code == 201, created.text
        yield created.json()["id"]


@pytest.fixture
def fresh(s3_uri: str, tmp_path: Path, queue: RemoteQueue) -> Iterator[TestClient]:
    """A second API process whose working folder starts empty: everything it knows comes from S3."""
    with TestClient(s3_app(s3_uri, tmp_path / "api-b", queue)) as client:
        yield client


def test_submit_puts_the_job_folder_and_its_owner_in_s3(
    s3_uri: str, submitted: str, queue: RemoteQueue, tmp_path: Path
) -> None:
    store = S3Store(s3_uri, work_dir=tmp_path / "reader")
    found = keys(store)
    base = f"{store.prefix}/{submitted}"
    assert {f"{base}/job.json", f"{base}/request.json", f"{base}/data/{MOON.name}"} <= found
    assert f"{store.prefix}/.owners/{submitted}" in found
    assert store.read_meta("owners", submitted) == "ana\n"
    assert json.loads(store.read_bytes(submitted, "job.json") or b"")["status"] == "queued"
    assert [item.key for item in queue.items] == ["start@intake"]


def test_another_api_process_answers_from_s3_alone(submitted: str, fresh: TestClient, tmp_path: Path) -> None:
    assert not (tmp_path / "api-b" / submitted).exists()
    page = fresh.get(f"/jobs/{submitted}", headers=ANA)
    assert page.status_code == 200 and page.json()["status"] == "queued" and page.json()["request"] == REQUEST
    assert f"data/{MOON.name}" in page.json()["artifacts"]
    assert [job["id"] for job in fresh.get("/jobs", headers=ANA).json()["jobs"]] == [submitted]
    download = fresh.get(f"/jobs/{submitted}/artifacts/data/{MOON.name}", headers=ANA)
    assert download.status_code == 200 and download.content == MOON.read_bytes()
    assert download.headers["content-disposition"] == f'attachment; filename="{MOON.name}"'
    assert download.headers["content-security-policy"] == "sandbox"
    assert not (tmp_path / "api-b" / submitted).exists()  # served from S3, not from a pulled copy


def test_sse_replays_the_events_a_worker_pushed(s3_uri: str, submitted: str, fresh: TestClient, tmp_path: Path) -> None:
    worker = S3Store(s3_uri, work_dir=tmp_path / "worker")
    job_dir = worker.pull(submitted)
    log = EventLog(job_dir / "events.jsonl", submitted)
    log.emit("stage", name="intake")
    log.emit("completed", report="final_report.docx")
    assert worker.push(submitted) >= 1
    with fresh.stream("GET", f"/jobs/{submitted}/events", headers=ANA) as response:
        body = response.read().decode()
    assert response.status_code == 200
    frames = [block for block in body.split("\n\n") if block.startswith("id: ")]
    assert [frame.splitlines()[1] for frame in frames] == ["event: stage", "event: completed"]
    after = fresh.get(f"/jobs/{submitted}/events", headers={**ANA, "Last-Event-ID": "1"}).text
    assert "event: stage" not in after and "event: completed" in after


def test_a_link_planted_in_the_working_copy_is_never_served(submitted: str, fresh: TestClient, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret", encoding="utf-8")
    copy = tmp_path / "api-b" / submitted
    (copy / "data").mkdir(parents=True)
    (copy / "secret.txt").symlink_to(secret)
    (copy / "data" / MOON.name).symlink_to(secret)
    assert fresh.get(f"/jobs/{submitted}/artifacts/secret.txt", headers=ANA).status_code == 404
    download = fresh.get(f"/jobs/{submitted}/artifacts/data/{MOON.name}", headers=ANA)
    assert download.status_code == 200 and download.content == MOON.read_bytes()
    assert "secret.txt" not in fresh.get(f"/jobs/{submitted}", headers=ANA).json()["artifacts"]


def test_cancel_of_a_queued_job_reaches_the_worker_through_s3(
    s3_uri: str, submitted: str, fresh: TestClient, tmp_path: Path
) -> None:
    assert fresh.post(f"/jobs/{submitted}/cancel", headers=ANA).json() == {"id": submitted, "cancel": "requested"}
    store = S3Store(s3_uri, work_dir=tmp_path / "worker")
    assert store.read_bytes(submitted, "cancel.request")


def test_a_failed_submit_leaves_nothing_in_s3(s3_uri: str, tmp_path: Path) -> None:
    from insightloom.errors import BrokerUnavailable

    class DownQueue(RemoteQueue):
        def put(self, item: WorkItem) -> None:
            raise BrokerUnavailable("Redis is down.", "start it.")

    with TestClient(s3_app(s3_uri, tmp_path / "api-a", DownQueue())) as client:
        response = client.post(
            "/jobs", headers=ANA, data={"request": REQUEST}, files=[("files", (MOON.name, MOON.read_bytes()))]
        )
    assert response.status_code == 503 and response.headers["retry-after"] == "30"
    store = S3Store(s3_uri, work_dir=tmp_path / "reader")
    assert keys(store) == set() and store.job_ids() == []
    assert not [p for p in (tmp_path / "api-a").iterdir() if not p.name.startswith(".")]
