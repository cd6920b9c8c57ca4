"""A single-user `serve` lists and opens the jobs the CLI made elsewhere (`--job-dir`), as `insightloom jobs` does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fastapi.testclient import TestClient
from servicekit import ANA, MOON, REQUEST, TOKENS, RecordingQueue, make_job, offline_settings

from insightloom.job_registry import record_job
from insightloom.service import ServiceConfig, create_app
from insightloom.workflow import JobOptions, create_job


def _cli_job_elsewhere(tmp_path: Path, registry: Path) -> str:
    """A job as `insightloom run --job-dir` leaves it: outside the artifacts folder, recorded in the registry."""
    settings = offline_settings(tmp_path / "cli-artifacts")
    opts = JobOptions(inputs=[MOON], request=REQUEST, settings=settings, job_dir=tmp_path / "q3", cwd=tmp_path)
    rt = create_job(opts)
    rt.job.update(status="completed", stage="done")
    record_job(registry, rt.job.id, rt.root)
    return rt.job.id


def test_a_single_user_server_lists_and_opens_the_cli_s_jobs_elsewhere(tmp_path: Path) -> None:
    root, registry = tmp_path / "artifacts", tmp_path / "registry" / "jobs.json"
    settings = dataclasses.replace(offline_settings(root), jobs_registry=registry)
    here = make_job(root, None, status="completed")
    elsewhere = _cli_job_elsewhere(tmp_path, registry)
    with TestClient(create_app(settings, ServiceConfig(), queue=RecordingQueue(), cwd=root)) as client:
        listed = {job["id"]: job for job in client.get("/jobs").json()["jobs"]}
        assert set(listed) == {here.name, elsewhere}
        assert listed[elsewhere]["status"] == "completed" and listed[elsewhere]["request"] == REQUEST
        opened = client.get(f"/jobs/{elsewhere}").json()
        assert opened["status"] == "completed" and "request.json" in opened["artifacts"]
        assert client.get(f"/jobs/{elsewhere}/artifacts/request.json").status_code == 200
    assert not (root / elsewhere).exists()


def test_a_server_with_tokens_never_shows_the_cli_s_jobs(tmp_path: Path) -> None:
    root, registry = tmp_path / "artifacts", tmp_path / "registry" / "jobs.json"
    settings = dataclasses.replace(offline_settings(root), jobs_registry=registry)
    elsewhere = _cli_job_elsewhere(tmp_path, registry)
    app = create_app(settings, ServiceConfig(tokens=dict(TOKENS)), queue=RecordingQueue(), cwd=root)
    with TestClient(app) as client:
        assert client.get("/jobs", headers=ANA).json()["jobs"] == []
        assert client.get(f"/jobs/{elsewhere}", headers=ANA).status_code == 404
