"""A job stopped in any stage resumes from that stage only: no second intake, no second Coordinator, same feedback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from insightloom.config import Settings
from insightloom.errors import BadInputError
from insightloom.workflow import JobOptions, create_job, load_runtime, resume, start
from repo_paths import DATA

pytestmark = pytest.mark.e2e
MOON = DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"


def stage_events(job: Path) -> list[str]:
    lines = (job / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [e["data"]["name"] for e in map(json.loads, lines) if e["kind"] == "stage"]


def job_awaiting_review(tmp_path: Path) -> Path:
    opts = JobOptions(
        inputs=[MOON], request="Analyze this data", settings=Settings().with_provider("offline"), job_dir=tmp_path / "j"
    )
    rt = create_job(opts)
    assert start(rt, opts.inputs) is None
    return rt.root


def stopped_in(job: Path, stage: str, **extra: object) -> None:
    """Make the job look like its runner died in ``stage`` (the lock it left is dead: no lock file at all)."""
    status = json.loads((job / "job.json").read_text(encoding="utf-8"))
    status.update(status="running", stage=stage, **extra)
    (job / "job.json").write_text(json.dumps(status), encoding="utf-8")


def test_a_job_stopped_while_planning_plans_again_without_a_second_intake(tmp_path: Path) -> None:
    job = job_awaiting_review(tmp_path)
    assert stage_events(job) == ["intake", "coordinate", "plan", "review"]
    stopped_in(job, "plan")
    assert resume(load_runtime(job)) is None
    assert stage_events(job) == ["intake", "coordinate", "plan", "review", "plan", "review"]
    assert json.loads((job / "job.json").read_text())["status"] == "awaiting_review"


def test_a_revision_in_flight_is_redone_with_the_same_feedback(tmp_path: Path) -> None:
    job = job_awaiting_review(tmp_path)
    stopped_in(job, "plan", revising={"revision": 1, "feedback": "Skip the correlation analysis, please."})
    assert resume(load_runtime(job)) is None
    status = json.loads((job / "job.json").read_text())
    assert (status["status"], status["revision"], status.get("revising")) == ("awaiting_review", 1, None)
    kinds = [json.loads(line)["kind"] for line in (job / "events.jsonl").read_text().splitlines()]
    assert kinds.count("plan_revised") == 1 and "intake" not in stage_events(job)[4:]
    assert "removed: correlate" in (job / "plan.md").read_text().lower()  # the feedback reached the Planner


def test_a_plan_that_was_never_put_up_for_review_is_put_up_again_not_run(tmp_path: Path) -> None:
    job = job_awaiting_review(tmp_path)
    stopped_in(job, "review")  # the plan was written, the runner died before asking for the review
    assert resume(load_runtime(job)) is None
    assert json.loads((job / "job.json").read_text())["status"] == "awaiting_review"
    assert "supervise" not in stage_events(job)


def test_an_approval_in_flight_resumes_at_supervise(tmp_path: Path) -> None:
    job = job_awaiting_review(tmp_path)
    stopped_in(job, "review", approved_revision=0)
    outcome = resume(load_runtime(job))
    assert outcome is not None and outcome.status == "completed", outcome and outcome.error
    assert stage_events(job) == ["intake", "coordinate", "plan", "review", "supervise", "done"]


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        (lambda d: d.pop("request"), "'request' is a required property"),
        (lambda d: d.update(inputs="moon.csv"), "field 'inputs'"),
        (None, "cannot be read as JSON"),
    ],
)
def test_a_damaged_request_file_is_a_named_error_on_resume(
    tmp_path: Path, damage: Callable[[dict[str, Any]], object] | None, named: str
) -> None:
    """A resume reads request.json, which any process could have changed: a KeyError once, now the file and field."""
    job = job_awaiting_review(tmp_path)
    path = job / "request.json"
    if damage is None:
        path.write_text('{"request": "Analyze', encoding="utf-8")
    else:
        request = json.loads(path.read_text(encoding="utf-8"))
        damage(request)
        path.write_text(json.dumps(request), encoding="utf-8")
    with pytest.raises(BadInputError) as info:
        load_runtime(job)
    assert str(path) in info.value.message and named in info.value.message
    assert "insightloom run" in info.value.fix
    assert (job / "cache" / "profile.json").is_file()  # nothing of the job is lost
