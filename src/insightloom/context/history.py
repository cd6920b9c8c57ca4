"""Bound an agent's own growing tool history: older exchanges are reduced to short stubs before each model call.

An agent that loops over tools re-sends every earlier call and result on each turn, so its input grows with what its
tools produced. What those old exchanges said is already kept elsewhere: the plan's checkboxes, the clues, the
scripts in ``code/`` and the result files. So once the verbatim part of the older exchanges passes a threshold, each
of them is reduced at once: a long tool result becomes its first line plus its status and verdict lines, a long
tool input (a script, a report draft) becomes a note saying where its content lives.

Reducing in one batch, at a threshold, rather than a little on every call keeps the conversation prefix identical
between calls most of the time, which is what prompt caching needs. A stub never changes once written.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from strands.hooks import BeforeModelCallEvent, HookProvider, HookRegistry

from .tokens import count_tokens

logger = logging.getLogger(__name__)

STUB_PREFIX = "[reduced]"
_STATUS_RE = re.compile(r"^##\s*Status\s*\n+\s*(\S+)", re.M | re.I)
_VERDICT_RE = re.compile(r"^[-*\s]*verdict\W+\w+.*$", re.M | re.I)
_HEAD_CHARS = 160


@dataclass(frozen=True)
class ReductionPolicy:
    """When and what to reduce.

    Attributes:
        keep_recent: The newest exchanges, always kept verbatim.
        threshold_tokens: Reduce once the reducible content of the older exchanges passes this many tokens.
        result_tokens: Tool results longer than this are reduced; None keeps results.
        input_tokens: Tool-input strings longer than this are reduced; None keeps inputs.
    """

    keep_recent: int
    threshold_tokens: int
    result_tokens: int | None = None
    input_tokens: int | None = None


def _text_items(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in result.get("content", []) if "text" in item]


def result_stub(text: str, note: str = "") -> str:
    """A tool result cut to what the next decisions need: the first line, the status and any verdict.

    ``note`` ends the stub with what the agent can no longer read here (for the Supervisor: the open plan items),
    stated in the stub itself because the agent may see nothing else that holds it.
    """
    head = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(head) > _HEAD_CHARS:
        head = head[:_HEAD_CHARS].rsplit(" ", 1)[0] + " …"
    parts = [f"{STUB_PREFIX} {head}"]
    status = _STATUS_RE.search(text)
    if status:
        parts.append(f"Status: {status.group(1)}")
    parts.extend(match.group(0).strip(" -*") for match in _VERDICT_RE.finditer(text))
    if note:
        parts.append(note)
    return "\n".join(parts)


def input_stub(value: str, tool_input: dict[str, Any]) -> str:
    """A long tool input replaced by a note saying where its content lives."""
    where = tool_input.get("file_path") or tool_input.get("path")
    lines = value.count("\n") + (0 if value.endswith("\n") else 1)
    place = f"saved as code/{str(where).removeprefix('code/')}" if where else "already applied"
    return f"{STUB_PREFIX} {lines} lines sent earlier, {place}."


class HistoryReducer(HookProvider):
    """Reduces an agent's older tool exchanges in place before each model call.

    Args:
        policy: When and what to reduce.
        note: Called once per reduction; its text ends every result stub written then.
    """

    def __init__(self, policy: ReductionPolicy, note: Callable[[], str] | None = None) -> None:
        self.policy = policy
        self.note = note
        self._note_text = ""
        self.reductions = 0

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeModelCallEvent, self._before_model_call)

    def _before_model_call(self, event: BeforeModelCallEvent) -> None:
        saved = self.reduce(event.agent.messages)  # type: ignore[arg-type]  # Message is a TypedDict
        if saved:
            logger.debug("%s: reduced older tool exchanges by %d tokens", getattr(event.agent, "name", "?"), saved)

    def reduce(self, messages: list[dict[str, Any]]) -> int:
        """Reduce the older exchanges when their verbatim part is over the threshold; returns the tokens saved."""
        older = self._older_blocks(messages)
        pending = list(self._reducible(older))
        verbatim = sum(tokens for _, tokens in pending)
        if verbatim <= self.policy.threshold_tokens:
            return 0
        saved = 0
        self._note_text = self.note() if self.note else ""
        for apply, tokens in pending:
            saved += tokens - apply()
        self.reductions += 1
        return saved

    def _older_blocks(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Content blocks of every exchange except the newest ``keep_recent`` ones."""
        starts = [i for i, m in enumerate(messages) if any("toolUse" in b for b in m.get("content", []))]
        if len(starts) <= self.policy.keep_recent:
            return []
        cut = starts[len(starts) - self.policy.keep_recent] if self.policy.keep_recent else len(messages)
        return [block for message in messages[:cut] for block in message.get("content", [])]

    def _reducible(self, blocks: list[dict[str, Any]]) -> Iterator[tuple[Callable[[], int], int]]:
        """Pairs of (a function that reduces one piece and returns its new size, its current size)."""
        policy = self.policy
        for block in blocks:
            if "toolResult" in block and policy.result_tokens is not None:
                for item in _text_items(block["toolResult"]):
                    tokens = count_tokens(item["text"])
                    if tokens > policy.result_tokens and not item["text"].startswith(STUB_PREFIX):
                        yield self._replace_result(item), tokens
            elif "toolUse" in block and policy.input_tokens is not None:
                tool_input = block["toolUse"].get("input")
                if not isinstance(tool_input, dict):
                    continue
                for key, value in tool_input.items():
                    if isinstance(value, str) and not value.startswith(STUB_PREFIX):
                        tokens = count_tokens(value)
                        if tokens > policy.input_tokens:
                            yield self._replace_input(tool_input, key), tokens

    def _replace_result(self, item: dict[str, Any]) -> Callable[[], int]:
        def apply() -> int:
            item["text"] = result_stub(item["text"], self._note_text)
            return count_tokens(item["text"])

        return apply

    @staticmethod
    def _replace_input(tool_input: dict[str, Any], key: str) -> Callable[[], int]:
        def apply() -> int:
            tool_input[key] = input_stub(tool_input[key], tool_input)
            return count_tokens(tool_input[key])

        return apply
