"""Issue 11, item 3: a plan item the Coder cannot do is marked not possible ([~]) with its reason, instead of
stopping the job (or being ticked after a print-only script)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from insightloom.config import Settings
from insightloom.plan import parse_plan
from insightloom.runtime import JobRuntime
from insightloom.state import completed_tasks
from plan_tool_kit import call_update_plan, result_text, runtime_with_plan

IMPOSSIBLE = "Forecast next year's `Revenue` with a neural network"
PLAN = f"""# Plan
## thought
Because.
## title
Sales
## steps
### 1. Coder: Analysis
- [x] Compute totals
- [ ] {IMPOSSIBLE}
### 2. Validator: Verification
- [ ] Re-run every check
### 3. Reporter: Report
- [ ] Write the report
"""
RESPONSE = f"""## Status
PARTIAL_SUCCESS
## Completed Tasks
- Compute totals
- {IMPOSSIBLE} — not possible: the data has no future dates to learn from
## Key Insights
- none
## Generated Files
- none
"""


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    return runtime_with_plan(tmp_path, PLAN)


_call, _text = call_update_plan, result_text


def test_a_not_possible_item_settles_its_section_and_unblocks_the_next(rt: JobRuntime, contract: Any) -> None:
    assert parse_plan(PLAN).blocking_items("validator") == [f"Coder: {IMPOSSIBLE}"]
    result = _call(rt, items=[], not_possible=[f"{IMPOSSIBLE} — not possible: no future dates in the data"])
    text = _text(result)
    assert "Marked 1 item(s) not possible" in text and "- Coder: 2/2 (done, 1 not possible)" in text
    plan = parse_plan(rt.state.full_plan)
    assert plan.section("coder").done and plan.blocking_items("validator") == []
    line = f"- [~] {IMPOSSIBLE} — not possible: no future dates in the data"
    assert line in rt.state.full_plan and line in (rt.root / "plan.md").read_text(encoding="utf-8")
    job = json.loads((rt.root / "job.json").read_text(encoding="utf-8"))
    assert job["not_possible"] == [{"item": IMPOSSIBLE, "reason": "no future dates in the data", "role": "coder"}]
    contract("job", job)


def test_a_not_possible_item_needs_a_reason(rt: JobRuntime) -> None:
    result = _call(rt, items=[], not_possible=[IMPOSSIBLE])
    assert isinstance(result, dict) and result["status"] == "error"
    assert "needs a reason" in _text(result) and "— not possible: <reason>" in _text(result)
    assert f"- [ ] {IMPOSSIBLE}" in rt.state.full_plan


def test_not_possible_also_comes_as_a_dict_or_inside_items(rt: JobRuntime) -> None:
    _call(rt, not_possible=[{"item": IMPOSSIBLE, "reason": "no future dates"}])
    assert parse_plan(rt.state.full_plan).section("coder").done
    rt.state.set_plan(PLAN)
    _call(rt, items=[f"{IMPOSSIBLE} - not possible: no future dates"])  # a plain dash, passed as an item
    assert parse_plan(rt.state.full_plan).section("coder").done


def test_the_validator_item_cannot_be_declared_not_possible(rt: JobRuntime) -> None:
    result = _call(rt, not_possible=["Re-run every check — not possible: too many numbers"])
    assert isinstance(result, dict) and "validate_calculations()" in _text(result)
    assert not parse_plan(rt.state.full_plan).section("validator").done


def test_the_standard_response_carries_not_possible_items() -> None:
    from insightloom.state import not_possible_tasks

    assert completed_tasks(RESPONSE) == ["Compute totals"]
    assert not_possible_tasks(RESPONSE) == [(IMPOSSIBLE, "the data has no future dates to learn from")]
    own_section = f"## Completed Tasks\n- none\n## Not Possible\n- {IMPOSSIBLE} — no dates\n"
    assert completed_tasks(own_section) == []
    assert not_possible_tasks(own_section) == [(IMPOSSIBLE, "no dates")]


def test_not_possible_items_are_listed_for_the_report() -> None:
    from insightloom.plan import not_possible_items

    marked = PLAN.replace(f"- [ ] {IMPOSSIBLE}", f"- [~] {IMPOSSIBLE} — not possible: no dates")
    assert not_possible_items(marked) == [(IMPOSSIBLE, "no dates")]
    assert not_possible_items(PLAN) == []


@pytest.mark.e2e
def test_an_offline_job_with_an_impossible_item_completes_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from insightloom.models.offline import analyst
    from insightloom.workflow import AutoApprove, JobOptions, run_job
    from small_sales import write_small_sales_csv

    writer = analyst.plan_markdown

    def with_impossible_item(*args: Any, **kwargs: Any) -> str:
        return writer(*args, **kwargs).replace("### 2. Validator", f"- [ ] {IMPOSSIBLE}\n### 2. Validator", 1)

    monkeypatch.setattr(analyst, "plan_markdown", with_impossible_item)
    write_small_sales_csv(tmp_path / "sales.csv", rows=60)
    settings = Settings(provider="offline").with_provider("offline")
    opts = JobOptions([tmp_path / "sales.csv"], "Analyze this sales data", settings, tmp_path / "job", cwd=tmp_path)
    outcome = run_job(opts, AutoApprove())
    assert outcome.status == "completed", outcome.error
    plan = (outcome.job_dir / "plan.md").read_text(encoding="utf-8")
    assert f"- [~] {IMPOSSIBLE} — not possible: " in plan and "- [ ]" not in plan
    job = json.loads((outcome.job_dir / "job.json").read_text(encoding="utf-8"))
    assert [entry["item"] for entry in job["not_possible"]] == [IMPOSSIBLE]
    assert job["not_possible"][0]["reason"] and job["not_possible"][0]["role"] == "coder"
    assert not list((outcome.job_dir / "code").glob("*note*.py"))  # no print-only script passed off as the work
