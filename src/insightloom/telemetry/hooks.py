"""One hook provider per agent: progress events, usage per model call and the transcript file.

Kept as a Strands HookProvider so the workflow never sprinkles bookkeeping through its own code.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

from strands.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeToolCallEvent,
    HookProvider,
    HookRegistry,
)

from ..events import EventLog
from ..fileio import read_json, write_json
from ..timeutil import utc_now
from .pricing import PriceTable
from .usage import CallRecord, UsageLedger

logger = logging.getLogger(__name__)
_TRANSCRIPT_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _transcript_lock(path: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _TRANSCRIPT_LOCKS.setdefault(path, threading.Lock())


def call_record(role: str, model_id: str, event: AfterModelCallEvent, prices: PriceTable | None) -> CallRecord | None:
    """The usage of one finished model call (None for a failed call, which reports no usage)."""
    if event.stop_response is None:
        return None
    meta: dict[str, Any] = dict(event.stop_response.message.get("metadata") or {})
    usage: dict[str, Any] = meta.get("usage") or {}
    tokens = [
        int(usage.get(k, 0)) for k in ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")
    ]
    cost = prices.cost(model_id, *tokens) if prices else 0.0
    return CallRecord(
        agent=role,
        model_id=model_id,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        cache_read_tokens=tokens[2],
        cache_write_tokens=tokens[3],
        latency_ms=int((meta.get("metrics") or {}).get("latencyMs", 0)),
        stop_reason=str(event.stop_response.stop_reason),
        cost_usd=round(cost, 8),
    )


class AgentTelemetry(HookProvider):
    """Records what one agent does: start/end and tool events, every model call's usage, and its transcript.

    Args:
        role: The agent's lower-case role name.
        events: The job's event log.
        ledger: The job's usage ledger.
        transcripts: The job's ``transcripts/`` folder.
        prices: The pricing table for the estimated cost (None counts cost as 0).
    """

    def __init__(
        self, role: str, events: EventLog, ledger: UsageLedger, transcripts: Path, prices: PriceTable | None = None
    ) -> None:
        self.role = role
        self.events = events
        self.ledger = ledger
        self.prices = prices
        self.transcript_path = transcripts / f"{role}.json"
        self.job_root = transcripts.parent
        self._calls = 0
        self._started = ""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeInvocationEvent, self._before_invocation)
        registry.add_callback(AfterInvocationEvent, self._after_invocation)
        registry.add_callback(AfterModelCallEvent, self._after_model_call)
        registry.add_callback(BeforeToolCallEvent, self._before_tool)
        registry.add_callback(AfterToolCallEvent, self._after_tool)

    def _before_invocation(self, event: BeforeInvocationEvent) -> None:
        self._calls = 0
        self._started = utc_now()
        self.events.emit("agent_start", agent=self.role)

    def _after_model_call(self, event: AfterModelCallEvent) -> None:
        model_id = str(event.agent.model.config.get("model_id", "")) if hasattr(event.agent.model, "config") else ""
        record = call_record(self.role, model_id, event, self.prices)
        if record is None:
            return
        self._calls += 1
        self.ledger.record(record)

    def _before_tool(self, event: BeforeToolCallEvent) -> None:
        self.events.emit("tool_call", agent=self.role, tool=event.tool_use.get("name", ""))

    def _after_tool(self, event: AfterToolCallEvent) -> None:
        status = event.result.get("status", "success") if isinstance(event.result, dict) else "success"
        self.events.emit("tool_result", agent=self.role, tool=event.tool_use.get("name", ""), status=status)

    def _after_invocation(self, event: AfterInvocationEvent) -> None:
        self.events.emit("usage", **self.ledger.to_dict()["total"])
        self._append_transcript(event)
        self.events.emit("agent_end", agent=self.role)

    def _append_transcript(self, event: AfterInvocationEvent) -> None:
        system_prompt = event.agent.system_prompt
        entry = {
            "started_at": self._started,
            "ended_at": utc_now(),
            "model_calls": self._calls,
            "system_prompt": system_prompt if isinstance(system_prompt, str) else json.dumps(system_prompt),
            "messages": json.loads(json.dumps(event.agent.messages, default=str)),
        }
        with _transcript_lock(self.transcript_path):
            existing: list[dict[str, Any]] = []
            if self.transcript_path.exists():
                try:
                    existing = read_json(self.transcript_path, beneath=self.job_root)["invocations"]
                except (ValueError, KeyError):
                    logger.warning("transcript %s was unreadable; starting it again", self.transcript_path)
            existing.append(entry)
            write_json(self.transcript_path, {"agent": self.role, "invocations": existing}, beneath=self.job_root)
