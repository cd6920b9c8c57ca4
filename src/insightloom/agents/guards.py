"""Hooks that stop a job at the next safe point: cancellation, and the per-job ceilings on calls, tokens, cost and
running time, so that a runaway loop can never cost without bound."""

from __future__ import annotations

import logging
import time
from typing import Any

from strands.hooks import BeforeModelCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry

from ..errors import BudgetExceeded, JobCancelled
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
            ("estimated cost (USD)", round(total.cost_usd, 4), settings.max_cost_usd, "max_cost_usd"),
            ("running seconds", round(elapsed, 1), settings.max_wall_seconds, "max_wall_seconds"),
        )
        for what, used, limit, key in ceilings:
            if used >= limit:
                logger.warning("job %s stopped at its %s ceiling (%s >= %s)", self.rt.job.id, what, used, limit)
                raise BudgetExceeded(
                    f"The job reached its ceiling on {what}: {used:,} of {limit:,} (setting {key}).",
                    f"if the job needs more, raise {key} in the config (insightloom.yaml; it is {limit:,}) "
                    "and run the job again.",
                )
