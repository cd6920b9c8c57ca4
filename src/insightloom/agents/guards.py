"""Hooks that stop a job at the next safe point: cancellation (and, later, per-job ceilings)."""

from __future__ import annotations

from typing import Any

from strands.hooks import BeforeModelCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry

from ..errors import JobCancelled
from ..runtime import JobRuntime


class CancelGuard(HookProvider):
    """Raises JobCancelled before the next model or tool call once the job's cancel flag is set."""

    def __init__(self, rt: JobRuntime) -> None:
        self.rt = rt

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeModelCallEvent, self._check)
        registry.add_callback(BeforeToolCallEvent, self._check)

    def _check(self, event: object) -> None:
        if self.rt.cancel.is_set():
            raise JobCancelled(f"Job {self.rt.job.id} was cancelled.", "start it again with `insightloom resume`.")
