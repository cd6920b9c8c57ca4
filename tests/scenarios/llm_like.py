"""A scripted, LLM-like model: the offline brain for one role, with one deviation a real model shows.

A deviation decides, call by call, whether the role does something a hosted model does (types digits, skips a
format, claims success, resends a failing call, ends its turn early, runs out of output room...) instead of what
the offline brain would do. Afterwards the brain carries on as if the deviated exchanges had never happened (they
are trimmed from what it sees), while their effects on the job folder stay: that is a model that slipped once,
and the product has to have caught it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import Conversation, Reply
from insightloom.models.offline.roles import respond


@dataclass(frozen=True)
class RawCall:
    """A tool call whose input is sent exactly as this text (possibly not valid JSON)."""

    name: str
    raw_input: str


@dataclass(frozen=True)
class CutOff:
    """A reply that ran into the output limit: some text, then ``stopReason: max_tokens``."""

    text: str


Action = Reply | RawCall | CutOff | None
#: Gets the call number (1-based, counting every call to this role in the job), the conversation as the model
#: received it, and what the offline brain would reply; returns the reply to send, or None for the brain's own.
Deviation = Callable[[int, Conversation, Reply], Action]


def standard_response(status: str, completed: list[str], insights: list[str], files: list[str]) -> str:
    """The standard response format, as a model writes it."""

    def bullets(lines: list[str]) -> str:
        return "\n".join(f"- {line}" for line in lines) or "- none"

    return (
        f"## Status\n{status}\n## Completed Tasks\n{bullets(completed)}\n## Key Insights\n{bullets(insights)}\n"
        f"## Generated Files\n{bullets(files)}"
    )


def at_calls(calls: dict[int, Reply | RawCall | CutOff | Callable[[Conversation, Reply], Action]]) -> Deviation:
    """Deviate on the listed call numbers only."""

    def deviate(n: int, conv: Conversation, brain: Reply) -> Action:
        step = calls.get(n)
        return step(conv, brain) if callable(step) else step

    return deviate


def on_tool_calls(tool: str, change: Callable[[dict[str, Any]], dict[str, Any] | None], times: int = 1) -> Deviation:
    """Alter the brain's own call of ``tool`` (its input) the first ``times`` times it makes it."""
    seen = {"count": 0}

    def deviate(n: int, conv: Conversation, brain: Reply) -> Action:
        calls = [c for c in brain.tool_calls if c.name == tool]
        if not calls or seen["count"] >= times:
            return None
        changed = change(dict(calls[0].input))
        if changed is None:
            return None
        seen["count"] += 1
        return Reply.call(tool, **changed)

    deviate.hide = times == 1  # type: ignore[attr-defined]  # a lasting habit stays in view, as it would for a model
    return deviate


class LlmLike(OfflineModel):
    """The offline model for ``role`` with ``deviation`` applied; every deviated reply is logged in ``deviated``."""

    def __init__(
        self, role: str, deviation: Deviation, max_tokens: int = 4096, cache: bool = False, reply_size: str = "compact"
    ) -> None:
        super().__init__(role=role, max_tokens=max_tokens, cache=cache, reply_size=reply_size)
        self.deviation = deviation
        #: One-off slips are trimmed from what the brain sees afterwards; a lasting habit (a deviation with
        #: ``hide = False``) stays in its conversation, so the brain reacts to the results as a model would.
        self.hide = getattr(deviation, "hide", True)
        self.role = role
        self.calls = 0
        self.deviated: list[tuple[int, Any]] = []
        self.seen: list[Conversation] = []
        self._hidden_ids: set[str] = set()
        self._hidden_texts: set[str] = set()

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):  # type: ignore[override]
        self.calls += 1
        content = kwargs.get("system_prompt_content")
        prompt = system_prompt
        if prompt is None and content:
            prompt = "\n".join(b.get("text", "") for b in content if "text" in b)
        names = {spec["name"] for spec in tool_specs or []}
        conv = Conversation(prompt or "", messages, names)
        self.seen.append(conv)
        trimmed = Conversation(prompt or "", self._trim(messages), names)
        brain = respond(self.role, trimmed)
        action = self.deviation(self.calls, conv, brain)
        if action is None:
            self.brain = lambda _conv: brain
            async for event in super().stream(messages, tool_specs, system_prompt, **kwargs):
                yield event
            return
        self.deviated.append((self.calls, action))
        async for event in self._emit(action):
            yield event

    def _trim(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The conversation without the deviated exchanges, as the brain would have had it."""
        out = []
        for message in messages:
            blocks = [b for b in message["content"] if not self._hidden(b)]
            if blocks:
                out.append({**message, "content": blocks})
        return out

    def _hidden(self, block: dict[str, Any]) -> bool:
        if not self.hide:
            return False
        if "toolUse" in block:
            return block["toolUse"]["toolUseId"] in self._hidden_ids
        if "toolResult" in block:
            return block["toolResult"]["toolUseId"] in self._hidden_ids
        return "text" in block and block["text"] in self._hidden_texts

    async def _emit(self, action: Reply | RawCall | CutOff):
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(action, CutOff):
            self._hidden_texts.add(action.text)
            yield {"contentBlockDelta": {"delta": {"text": action.text}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "max_tokens"}}
            yield _usage()
            return
        calls: list[tuple[str, str]]
        if isinstance(action, RawCall):
            calls = [(action.name, action.raw_input)]
        else:
            calls = [(c.name, json.dumps(c.input, ensure_ascii=False)) for c in action.tool_calls]
            if action.text:
                self._hidden_texts.add(action.text)
                yield {"contentBlockDelta": {"delta": {"text": action.text}}}
                yield {"contentBlockStop": {}}
        for index, (name, payload) in enumerate(calls):
            tool_use_id = f"deviated_{self.role}_{self.calls}_{index}"
            self._hidden_ids.add(tool_use_id)
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": tool_use_id, "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": payload}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if calls else "end_turn"}}
        yield _usage()


def _usage() -> dict[str, Any]:
    return {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 0}}}
