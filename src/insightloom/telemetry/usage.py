"""Per-job token usage by agent, in the ``usage.json`` contract."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..config import ROLES
from ..jobs import write_json


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


class UsageLedger:
    """Thread-safe running totals for one job; every role present from the start."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._agents = {role: AgentUsage() for role in ROLES}

    @classmethod
    def load(cls, path: Path) -> UsageLedger:
        """Continue counting from a job's usage.json (for resumed jobs)."""
        ledger = cls(path)
        if path.exists():
            from ..jobs import read_json

            for role, values in read_json(path).get("agents", {}).items():
                ledger._agents[role] = AgentUsage(**{k: values[k] for k in asdict(AgentUsage()) if k in values})
        return ledger

    def add(self, role: str, usage: AgentUsage) -> None:
        with self._lock:
            self._agents.setdefault(role, AgentUsage()).add(usage)
        self.save()

    def agent(self, role: str) -> AgentUsage:
        return self._agents[role]

    def total(self) -> AgentUsage:
        total = AgentUsage()
        for usage in self._agents.values():
            total.add(usage)
        return total

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            agents = {role: asdict(usage) for role, usage in self._agents.items()}
        total = self.total()
        total.cost_usd = round(total.cost_usd, 6)
        return {"agents": agents, "total": asdict(total)}

    def save(self) -> None:
        if self.path is not None:
            write_json(self.path, self.to_dict())
