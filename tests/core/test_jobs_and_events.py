import json
import re
from pathlib import Path

import pytest

from insightloom.errors import BadInputError
from insightloom.jobs import JobFolder


def test_job_id_and_layout(tmp_path: Path, contract) -> None:
    job = JobFolder.create(tmp_path / "artifacts")
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{12}", job.id)
    assert job.root == (tmp_path / "artifacts" / job.id).resolve()
    for name in ("data", "cache", "code", "charts", "transcripts"):
        assert (job.root / name).is_dir()
    status = json.loads((job.root / "job.json").read_text())
    contract("job", status)
    assert status["created_at"].endswith("Z")


def test_job_dir_is_exact_and_refuses_non_empty(tmp_path: Path) -> None:
    target = tmp_path / "exact"
    job = JobFolder.create(tmp_path / "artifacts", target)
    assert job.root == target.resolve()
    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{12}", job.id)  # id is generated even with --job-dir
    with pytest.raises(BadInputError) as info:
        JobFolder.create(tmp_path / "artifacts", target)
    assert info.value.exit_code == 2 and "not empty" in str(info.value)


def test_failed_status_records_error(tmp_path: Path, contract) -> None:
    job = JobFolder.create(tmp_path)
    job.set_stage("plan")
    job.update(status="failed", error="boom")
    data = job.status()
    contract("job", data)
    assert data["stage"] == "plan" and data["error"] == "boom"


def test_events_have_increasing_ids_and_replay(tmp_path: Path, contract) -> None:
    job = JobFolder.create(tmp_path)
    seen = []
    job.events.subscribe(seen.append)
    job.set_stage("intake")
    job.events.emit("agent_start", agent="coder")
    job.events.emit("completed", report="final_report.docx")
    lines = [json.loads(line) for line in (job.root / "events.jsonl").read_text().splitlines()]
    assert [e["id"] for e in lines] == [1, 2, 3]
    for event in lines:
        contract("event", event)
        assert event["ts"].endswith("Z") and event["job_id"] == job.id
    assert [e.kind for e in seen] == ["stage", "agent_start", "completed"]
    reopened = JobFolder.open(job.root)
    assert reopened.events.emit("usage", calls=1).id == 4
    assert [e.id for e in reopened.events.read(after_id=2)] == [3, 4]
