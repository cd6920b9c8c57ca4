"""The chaos benchmark's counters: a stage that had completed and started again is a duplicate, a re-entry is not."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.append(str(BENCHMARKS))
bench = importlib.import_module("service_load")


def stages(*names: str) -> list[dict]:
    events = []
    for name in names:
        events.append({"kind": "stage", "data": {"name": name}})
        if name == "review":
            events.append({"kind": "plan_review_request", "data": {}})
    return events


def test_a_resume_that_re_enters_the_interrupted_stage_has_no_duplicates() -> None:
    assert (
        bench.duplicate_stages(stages("intake", "coordinate", "plan", "review", "supervise", "supervise", "done")) == 0
    )


def test_a_resume_from_intake_counts_every_finished_stage_again() -> None:
    rerun = stages("intake", "coordinate", "plan", "review", "supervise", "intake", "coordinate", "plan", "review")
    assert bench.duplicate_stages(rerun) == 4


def test_plan_revisions_are_not_duplicates() -> None:
    revised = stages("intake", "coordinate", "plan", "review", "plan", "review", "supervise", "done")
    assert bench.duplicate_stages(revised) == 0


def test_redeliveries_count_flagged_and_repeated_deliveries_once_each() -> None:
    line = "INFO delivery task={} key=start@intake job=j redelivered={} retries={}"
    logs = [
        "\n".join([line.format("a", False, 0), line.format("b", False, 0), line.format("b", True, 0)]),
        "\n".join([line.format("c", False, 0), line.format("c", False, 0), line.format("a", False, 1)]),
    ]
    assert bench.redeliveries(logs) == 2  # b (flagged) and c (seen twice); a's retry is a new delivery
