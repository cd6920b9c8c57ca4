"""A job killed mid-Supervisor resumes from its plan with nothing lost or duplicated; a live lock is respected."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crashing_job import run_crashing_job
from insightloom.cli import app
from insightloom.joblock import LOCK_FILE
from repo_paths import DATA

pytestmark = pytest.mark.e2e
MOON = DATA / "moon-market-en"


def test_killed_job_resumes_without_lost_or_duplicated_calculations(tmp_path: Path) -> None:
    job = tmp_path / "job"
    child = run_crashing_job(MOON, artifacts=tmp_path / "artifacts", job_dir=job)
    assert child.returncode == 9, child.stderr[-2000:]
    status = json.loads((job / "job.json").read_text())
    assert (status["status"], status["stage"]) == ("running", "supervise")
    before = json.loads((job / "calculation_metadata.json").read_text())["calculations"]
    assert before and not (job / "citations.json").exists()
    assert (job / LOCK_FILE).exists()  # left behind by the dead process: stale, so resume may take it

    result = CliRunner().invoke(app, ["resume", str(job), "--yes", "-q"])
    assert result.exit_code == 0, result.stderr
    after = json.loads((job / "calculation_metadata.json").read_text())["calculations"]
    assert [c["id"] for c in after] == [c["id"] for c in before]  # nothing lost, nothing duplicated
    assert json.loads((job / "job.json").read_text())["status"] == "completed"
    assert (job / "final_report.docx").exists() and not (job / LOCK_FILE).exists()
    coder_runs = json.loads((job / "transcripts" / "coder.json").read_text())["invocations"]
    assert len(coder_runs) == 1  # the Coder's checked section was not redone


def test_resume_refuses_a_job_whose_lock_is_alive(tmp_path: Path) -> None:
    job = tmp_path / "job"
    done = CliRunner().invoke(
        app, ["run", str(MOON), "-r", "hello there", "--provider", "offline", "--yes", "-q", "--job-dir", str(job)]
    )
    assert done.exit_code == 0
    status = json.loads((job / "job.json").read_text())
    status.update(status="running", stage="supervise")
    (job / "job.json").write_text(json.dumps(status))
    (job / LOCK_FILE).write_text(json.dumps({"pid": os.getpid(), "host": os.uname().nodename, "heartbeat": 0}))
    result = CliRunner().invoke(app, ["resume", str(job), "--yes", "-q"])
    assert result.exit_code == 2 and "running elsewhere" in result.stderr
