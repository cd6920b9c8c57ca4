"""A cancel written while a worker runs a job up to its plan review, too late for the job to see, still ends it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from servicekit import MOON, make_job

from insightloom.config import Settings
from insightloom.service import ServiceConfig, WorkItem
from insightloom.service.manager import JobManager
from insightloom.workflow import stages

pytestmark = pytest.mark.e2e


def test_a_cancel_that_lands_after_the_last_check_is_applied_before_the_lock_is_released(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "artifacts"
    job = make_job(root, "ana")
    shutil.copy(MOON, job / "data" / MOON.name)  # where a submission leaves its uploads
    real = stages.request_review

    def review_then_cancel_arrives(rt, revision):  # type: ignore[no-untyped-def]
        real(rt, revision)
        rt.job.request_cancel()  # the API wrote cancel.request while the job was still "running"

    monkeypatch.setattr(stages, "request_review", review_then_cancel_arrives)
    manager = JobManager(Settings(artifacts=root).with_provider("offline"), ServiceConfig())
    assert manager.run_item(WorkItem(job.name, "start", stage="intake")) == "run"
    assert json.loads((job / "job.json").read_text())["status"] == "cancelled"
