"""Whether a delivered work item is still due: the check a worker makes under the job's lock before any work.

Queues redeliver: a worker killed mid-job, a visibility timeout shorter than the job, a sweeper or an operator
re-sending a message. Every item names the stage it expects to run (:attr:`WorkItem.key`), and the job's folder says
where the job is, so a worker can tell a due item from a stale one:

- a job that has ended, or that waits for a review the item does not carry, is left alone (the item is acknowledged);
- a job that is queued runs its start;
- a job that is running, while this worker holds its lock, has lost its runner: it resumes from the stage it
  stopped in, never from intake (:func:`insightloom.workflow.resume`).
"""

from __future__ import annotations

from typing import Any, Literal

from ..ask.sessions import FINISHED
from ..events import TERMINAL_KINDS
from .queue import WorkItem

Verdict = Literal["run", "resume", "skip"]


def delivery_verdict(item: WorkItem, status: dict[str, Any]) -> tuple[Verdict, str]:
    """What to do with ``item`` given the job's ``job.json``, and why (for the log line)."""
    state = status.get("status")
    stage = status.get("stage")
    revision = int(status.get("revision", 0) or 0)
    if item.action == "followup":
        if state in FINISHED:
            return "run", f"a follow-up analysis of a finished ({state}) job"
        return "skip", f"follow-ups need a finished job, not a {state} one"
    if state in TERMINAL_KINDS:
        return "skip", f"the job has ended ({state})"
    if state == "awaiting_review":
        if item.action == "review" and (item.decision == "cancel" or item.stage in ("", f"rev{revision}")):
            return "run", f"plan revision {revision} awaits this review"
        return "skip", f"the job awaits a review of plan revision {revision}"
    if state == "queued" and item.action == "start":
        return "run", "the job is queued"
    return "resume", f"the job is {state} in stage {stage} and no live runner holds it"
