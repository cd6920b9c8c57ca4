"""The supervising loop: call the Supervisor again while plan items are open and the last round made progress.

A real model sometimes ends its turn with text while items are still open ("I have started the analysis"). One
call would then fail a job that was moving. So after each round the job folder is compared with the round before:
an item ticked or settled, a new tracked calculation or a new render counts as progress and earns another round,
with a short message naming the open items. A round that changed nothing ends the job ``failed``, naming the stuck
items; ``max_supervisor_rounds`` bounds the whole. A round that changed nothing because the model refused (or said
nothing) is asked once more with the open items; a second refusal fails the job saying that the model refused,
quoting its first words (``agents.refusal``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from ..agents.refusal import refusal_of
from ..errors import InsightloomError, ModelRefused, PlanStuck
from ..plan import DISPLAY, parse_plan
from ..runtime import JobRuntime
from ..validation.jobfiles import load_calculations

logger = logging.getLogger(__name__)

FIRST_TASK = "Execute the approved plan, one section at a time, until every item is checked."
_SHOWN_ITEMS = 8
_GIST_CHARS = 200


@dataclass(frozen=True)
class Progress:
    """What a round can change: settled plan items, tracked calculations and renders of the report."""

    settled: int
    calculations: int
    render: int


def _count_calculations(rt: JobRuntime) -> int:
    try:
        return len(load_calculations(rt.root))  # never through a link or a FIFO a script planted
    except InsightloomError:
        return 0  # absent, malformed or planted: progress is then seen in the plan or the render


def _render_stamp(rt: JobRuntime) -> int:
    docx = rt.job.path("final_report.docx")
    try:
        return docx.lstat().st_mtime_ns
    except OSError:
        return 0


def snapshot(rt: JobRuntime) -> Progress:
    plan = parse_plan(rt.state.full_plan)
    settled = sum(len(s.items) - len(s.unchecked()) for s in plan.sections)
    return Progress(settled, _count_calculations(rt), _render_stamp(rt))


def next_task(items: list[str]) -> str:
    """The short message that starts another round."""
    shown = "; ".join(items[:_SHOWN_ITEMS]) + (
        f"; and {len(items) - _SHOWN_ITEMS} more" if len(items) > _SHOWN_ITEMS else ""
    )
    return (
        f"The plan still has {len(items)} open item(s): {shown}. Continue: call the agent that owns the first open "
        "item, then the tracker. If an item cannot be done, have its agent report it as not possible with a reason."
    )


def last_word(rt: JobRuntime, item: str) -> str:
    """What the owner of the first stuck item said last (its response's first lines), as a clue to the cause."""
    display = item.split(":", 1)[0]
    said = next((h["message"] for h in reversed(rt.state.history) if DISPLAY.get(h["agent"]) == display), "")
    gist = " ".join(line.strip("-# ") for line in said.splitlines() if line.strip() and not line.startswith("## "))
    return f". Last response of the {display}: {gist[:_GIST_CHARS]}" if gist else ""


def run_rounds(rt: JobRuntime, call: Callable[[str], object]) -> int:
    """Call the Supervisor until the plan is settled; returns the rounds used.

    Raises:
        PlanStuck: A round made no progress, or the rounds ran out, with items still open.
    """
    limit = rt.settings.max_supervisor_rounds
    task = FIRST_TASK
    reprompted = False
    for round_no in range(1, limit + 1):
        before = snapshot(rt)
        result = call(task)
        items = parse_plan(rt.state.full_plan).open_items()
        if not items:
            return round_no
        refused = refusal_of(result) if snapshot(rt) == before else None
        if refused is not None and not reprompted:
            logger.warning("job %s: the Supervisor's turn read as a refusal (%s); asking once more", rt.job.id,
                           refused.why)  # fmt: skip
            reprompted = True
            task = next_task(items)
            continue
        if refused is not None:
            quoted = f": “{refused.first_words}”" if refused.first_words else ""
            raise ModelRefused(
                f"The Supervisor model refused the task twice ({refused.why}){quoted}; {len(items)} plan item(s) "
                "stay open: " + "; ".join(items[:_SHOWN_ITEMS]),
                "look at transcripts/supervisor* for the whole reply; if the request or the data trip the model's "
                "or a guardrail's policy, rephrase the request, or use another model (agents.supervisor.model_id), "
                "then `insightloom resume`.",
            )
        if snapshot(rt) == before:
            raise PlanStuck(
                f"The Supervisor stopped with {len(items)} plan item(s) open and its last round changed nothing: "
                + "; ".join(items[:_SHOWN_ITEMS])
                + last_word(rt, items[0]),
                "look at the agents' transcripts (transcripts/) for why; resume with `insightloom resume` once the "
                "cause is fixed, or revise the plan so each item can be done or reported as not possible.",
            )
        logger.info(
            "job %s: supervisor round %d left %d open item(s); calling it again", rt.job.id, round_no, len(items)
        )
        task = next_task(items)
    raise PlanStuck(
        f"The plan still has open items after {limit} Supervisor rounds: "
        + "; ".join(parse_plan(rt.state.full_plan).open_items()),
        f"raise max_supervisor_rounds (it is {limit}) in insightloom.yaml, or resume with `insightloom resume`.",
    )
