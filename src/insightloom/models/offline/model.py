"""The deterministic offline model: a real Strands ``Model`` provider that needs no network.

Per role it emits the same tool calls a capable LLM would, decided only from the prompt and the conversation. Usage
is counted with the product's tokenizer, so ``usage.json`` means the same thing offline as on Bedrock.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any, TypedDict, TypeVar

from pydantic import BaseModel
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec

from ...context.tokens import count_tokens
from .conversation import Conversation, Reply
from .roles import respond

logger = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
CONTEXT_WINDOW = 200_000


class OfflineConfig(TypedDict, total=False):
    model_id: str
    role: str
    max_tokens: int
    cache: bool
    context_window_limit: int


def _message_text(messages: Messages) -> str:
    parts: list[str] = []
    for message in messages:
        for block in message["content"]:
            if "text" in block:
                parts.append(block["text"])
            elif "toolUse" in block:
                parts.append(
                    block["toolUse"]["name"] + json.dumps(block["toolUse"].get("input", {}), ensure_ascii=False)
                )
            elif "toolResult" in block:
                parts.extend(item.get("text", "") for item in block["toolResult"].get("content", []))
    return "\n".join(parts)


class OfflineModel(Model):
    """Plays one agent role deterministically.

    Args:
        role: The agent role it plays (``coder``, ``planner``...).
        max_tokens: The output budget; replies are cut to it like a hosted model would.
        cache: Whether the agent asked for prompt caching (simulated in a later issue).
    """

    def __init__(self, *, role: str, max_tokens: int = 4096, cache: bool = False) -> None:
        self.config: OfflineConfig = {
            "model_id": f"offline-{role}",
            "role": role,
            "max_tokens": max_tokens,
            "cache": cache,
            "context_window_limit": CONTEXT_WINDOW,
        }
        self._calls = 0

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)  # type: ignore[typeddict-item]

    def get_config(self) -> OfflineConfig:
        return self.config

    async def count_tokens(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        system_prompt_content: list[Any] | None = None,
    ) -> int:
        """The real token count of what would be sent (Strands' default is chars/4)."""
        return self._input_tokens(messages, tool_specs, system_prompt)

    @staticmethod
    def _input_tokens(messages: Messages, tool_specs: list[ToolSpec] | None, system_prompt: str | None) -> int:
        specs = json.dumps(tool_specs or [], ensure_ascii=False)
        return count_tokens(system_prompt or "") + count_tokens(_message_text(messages)) + count_tokens(specs)

    async def structured_output(
        self, output_model: type[T], prompt: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        raise NotImplementedError("the offline model does not produce structured output")
        yield {}  # pragma: no cover

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        started = time.perf_counter()
        self._calls += 1
        if system_prompt is None and kwargs.get("system_prompt_content"):
            system_prompt = "\n".join(b.get("text", "") for b in kwargs["system_prompt_content"])
        conversation = Conversation(system_prompt or "", messages, {spec["name"] for spec in tool_specs or []})
        reply = respond(self.config["role"], conversation)
        reply = self._clip(reply)
        output_text = reply.text + "".join(
            call.name + json.dumps(call.input, ensure_ascii=False) for call in reply.tool_calls
        )
        yield {"messageStart": {"role": "assistant"}}
        if reply.text:
            yield {"contentBlockDelta": {"delta": {"text": reply.text}}}
            yield {"contentBlockStop": {}}
        for index, call in enumerate(reply.tool_calls):
            tool_use_id = f"tooluse_{self.config['role']}_{self._calls}_{index}"
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": tool_use_id, "name": call.name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(call.input, ensure_ascii=False)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if reply.tool_calls else "end_turn"}}
        input_tokens = self._input_tokens(messages, tool_specs, system_prompt)
        output_tokens = count_tokens(output_text)
        yield {
            "metadata": {
                "usage": {
                    "inputTokens": input_tokens,
                    "outputTokens": output_tokens,
                    "totalTokens": input_tokens + output_tokens,
                },
                "metrics": {"latencyMs": int((time.perf_counter() - started) * 1000)},
            }
        }

    def _clip(self, reply: Reply) -> Reply:
        """Cut final text to the output budget, as max_tokens does on a hosted model."""
        budget = self.config["max_tokens"]
        if reply.tool_calls or count_tokens(reply.text) <= budget:
            return reply
        logger.warning("offline %s reply cut to its %d-token budget", self.config["role"], budget)
        words = reply.text.split(" ")
        while words and count_tokens(" ".join(words)) > budget:
            words = words[: int(len(words) * 0.9)]
        return Reply(text=" ".join(words))
