"""The four-key shared_state that tool agents share, and the two message formats.

Agents never see each other's histories: only the last message, compressed clues, the plan and a short log. The
clues stay within a token budget: when a new clue would push them over, the oldest clues are compressed into a
digest that keeps each agent's status line and generated-file list, and if even the digest is too long its oldest
entries go first. A clue's completed tasks are counted, not listed: the plan's checkboxes already say which.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .context.budget import compress_text
from .context.tokens import count_tokens
from .fileio import read_json, write_json
from .plan import split_not_possible
from .timeutil import utc_now

CLUES_FORMAT = "Here is clues from {agent}:\n\n<clues>\n{text}\n</clues>\n\n"
RESPONSE_FORMAT = "Response from {agent}:\n\n<response>\n{text}\n</response>\n\n*Please execute the next step.*"

_HISTORY_MESSAGE_CHARS = 300
_CLUE_SECTIONS = ("status", "completed tasks", "key insights", "generated files")
_DIGEST_SECTIONS = ("status", "generated files")
_DASH_RE = re.compile(r"\s+(?:—|–|--)\s+")
_CLUE_BLOCK_RE = re.compile(r"Here is clues from ([^:\n]+):\n\n<clues>\n(.*?)\n</clues>\n\n", re.S)
DEFAULT_CLUE_BUDGET = 1200


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


def _bullets(lines: list[str]) -> list[str]:
    """The text of each ``- `` bullet, without ``- none`` (the format's way of saying the list is empty)."""
    out = [line.strip()[2:].strip() for line in lines if line.strip().startswith("- ")]
    return [entry for entry in out if entry and entry.lower() != "none"]


def completed_tasks(text: str) -> list[str]:
    """The plan items listed under ``## Completed Tasks``, without those reported there as not possible."""
    return [entry for entry in _bullets(_sections(text).get("completed tasks", [])) if not split_not_possible(entry)]


def _not_possible_entry(entry: str) -> tuple[str, str]:
    """A ``## Not Possible`` bullet: ``<item> — not possible: <reason>`` or just ``<item> — <reason>``."""
    split = split_not_possible(entry)
    if split:
        return split
    parts = _DASH_RE.split(entry, maxsplit=1)
    return parts[0].strip(), parts[1].strip() if len(parts) > 1 else ""


def not_possible_tasks(text: str) -> list[tuple[str, str]]:
    """The ``(item, reason)`` pairs an agent reported as not possible.

    Either as a Completed Tasks line ``- <item> — not possible: <reason>``, or as a bullet of a ``## Not Possible``
    section (there the words "not possible" may be left out: ``- <item> — <reason>``). An empty reason is kept empty;
    ``update_plan`` refuses it and says how to give one.
    """
    parts = _sections(text)
    found = [split for entry in _bullets(parts.get("completed tasks", [])) if (split := split_not_possible(entry))]
    found += [_not_possible_entry(entry) for entry in _bullets(parts.get("not possible", []))]
    return found


def _keep_sections(text: str, names: tuple[str, ...], max_insights: int) -> str | None:
    parts = _sections(text)
    if not parts:
        return None
    keep = []
    for name in names:
        lines = parts.get(name)
        if not lines:
            continue
        if name == "key insights":
            lines = lines[:max_insights]
        elif name == "completed tasks":
            entries = _bullets(lines)
            impossible = sum(1 for entry in entries if split_not_possible(entry))
            extra = f", {impossible} not possible" if impossible else ""
            lines = [f"- {len(entries) - impossible} plan item(s){extra}"]
        keep.append(f"## {name.title()}\n" + "\n".join(lines))
    return "\n".join(keep)


def make_clue(text: str, max_insights: int = 4) -> str:
    """Compress a standard response into a clue: status, how many items were done, a few insights and the files."""
    kept = _keep_sections(text, _CLUE_SECTIONS, max_insights)
    return kept if kept is not None else compress_text(text.strip(), 100)


def digest_clue(text: str) -> str:
    """A clue cut to its status line and generated-file list (what the digest keeps of an old clue)."""
    kept = _keep_sections(text, _DIGEST_SECTIONS, 0)
    return kept if kept is not None else compress_text(text.strip(), 40)


def parse_clues(text: str) -> list[tuple[str, str]]:
    """The ``(agent, clue text)`` blocks of a clues string, oldest first."""
    return [(m.group(1), m.group(2)) for m in _CLUE_BLOCK_RE.finditer(text)]


def _render(entries: list[tuple[str, str]]) -> str:
    return "".join(CLUES_FORMAT.format(agent=agent, text=text) for agent, text in entries)


def digest(entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One digest clue per agent, in order of first appearance: its latest status line and every file it listed."""
    merged: dict[str, tuple[str, list[str]]] = {}
    for agent, text in entries:
        parts = _sections(text)
        previous_status, files = merged.get(agent, ("", []))
        status_lines = parts.get("status")
        files += [line for line in parts.get("generated files", []) if line not in files]
        merged[agent] = (status_lines[0] if status_lines else previous_status, files)
    out = []
    for agent, (status, files) in merged.items():
        text = f"## Status\n{status or 'UNKNOWN'}"
        if files:
            text += "\n## Generated Files\n" + "\n".join(files)
        out.append((agent, text))
    return out


def bound_clues(entries: list[tuple[str, str]], budget: int) -> str:
    """The clues as one string of at most ``budget`` tokens, the newest kept in full for as long as possible.

    The oldest clues are merged into a digest (one entry per agent: its status line and generated files), one more
    clue at a time until the rest fits. When the digest alone is still too long its oldest entries are dropped, and a
    lone entry that is still too long keeps only the lines that fit.
    """
    rendered = _render(entries)
    for cut in range(1, len(entries) + 1):
        if count_tokens(rendered) <= budget:
            return rendered
        entries_now = digest(entries[:cut]) + list(entries[cut:])
        rendered = _render(entries_now)
    if count_tokens(rendered) <= budget:
        return rendered
    remaining = digest(entries)
    while len(remaining) > 1 and count_tokens(_render(remaining)) > budget:
        remaining.pop(0)
    while remaining and count_tokens(_render(remaining)) > budget:
        agent, text = remaining[0]
        allowance = budget - count_tokens(_render([(agent, "")])) - 2
        fitted = compress_text(text, min(allowance, count_tokens(text) - 1))
        remaining = [(agent, fitted)] if fitted else []
    return _render(remaining)


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
            write_json(self.path, self.to_dict(), beneath=self.path.parent)

    @classmethod
    def load(cls, path: Path) -> SharedState:
        if not path.exists():
            return cls(path=path)
        data = read_json(path, beneath=path.parent)  # a job file: never through a link a script planted
        return cls(data["messages"], data["clues"], data["full_plan"], list(data["history"]), path=path)

    def record(self, agent: str, message: str, clue_budget: int = DEFAULT_CLUE_BUDGET) -> None:
        """Store an agent's final message, its clue (clues kept within ``clue_budget`` tokens) and a log line."""
        with self._lock:
            self.messages = message
            self.clues = bound_clues([*parse_clues(self.clues), (agent, make_clue(message))], clue_budget)
            short = message if len(message) <= _HISTORY_MESSAGE_CHARS else message[:_HISTORY_MESSAGE_CHARS] + "…"
            self.history.append({"agent": agent, "message": short, "ts": utc_now()})
            self.save()

    def set_plan(self, plan: str) -> None:
        with self._lock:
            self.full_plan = plan
            self.save()
