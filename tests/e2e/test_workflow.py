"""The review loop, cancellation and job isolation, on the offline model in one process."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from insightloom.config import Settings
from insightloom.workflow import AutoApprove, Decision, JobOptions, run_job
from repo_paths import DATA

pytestmark = pytest.mark.e2e
MOON = DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"
YUMMY = DATA / "yummy-food" / "yummy-food-market.csv"


def options(tmp_path: Path, data: Path, name: str = "job", **kwargs) -> JobOptions:
    settings = Settings().with_provider("offline")
    for key, value in kwargs.items():
        setattr(settings, key, value)
    return JobOptions(
        inputs=[data],
        request="Analyze this data and write a DOCX report",
        settings=settings,
        job_dir=tmp_path / name,
        cwd=tmp_path,
    )


class ScriptedReviewer:
    def __init__(self, answers: list[Decision]) -> None:
        self.answers = answers
        self.seen: list[tuple[str, int, int]] = []

    def review(self, plan: str, revision: int, max_revisions: int) -> Decision:
        self.seen.append((plan, revision, max_revisions))
        return self.answers.pop(0)


def events(job_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (job_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()]


def test_feedback_revises_the_plan_then_approval_runs_it(tmp_path: Path) -> None:
    reviewer = ScriptedReviewer([Decision("feedback", "Skip the correlation analysis, please."), Decision("approve")])
    outcome = run_job(options(tmp_path, MOON, max_revisions=2), reviewer)
    assert outcome.status == "completed", outcome.error
    (first, rev0, max0), (revised, rev1, _) = reviewer.seen
    assert (rev0, rev1, max0) == (0, 1, 2)
    assert first.startswith("# Plan\n") and revised.startswith("# Plan (Revised)")
    assert "## revision_notes" in revised
    assert "- [ ] Correlate" in first and "- [ ] Correlate" not in revised  # the feedback was applied
    assert "Validator" in revised
    kinds = [e["kind"] for e in events(outcome.job_dir)]
    revised_at = kinds.index("plan_revised")
    assert kinds[revised_at + 1] == "plan_review_request"
    requests = [e["data"] for e in events(outcome.job_dir) if e["kind"] == "plan_review_request"]
    assert [r["revision"] for r in requests] == [0, 1] and requests[0]["max_revisions"] == 2
    assert (outcome.job_dir / "plan.md").read_text(encoding="utf-8").startswith("# Plan (Revised)")


def test_cancel_at_review_keeps_files_and_exits_130(tmp_path: Path) -> None:
    outcome = run_job(options(tmp_path, MOON), ScriptedReviewer([Decision("cancel")]))
    assert (outcome.status, outcome.exit_code) == ("cancelled", 130)
    job = json.loads((outcome.job_dir / "job.json").read_text())
    assert job["status"] == "cancelled"
    assert (outcome.job_dir / "plan.md").exists() and (outcome.job_dir / "cache" / "profile.json").exists()
    assert events(outcome.job_dir)[-1]["kind"] == "cancelled"


def test_ctrl_c_during_review_cancels_the_job(tmp_path: Path) -> None:
    class Interrupting:
        def review(self, plan: str, revision: int, max_revisions: int) -> Decision:
            raise KeyboardInterrupt

    outcome = run_job(options(tmp_path, MOON), Interrupting())
    assert (outcome.status, outcome.exit_code) == ("cancelled", 130)
    assert json.loads((outcome.job_dir / "job.json").read_text())["status"] == "cancelled"


def test_two_jobs_in_one_process_do_not_share_state(tmp_path: Path) -> None:
    outcomes = {}

    def run(name: str, data: Path) -> None:
        outcomes[name] = run_job(options(tmp_path, data, name=name), AutoApprove())

    threads = [threading.Thread(target=run, args=("moon", MOON)), threading.Thread(target=run, args=("yummy", YUMMY))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes["moon"].status == "completed", outcomes["moon"].error
    assert outcomes["yummy"].status == "completed", outcomes["yummy"].error
    for name, own, other in (("moon", MOON.name, YUMMY.name), ("yummy", YUMMY.name, MOON.name)):
        root = outcomes[name].job_dir
        calcs = json.loads((root / "calculation_metadata.json").read_text())["calculations"]
        assert {c["source_file"] for c in calcs} == {own}
        state = (root / "shared_state.json").read_text(encoding="utf-8")
        assert other not in state and other not in (root / "all_results.txt").read_text(encoding="utf-8")
        assert {e["job_id"] for e in events(root)} == {json.loads((root / "job.json").read_text())["id"]}


@pytest.mark.parametrize("how", ["flag", "file"])
def test_cancel_stops_a_running_supervisor(tmp_path: Path, how: str) -> None:
    """``flag``: POST /cancel for a job of this process; ``file``: a cancel from another process, via the job folder."""
    from insightloom.agents import tool_agents
    from insightloom.workflow import create_job, review, start

    rt = create_job(options(tmp_path, MOON))
    assert start(rt, [MOON]) is None
    real = tool_agents.run_tool_agent

    def cancel_after_coder(role, runtime, task):
        text = real(role, runtime, task)
        if role == "coder" and how == "flag":
            runtime.cancel.set()
        elif role == "coder":
            runtime.job.request_cancel()
        return text

    tool_agents.run_tool_agent = cancel_after_coder
    try:
        outcome = review(rt, Decision("approve"))
    finally:
        tool_agents.run_tool_agent = real
    assert (outcome.status, outcome.exit_code) == ("cancelled", 130)
    assert json.loads((outcome.job_dir / "job.json").read_text())["status"] == "cancelled"
    assert (outcome.job_dir / "calculation_metadata.json").exists()
    assert not (outcome.job_dir / "citations.json").exists()
