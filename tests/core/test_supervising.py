"""The supervising loop: another round while the last one made progress; a round without progress fails the job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from insightloom.agents.factory import open_items_note
from insightloom.config import Settings
from insightloom.context.history import HistoryReducer, ReductionPolicy
from insightloom.errors import PlanStuck
from insightloom.jobs import JobFolder
from insightloom.plan import parse_plan
from insightloom.runtime import JobRuntime
from insightloom.workflow.supervising import FIRST_TASK, run_rounds

PLAN = """# Plan
## thought
t
## title
T
## steps
### 1. Coder: Analyse
- [ ] Revenue by region
- [ ] Trend by month
### 2. Validator: Check
- [ ] Re-check every number
"""


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    runtime = JobRuntime.create(JobFolder.create(tmp_path / "artifacts"), Settings(provider="offline"), "r", "en")
    runtime.state.set_plan(PLAN)
    return runtime


def tick(rt: JobRuntime, *items: str) -> None:
    """Stands in for the Tracker: these tests are about the rounds, not the evidence."""
    plan = rt.state.full_plan
    for item in items:
        plan = plan.replace(f"- [ ] {item}\n", f"- [x] {item}\n")
    rt.state.set_plan(plan)


def track(rt: JobRuntime, count: int) -> None:
    """``count`` tracked calculations in calculation_metadata.json, as the Coder's tools write them."""
    calcs = [
        {
            "id": f"c{n}",
            "value": n,
            "description": "d",
            "formula": "SUM(x)",
            "source_file": "s.csv",
            "source_columns": ["x"],
            "importance": "high",
        }
        for n in range(count)
    ]
    (rt.root / "calculation_metadata.json").write_text(json.dumps({"calculations": calcs}), encoding="utf-8")


def test_a_supervisor_that_stops_early_but_made_progress_is_called_again_with_the_open_items(rt) -> None:
    tasks: list[str] = []

    def supervisor(task: str) -> None:
        tasks.append(task)
        if len(tasks) == 1:
            tick(rt, "Revenue by region")  # ends its turn with text after one item
        else:
            tick(rt, "Trend by month", "Re-check every number")

    assert run_rounds(rt, supervisor) == 2
    assert tasks[0] == FIRST_TASK
    assert "2 open item(s)" in tasks[1] and "Coder: Trend by month" in tasks[1]
    assert "Validator: Re-check every number" in tasks[1]


def test_a_round_without_progress_fails_naming_the_stuck_items(rt) -> None:
    calls: list[str] = []
    with pytest.raises(PlanStuck) as info:
        run_rounds(rt, calls.append)
    assert len(calls) == 1
    assert "Coder: Revenue by region" in info.value.message and "changed nothing" in info.value.message
    assert "insightloom resume" in info.value.fix


def test_a_new_tracked_calculation_counts_as_progress(rt) -> None:
    calls: list[str] = []

    def supervisor(task: str) -> None:
        calls.append(task)
        if len(calls) == 1:
            track(rt, 1)

    with pytest.raises(PlanStuck):
        run_rounds(rt, supervisor)
    assert len(calls) == 2  # the second round changed nothing


def test_the_rounds_are_bounded_by_the_setting(rt) -> None:
    rt.settings.max_supervisor_rounds = 3
    counter = iter(range(100))

    def supervisor(task: str) -> None:
        track(rt, next(counter) + 1)

    with pytest.raises(PlanStuck) as info:
        run_rounds(rt, supervisor)
    assert "after 3 Supervisor rounds" in info.value.message and "max_supervisor_rounds" in info.value.fix


def test_open_items_skip_a_tracker_section() -> None:
    plan = PLAN + "### 3. Tracker: Track\n- [ ] Tick items\n"
    assert parse_plan(plan).open_items() == [
        "Coder: Revenue by region",
        "Coder: Trend by month",
        "Validator: Re-check every number",
    ]


def test_shortened_supervisor_results_state_the_open_items_themselves(rt) -> None:
    tick(rt, "Revenue by region")
    reducer = HistoryReducer(
        ReductionPolicy(keep_recent=1, threshold_tokens=10, result_tokens=5), lambda: open_items_note(rt)
    )
    long_result = "Response from coder:\n" + "details " * 200
    messages = []
    for n in range(3):
        messages.append(
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": f"t{n}", "name": "coder", "input": {}}}]}
        )
        messages.append(
            {"role": "user", "content": [{"toolResult": {"toolUseId": f"t{n}", "content": [{"text": long_result}]}}]}
        )
    assert reducer.reduce(messages) > 0
    stub = messages[1]["content"][0]["toolResult"]["content"][0]["text"]
    assert stub.startswith("[reduced]") and "Coder: Trend by month" in stub and "Revenue by region" not in stub
    assert "plan checkboxes" not in stub  # the Supervisor sees no checkboxes: the stub must not point to them
