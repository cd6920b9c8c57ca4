"""Hooks that stop a job at the next safe point: cancellation, and the per-job ceilings on calls, tokens, cost and
running time, so that a runaway loop can never cost without bound; and a guard that refuses to re-run a tool call
that already failed the same way, so a model stuck on one call hears it instead of paying for it again."""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from typing import Any

from strands.hooks import AfterToolCallEvent, BeforeModelCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry

from ..errors import BudgetExceeded, JobCancelled, RepeatedCall
from ..runtime import JobRuntime

logger = logging.getLogger(__name__)

#: The clock the wall-time ceiling reads (seconds, monotonic); tests replace it to move time without sleeping.
clock = time.monotonic


def start_wall_clock(rt: JobRuntime) -> None:
    """Start (or restart) the job's running-time count, e.g. when work resumes after a plan review."""
    rt.wall_started = clock()


class CancelGuard(HookProvider):
    """Raises JobCancelled before the next model or tool call once the job is cancelled: by its in-process flag, or
    by a ``cancel.request`` file that another process (the service, a second terminal) wrote into the job folder."""

    def __init__(self, rt: JobRuntime) -> None:
        self.rt = rt

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeModelCallEvent, self._check)
        registry.add_callback(BeforeToolCallEvent, self._check)

    def _check(self, event: object) -> None:
        if self.rt.cancel.is_set() or self.rt.job.cancel_requested():
            raise JobCancelled(f"Job {self.rt.job.id} was cancelled.", "start it again with `insightloom resume`.")


class BudgetGuard(HookProvider):
    """Raises BudgetExceeded before a model call once the job reached one of its ceilings.

    Raised inside a tool agent, the error becomes that tool's error result; the Supervisor's own guard then stops
    the job at its next model call, and the workflow records it as ``failed`` with every file kept.
    """

    def __init__(self, rt: JobRuntime) -> None:
        self.rt = rt
        if rt.wall_started is None:
            rt.wall_started = clock()

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeModelCallEvent, self._check)

    def _check(self, event: object) -> None:
        settings = self.rt.settings
        total = self.rt.ledger.total()
        started = self.rt.wall_started
        elapsed = 0.0 if started is None else clock() - started
        ceilings = (
            ("model calls", total.calls, settings.max_model_calls, "max_model_calls"),
            ("tokens", total.all_tokens, settings.max_total_tokens, "max_total_tokens"),
            ("estimated cost (USD)", total.cost_usd, settings.max_cost_usd, "max_cost_usd"),
            ("running seconds", elapsed, settings.max_wall_seconds, "max_wall_seconds"),
        )
        for what, used, limit, key in ceilings:
            if used >= limit:  # compared unrounded: a rounded 0.03 may still be under a 0.03 ceiling
                used = round(used, 4) if isinstance(used, float) else used
                logger.warning("job %s stopped at its %s ceiling (%s >= %s)", self.rt.job.id, what, used, limit)
                raise BudgetExceeded(
                    f"The job reached its ceiling on {what}: {used:,} of {limit:,} (setting {key}).",
                    f"if the job needs more, raise {key} in the config (insightloom.yaml; it is {limit:,}) "
                    "and run the job again.",
                )


#: Identical failed calls allowed before the next identical one is refused without running, and refusals after
#: which the agent's turn is stopped: a model that ignores the refusal would otherwise loop until a ceiling.
MAX_IDENTICAL_FAILURES = 2
MAX_REFUSALS = 2
_ERROR_EXCERPT = 300


def _call_key(tool_use: Any) -> str:
    payload = json.dumps(tool_use.get("input"), sort_keys=True, ensure_ascii=False, default=str)
    return f"{tool_use.get('name')}:{payload}"


def _result_text(result: Any) -> str:
    """The end of a failed result's text: where tracebacks and refusals state the cause."""
    items = (result or {}).get("content") or []
    text = " ".join(" ".join(str(item.get("text", "")).split()) for item in items if isinstance(item, dict))
    return text if len(text) <= _ERROR_EXCERPT else "…" + text[-_ERROR_EXCERPT:]


class RepeatGuard(HookProvider):
    """Refuses a tool call identical (tool and input) to one that already failed ``MAX_IDENTICAL_FAILURES`` times.

    Models under pressure resend the same failing call; each rerun costs a script run or a whole tool agent and
    teaches nothing. The refusal quotes the last error and names the two ways forward.
    """

    def __init__(self) -> None:
        self.failures: Counter[str] = Counter()
        self.refusals: Counter[str] = Counter()
        self.last_error: dict[str, str] = {}

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self._before)
        registry.add_callback(AfterToolCallEvent, self._after)

    def _before(self, event: BeforeToolCallEvent) -> None:
        key = _call_key(event.tool_use)
        count = self.failures[key]
        if count >= MAX_IDENTICAL_FAILURES:
            name = event.tool_use.get("name")
            self.refusals[key] += 1
            if self.refusals[key] > MAX_REFUSALS:
                agent = getattr(event.agent, "name", "agent")
                raise RepeatedCall(
                    f"The {agent} kept sending the same failing {name} call ({count} failures, then "
                    f"{MAX_REFUSALS} refusals), so its turn was stopped. Last error: "
                    f"{self.last_error.get(key, '')}",
                    f"call the {agent} again naming that error, so it changes the call, or have it report the task "
                    "as not possible with a reason.",
                )
            event.cancel_tool = (
                f"Refused without running: this exact {name} call already failed {count} times. Last error: "
                f"{self.last_error.get(key, '')} Fix: change the input to remove the cause the error "
                "names, or, if the task cannot be done, report it as not possible with a reason."
            )

    def _after(self, event: AfterToolCallEvent) -> None:
        if event.cancel_message:
            return  # a refusal is not a new failure of the call
        if (event.result or {}).get("status") == "error":
            key = _call_key(event.tool_use)
            self.failures[key] += 1
            self.last_error[key] = _result_text(event.result)


class TurnToolCap(HookProvider):
    """Stops an agent's turn once it made ``max_tool_calls_per_turn`` tool calls.

    A model that loops (re-rendering, re-running, re-reading) would otherwise run until a job ceiling, and Strands
    recurses once per tool cycle, so a very long turn ends in a RecursionError instead of a clear error.
    """

    def __init__(self, rt: JobRuntime) -> None:
        self.limit = rt.settings.max_tool_calls_per_turn
        self.calls = 0

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self._count)

    def _count(self, event: BeforeToolCallEvent) -> None:
        self.calls += 1
        if self.calls > self.limit:
            agent = getattr(event.agent, "name", "agent")
            raise BudgetExceeded(
                f"The {agent} made {self.limit} tool calls in one turn without finishing (setting "
                "max_tool_calls_per_turn).",
                f"call the {agent} again with fewer items at a time, or raise max_tool_calls_per_turn in "
                "insightloom.yaml.",
            )
