"""A delivered work item is run, resumed or acknowledged as a no-op, from the job's state alone; the sweeper's picks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from insightloom.service.delivery import delivery_verdict
from insightloom.service.queue import WorkItem
from insightloom.service.sweeper import Sweeper, item_for
from insightloom.workflow.pipeline import resume_stage

JOB = "20261201T000000Z-0123456789ab"
START = WorkItem(JOB, "start", inputs=("sales.csv",), stage="intake")
REVIEW_0 = WorkItem(JOB, "review", "approve", stage="rev0")
CANCEL_0 = WorkItem(JOB, "review", "cancel", stage="rev0")
RESUME = WorkItem(JOB, "resume", stage="supervise")
FOLLOWUP = WorkItem(JOB, "followup", stage="0" * 32, question="average Qty?")


def status(state: str, stage: str | None = None, revision: int = 0, **extra: Any) -> dict[str, Any]:
    return {"id": JOB, "status": state, "stage": stage, "revision": revision, **extra}


@pytest.mark.parametrize(
    ("item", "job", "verdict"),
    [
        (START, status("queued"), "run"),
        (START, status("completed", "done"), "skip"),  # a redelivered start never re-runs a finished job
        (START, status("awaiting_review", "review", 2), "skip"),  # nor flips a reviewed job back to review
        (START, status("running", "supervise"), "resume"),  # its runner died after the start: resume, not intake
        (REVIEW_0, status("awaiting_review", "review", 0), "run"),
        (REVIEW_0, status("awaiting_review", "review", 1), "skip"),  # that plan was already revised
        (REVIEW_0, status("running", "supervise"), "resume"),
        (REVIEW_0, status("needs_review", "done"), "skip"),
        (CANCEL_0, status("awaiting_review", "review", 3), "run"),  # a cancel applies to whatever plan waits
        (RESUME, status("failed", "supervise"), "skip"),
        (RESUME, status("running", "plan"), "resume"),
        (RESUME, status("awaiting_review", "review", 0), "skip"),
        (FOLLOWUP, status("completed", "done"), "run"),  # follow-ups are the one item a finished job takes
        (FOLLOWUP, status("needs_review", "done"), "run"),
        (FOLLOWUP, status("running", "supervise"), "skip"),
        (FOLLOWUP, status("failed", "supervise"), "skip"),
    ],
)
def test_delivery_verdicts(item: WorkItem, job: dict[str, Any], verdict: str) -> None:
    assert delivery_verdict(item, job)[0] == verdict


def test_items_name_the_stage_they_expect() -> None:
    assert (START.key, REVIEW_0.key, RESUME.key) == ("start@intake", "review@rev0", "resume@supervise")
    assert WorkItem(JOB, "start").key == "start@intake"
    assert WorkItem.from_dict(REVIEW_0.to_dict()) == REVIEW_0


@pytest.mark.parametrize(
    ("job", "has_profile", "stage"),
    [
        (status("queued"), False, "intake"),
        (status("running", "coordinate"), False, "intake"),  # intake's output is missing: redo intake
        (status("running", "coordinate"), True, "coordinate"),
        (status("running", "plan"), True, "plan"),
        (status("running", "plan", revising={"revision": 1, "feedback": "x"}), True, "revise"),
        (status("running", "review", approved_revision=0), True, "supervise"),  # an approval was being applied
        (status("running", "review"), True, "request_review"),  # a plan nobody approved never runs
        (status("running", "review", 1, approved_revision=0), True, "request_review"),  # approved an older plan
        (status("running", "supervise"), True, "supervise"),
    ],
)
def test_resume_continues_from_the_interrupted_stage(job: dict[str, Any], has_profile: bool, stage: str) -> None:
    assert resume_stage(job, has_profile) == stage


@pytest.mark.parametrize(
    ("job", "alive", "age", "key"),
    [
        (status("running", "supervise"), False, 0.0, "resume@supervise"),
        (status("running", "supervise"), True, 999.0, None),  # a live runner has it
        (status("completed", "done"), False, 999.0, None),
        (status("queued"), False, 1.0, None),  # its start is probably still waiting in the queue
        (status("queued"), False, 999.0, "start@intake"),
        (status("awaiting_review", "review", 2), False, 999.0, None),  # waits for a person
        (status("awaiting_review", "review", 2, auto_approve=True), False, 999.0, "review@rev2"),
        (
            status("awaiting_review", "review", 1, pending_review={"decision": "feedback", "feedback": "x"}),
            False,
            999.0,
            "review@rev1",
        ),
    ],
)
def test_sweeper_requeues_only_jobs_that_no_live_runner_holds(
    job: dict[str, Any], alive: bool, age: float, key: str | None
) -> None:
    item = item_for(JOB, job, lock_alive=alive, age_s=age, grace_s=120.0)
    assert (item.key if item else None) == key


class MemoryStore:
    """The few store calls the sweeper makes, over dicts (the real stores have their own tests)."""

    def __init__(self, statuses: dict[str, dict[str, Any]]) -> None:
        self.statuses = statuses
        self.meta: dict[tuple[str, str], str] = {(kind, job): "ana" for job in statuses for kind in ("owners",)}

    def job_ids(self) -> list[str]:
        return sorted(self.statuses)

    def read_bytes(self, job_id: str, relative: str) -> bytes | None:
        return json.dumps(self.statuses[job_id]).encode() if relative == "job.json" else None

    def read_meta(self, kind: str, job_id: str) -> str | None:
        return self.meta.get((kind, job_id))

    def write_meta(self, kind: str, job_id: str, text: str) -> None:
        self.meta[(kind, job_id)] = text

    def lock_alive(self, job_id: str) -> bool:
        return False


def test_a_queued_job_is_requeued_once_per_state_and_a_dead_runner_after_every_grace() -> None:
    old = "2026-01-01T00:00:00Z"
    queued = "20261201T000000Z-00000000000a"
    running = "20261201T000000Z-00000000000b"
    store = MemoryStore(
        {
            queued: status("queued", updated_at=old),
            running: status("running", "supervise", updated_at=old),
        }
    )
    put: list[str] = []
    sweeper = Sweeper(store, lambda item: put.append(item.key), grace_s=0.0)  # type: ignore[arg-type]
    sweeper.sweep_once()
    sweeper.sweep_once()
    assert put.count("start@intake") == 1  # its start may still be waiting in a long backlog: queued once
    assert put.count("resume@supervise") == 2  # nobody runs it: tried again each time
    store.statuses[queued]["updated_at"] = "2026-01-01T00:05:00Z"  # the job moved (and is queued again)
    sweeper.sweep_once()
    assert put.count("start@intake") == 2
