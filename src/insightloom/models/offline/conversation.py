"""A read-only view of what the offline model was sent: prompt tags, the user's text and past tool results.

The offline model decides only from this, as a hosted LLM would: no side channel into the job.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from strands.types.content import Messages


@dataclass(frozen=True)
class ToolExchange:
    """One tool call the model made and the result it got back."""

    name: str
    input: dict[str, Any]
    result: str
    status: str


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """What the model says next: text, tool calls, or both."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()

    @classmethod
    def call(cls, name: str, **tool_input: Any) -> Reply:
        return cls(tool_calls=(ToolCall(name, tool_input),))


@dataclass
class Conversation:
    system_prompt: str
    messages: Messages
    tool_names: set[str] = field(default_factory=set)

    def tag(self, name: str, text: str | None = None) -> str | None:
        """The content of ``<name>…</name>`` in the system prompt (or ``text``), stripped; None when absent."""
        match = re.search(rf"<{name}>\s*(.*?)\s*</{name}>", self.system_prompt if text is None else text, re.S)
        return match.group(1) if match else None

    def json_tag(self, name: str) -> Any:
        raw = self.tag(name)
        return json.loads(raw) if raw else None

    @property
    def user_text(self) -> str:
        """The first user message's text: the task this invocation was given."""
        for message in self.messages:
            if message["role"] == "user":
                texts = [block["text"] for block in message["content"] if "text" in block]
                if texts:
                    return "\n".join(texts)
        return ""

    def exchanges(self) -> list[ToolExchange]:
        """Every tool call and its result, in order."""
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        out: list[ToolExchange] = []
        for message in self.messages:
            for block in message["content"]:
                if "toolUse" in block:
                    use = block["toolUse"]
                    calls[use["toolUseId"]] = (use["name"], dict(use.get("input") or {}))
                elif "toolResult" in block:
                    result = block["toolResult"]
                    name, tool_input = calls.get(result["toolUseId"], ("", {}))
                    text = "\n".join(
                        item.get("text", "") or json.dumps(item.get("json", ""), ensure_ascii=False)
                        for item in result.get("content", [])
                    )
                    out.append(ToolExchange(name, tool_input, text, result.get("status", "success")))
        return out

    def last(self) -> ToolExchange | None:
        exchanges = self.exchanges()
        return exchanges[-1] if exchanges else None
