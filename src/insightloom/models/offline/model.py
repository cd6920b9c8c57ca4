"""The deterministic offline model: a real Strands ``Model`` provider that needs no network.

Per role it emits the same tool calls a capable LLM would, decided only from the prompt and the conversation. Usage
is counted with the product's tokenizer, and Bedrock's prefix caching is simulated on the cache points the request
carries (``context.prompt_cache``), so ``usage.json`` means the same thing offline as on Bedrock and its cost is a
dry-run estimate.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterable, Callable
from typing import Any, TypedDict, TypeVar

from pydantic import BaseModel
from strands.models import Model
from strands.types.content import Messages
from strands.types.exceptions import ContextWindowOverflowException
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec

from ...context.prompt_cache import PrefixCache
from ...context.tokens import RequestBlock, count_request, count_tokens, request_blocks
from .conversation import Conversation, Reply
from .real_size import REPLY_SIZES, real_size
from .roles import is_summarization, respond

logger = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
CONTEXT_WINDOW = 200_000


class OfflineConfig(TypedDict, total=False):
    model_id: str
    role: str
    max_tokens: int
    cache: bool
    system_point: bool
    context_window_limit: int


class OfflineModel(Model):
    """Plays one agent role deterministically.

    Args:
        role: The agent role it plays (``coder``, ``planner``...).
        max_tokens: The output budget; replies are cut to it like a hosted model would.
        cache: Whether the agent asked for prompt caching: the automatic strategy's cache points are then simulated
            (explicit ``cachePoint`` blocks are honoured either way, as Bedrock does).
        brain: Decides the replies instead of the role's own brain (the ablation's naive single agent).
        priced_as: The hosted model id the role is configured with: its cache rules (minimum cacheable prefix) are
            the ones simulated, so a Haiku role's short prefix is billed as input as Bedrock would bill it.
        reply_size: ``compact`` (the offline model's own terse replies) or ``real``: the same decisions written at
            a hosted model's length (``real_size``), for cost estimates and transcripts sized like a real job's.
    """

    def __init__(
        self,
        *,
        role: str,
        max_tokens: int = 4096,
        cache: bool = False,
        brain: Callable[[Conversation], Reply] | None = None,
        priced_as: str | None = None,
        reply_size: str = "compact",
    ) -> None:
        self.config: OfflineConfig = {
            "model_id": f"offline-{role}",
            "role": role,
            "max_tokens": max_tokens,
            "cache": cache,
            "system_point": True,
            "context_window_limit": CONTEXT_WINDOW,
        }
        if reply_size not in REPLY_SIZES:
            raise ValueError(f"reply_size must be one of {', '.join(REPLY_SIZES)}, not {reply_size!r}")
        self.brain = brain
        self.reply_size = reply_size
        self.prompt_cache = PrefixCache(priced_as or self.config["model_id"])
        self._calls = 0
        #: Summarization calls answered (the conversation manager's, which bypass the agent's hooks).
        self.summarizations = 0

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
        return count_request(messages, tool_specs, system_prompt, system_prompt_content)

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
        content = kwargs.get("system_prompt_content")
        if system_prompt is None and content:
            system_prompt = "\n".join(b.get("text", "") for b in content if "text" in b)
        blocks = request_blocks(messages, tool_specs, system_prompt, content)
        self._check_window(blocks)
        # Billed before the reply is decided, as a hosted model bills the request it received.
        billed = self.prompt_cache.account(
            blocks, auto=bool(self.config["cache"]), system_point=self.config["system_point"]
        )
        conversation = Conversation(system_prompt or "", messages, {spec["name"] for spec in tool_specs or []})
        self.summarizations += is_summarization(conversation)
        decide = self.brain or (lambda conv: respond(self.config["role"], conv))
        reply = decide(conversation)
        if self.reply_size == "real" and not is_summarization(conversation) and self.config["role"] != "answerer":
            reply = real_size(reply, conversation, decide)
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
        output_tokens = count_tokens(output_text)
        yield {
            "metadata": {
                "usage": {
                    "inputTokens": billed.input_tokens,
                    "outputTokens": output_tokens,
                    "totalTokens": billed.sent + output_tokens,
                    "cacheReadInputTokens": billed.cache_read_tokens,
                    "cacheWriteInputTokens": billed.cache_write_tokens,
                },
                "metrics": {"latencyMs": int((time.perf_counter() - started) * 1000)},
            }
        }

    def _check_window(self, blocks: list[RequestBlock]) -> None:
        """Reject a request over the context window, as a hosted model does before it bills anything."""
        window = self.config["context_window_limit"]
        if sum(len(b.text.encode()) for b in blocks) <= window:  # a token is at least one byte: surely fits
            return
        sent = sum(b.tokens for b in blocks)
        if sent > window:
            raise ContextWindowOverflowException(f"the request holds {sent:,} tokens: over the {window:,}-token window")

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
