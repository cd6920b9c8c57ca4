"""The four-key shared_state that tool agents share, and the two message formats.

Agents never see each other's histories: only the last message, compressed clues, the plan and a short log.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .jobs import read_json, write_json
from .timeutil import utc_now

CLUES_FORMAT = "Here is clues from {agent}:\n\n<clues>\n{text}\n</clues>\n\n"
RESPONSE_FORMAT = "Response from {agent}:\n\n<response>\n{text}\n</response>\n\n*Please execute the next step.*"

_HISTORY_MESSAGE_CHARS = 300
_CLUE_SECTIONS = ("status", "completed tasks", "key insights", "generated files")


def _sections(markdown: str) -> dict[str, list[str]]:
    current = None
    out: dict[str, list[str]] = {}
    for line in markdown.splitlines():
        heading = re.match(r"^##\s+(.*?)\s*$", line)
        if heading:
            current = heading.group(1).strip().lower()
            out[current] = []
        elif current is not None and line.strip():
            out[current].append(line.rstrip())
    return out


def response_status(text: str) -> str:
    """The ``## Status`` value of a standard response (``ERROR`` when absent)."""
    lines = _sections(text).get("status") or ["ERROR"]
    return lines[0].strip().upper()


def completed_tasks(text: str) -> list[str]:
    """The exact plan items listed under ``## Completed Tasks``."""
    return [
        line.strip()[2:].strip() for line in _sections(text).get("completed tasks", []) if line.strip().startswith("- ")
    ]


def make_clue(text: str, max_insights: int = 4) -> str:
    """Compress a standard response into a clue: status, done items, a few insights and the files."""
    parts = _sections(text)
    if not parts:
        return text.strip()[:400]
    keep = []
    for name in _CLUE_SECTIONS:
        lines = parts.get(name)
        if not lines:
            continue
        if name == "key insights":
            lines = lines[:max_insights]
        keep.append(f"## {name.title()}\n" + "\n".join(lines))
    return "\n".join(keep)


@dataclass
class SharedState:
    """Exactly four keys; persisted after every agent call.

    Attributes:
        messages: The last agent's final message (not the history).
        clues: Compressed summaries in CLUES_FORMAT, oldest first.
        full_plan: The checklist.
        history: A short log of agent name plus message.
    """

    messages: str = ""
    clues: str = ""
    full_plan: str = ""
    history: list[dict[str, Any]] = field(default_factory=list)
    path: Path | None = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "clues": self.clues,
            "full_plan": self.full_plan,
            "history": [dict(entry) for entry in self.history],
        }

    def save(self) -> None:
        if self.path is not None:
            write_json(self.path, self.to_dict())

    @classmethod
    def load(cls, path: Path) -> SharedState:
        if not path.exists():
            return cls(path=path)
        data = read_json(path)
        return cls(data["messages"], data["clues"], data["full_plan"], list(data["history"]), path=path)

    def record(self, agent: str, message: str) -> None:
        """Store an agent's final message, its clue and a log line, then persist."""
        with self._lock:
            self.messages = message
            self.clues += CLUES_FORMAT.format(agent=agent, text=make_clue(message))
            short = message if len(message) <= _HISTORY_MESSAGE_CHARS else message[:_HISTORY_MESSAGE_CHARS] + "…"
            self.history.append({"agent": agent, "message": short, "ts": utc_now()})
            self.save()

    def set_plan(self, plan: str) -> None:
        with self._lock:
            self.full_plan = plan
            self.save()
