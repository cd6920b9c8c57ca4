"""Per-job token usage by agent and by model call, in the ``usage.json`` contract.

``agents`` and ``total`` are the contract; ``model_calls`` (one record per call: tokens of each kind, latency, stop
reason, cost) and ``cache_read_share`` are extra keys the contract allows.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ..config import ROLES
from ..fileio import read_json, write_json


@dataclass
class AgentUsage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: AgentUsage) -> None:
        for key, value in asdict(other).items():
            setattr(self, key, getattr(self, key) + value)

    @property
    def sent_tokens(self) -> int:
        """Input tokens sent, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def all_tokens(self) -> int:
        """Every token the calls processed: what the token ceiling counts."""
        return self.sent_tokens + self.output_tokens

    @property
    def cache_read_share(self) -> float:
        """``cache_read / (input + cache_read + cache_write)``, from 0 to 1 (0 when nothing was sent)."""
        return self.cache_read_tokens / self.sent_tokens if self.sent_tokens else 0.0


@dataclass(frozen=True)
class CallRecord:
    """One model call of one agent."""

    agent: str
    model_id: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    latency_ms: int
    stop_reason: str
    cost_usd: float

    @property
    def sent_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def usage(self) -> AgentUsage:
        return AgentUsage(
            1, self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens, self.cost_usd
        )


#: usage.json sections the ledger does not own but must keep: the follow-up questions' own accounting.
KEPT_SECTIONS = ("ask",)


class UsageLedger:
    """Thread-safe running totals for one job; every role present from the start."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._save_lock = threading.Lock()  # one writer at a time, so an older snapshot never lands last
        self._agents = {role: AgentUsage() for role in ROLES}
        self._calls: list[CallRecord] = []
        self.extra: dict[str, Any] = {}  # sections others own (``ask``), kept as they are when the ledger saves
        self.cache_notes: dict[str, str] = {}  # agent -> why its prompt is billed as input rather than cached

    @classmethod
    def load(cls, path: Path) -> UsageLedger:
        """Continue counting from a job's usage.json (for resumed jobs)."""
        ledger = cls(path)
        if path.exists():
            data = read_json(path, beneath=path.parent)  # a job file: never through a link a script planted
            for role, values in data.get("agents", {}).items():
                ledger._agents[role] = AgentUsage(**{k: values[k] for k in asdict(AgentUsage()) if k in values})
            names = {f.name for f in fields(CallRecord)}
            ledger._calls = [
                CallRecord(**{k: v for k, v in c.items() if k in names}) for c in data.get("model_calls", [])
            ]
            ledger.extra = {k: v for k, v in data.items() if k in KEPT_SECTIONS}
            ledger.cache_notes = {str(k): str(v) for k, v in (data.get("cache_notes") or {}).items()}
        return ledger

    def note_cache(self, role: str, note: str) -> None:
        """Say, in ``usage.json``, why an agent's prompt is billed as input (a prefix below its model's minimum)."""
        with self._lock:
            self.cache_notes[role] = note

    def add(self, role: str, usage: AgentUsage) -> None:
        with self._lock:
            self._agents.setdefault(role, AgentUsage()).add(usage)
        self.save()

    def record(self, call: CallRecord) -> None:
        """Add one model call to its agent's totals and to the call log, then persist."""
        with self._lock:
            self._agents.setdefault(call.agent, AgentUsage()).add(call.usage())
            self._calls.append(call)
        self.save()

    def agent(self, role: str) -> AgentUsage:
        return self._agents[role]

    def calls(self) -> list[CallRecord]:
        with self._lock:
            return list(self._calls)

    def total(self) -> AgentUsage:
        total = AgentUsage()
        with self._lock:
            for usage in self._agents.values():
                total.add(usage)
        return total

    def to_dict(self) -> dict[str, Any]:
        total = self.total()
        total.cost_usd = round(total.cost_usd, 6)
        with self._lock:
            agents = {
                role: {**asdict(usage), "cost_usd": round(usage.cost_usd, 6)} for role, usage in self._agents.items()
            }
            calls = [asdict(call) for call in self._calls]
        return {
            "agents": agents,
            "total": asdict(total),
            "cache_read_share": round(total.cache_read_share, 4),
            "model_calls": calls,
            **({"cache_notes": dict(self.cache_notes)} if self.cache_notes else {}),
            **self.extra,
        }

    def save(self) -> None:
        if self.path is not None:
            with self._save_lock:
                write_json(self.path, self.to_dict(), beneath=self.path.parent)
