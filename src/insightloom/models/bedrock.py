"""Amazon Bedrock (Converse API), the production default."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from botocore.config import Config as BotocoreConfig
from strands.models import BedrockModel, CacheConfig
from strands.types.content import Messages, SystemContentBlock
from strands.types.tools import ToolSpec

from ..config import AgentModelSpec, Settings, aws_credentials_present
from ..context.tokens import count_request, with_margin
from .params import inference_params
from .regions import DEFAULT_REGION, bedrock_region

__all__ = ["DEFAULT_REGION", "CountingBedrockModel", "make_bedrock"]
logger = logging.getLogger(__name__)


class CountingBedrockModel(BedrockModel):
    """Bedrock with real token counts for Strands' context management (its own fallback is chars/4).

    With ``use_native_token_count`` it asks Bedrock ``CountTokens`` for the exact figure; otherwise, or when that call
    fails, it counts locally with the product's tokenizer plus the safety margin for Claude models.

    Args:
        token_margin: The safety margin added to local counts for Claude models.
        **config: BedrockModel configuration.
    """

    def __init__(self, *, token_margin: float = 0.2, **config: Any) -> None:
        super().__init__(**config)
        self.token_margin = token_margin

    async def count_tokens(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        system_prompt_content: list[SystemContentBlock] | None = None,
    ) -> int:
        if self.config.get("use_native_token_count"):
            try:
                return await self._native_count(messages, tool_specs, system_prompt, system_prompt_content)
            except Exception as exc:  # any failure falls back to the local count, never to chars/4
                logger.debug("Bedrock CountTokens failed (%s); counting locally", exc)
        local = count_request(messages, tool_specs, system_prompt, system_prompt_content)
        return with_margin(local, str(self.config.get("model_id", "")), self.token_margin)

    async def _native_count(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None,
        system_prompt: str | None,
        system_prompt_content: list[SystemContentBlock] | None,
    ) -> int:
        if system_prompt and system_prompt_content is None:
            system_prompt_content = [{"text": system_prompt}]
        request = self.format_request(messages, tool_specs, system_prompt_content)
        converse = {key: request[key] for key in ("messages", "system", "toolConfig") if key in request}
        response = await asyncio.to_thread(
            self.client.count_tokens, modelId=self.config["model_id"], input={"converse": converse}
        )
        return int(response["inputTokens"])


#: Error codes botocore's retry handler treats as throttling (``botocore.retries.standard``).
THROTTLING_CODES = frozenset({"ThrottlingException", "ServiceUnavailableException", "TooManyRequestsException"})
#: botocore's backoff cap: a retry waits ``rand(0, 1) * min(2 ** (attempt - 1), 20)`` seconds (standard mode).
_MAX_BACKOFF_S = 20


def report_throttling(client: Any, max_attempts: int, on_progress: Callable[..., object]) -> None:
    """Tell ``on_progress`` each time botocore retries a throttled Bedrock call, with the most it will wait.

    botocore's adaptive mode owns the waiting (``insightloom.models.retries``); this only listens to its
    ``needs-retry`` event, so a throttled job shows why it paused instead of looking stuck.
    """

    def notice(response: Any = None, attempts: int = 1, **_: Any) -> None:
        parsed = response[1] if isinstance(response, tuple) and len(response) == 2 else None
        code = (parsed or {}).get("Error", {}).get("Code") if isinstance(parsed, dict) else None
        if code not in THROTTLING_CODES or attempts >= max_attempts:
            return
        wait = min(2 ** (attempts - 1), _MAX_BACKOFF_S)
        on_progress(
            message=f"throttled by Bedrock ({code}), retrying in up to {wait} s (attempt {attempts + 1} of "
            f"{max_attempts})",
            reason="throttled",
            attempt=attempts + 1,
            max_attempts=max_attempts,
            wait_s=wait,
        )

    client.meta.events.register("needs-retry.bedrock-runtime", notice)


def watch_throttling(model: Any, settings: Settings, on_progress: Callable[..., object]) -> None:
    """:func:`report_throttling` on ``model``'s client when it is a Bedrock model (others have no botocore client)."""
    if isinstance(model, BedrockModel):
        report_throttling(model.client, settings.model_max_attempts, on_progress)


def make_bedrock(spec: AgentModelSpec, settings: Settings) -> BedrockModel:
    """A Bedrock model with a read timeout and bounded retries on every call.

    Only the parameters the config names are sent: newer models reject ``temperature`` and friends, and no stop
    sequence is set because one like ``"\\n\\nHuman"`` truncates prose that contains it. With ``cache`` the automatic
    caching strategy is on: a cache point on the last message, and the factory's own point after the static system
    prompt. ``exact_token_count`` uses Bedrock CountTokens, but only when credentials are configured.
    """
    client_config = BotocoreConfig(
        read_timeout=settings.model_timeout_s,
        connect_timeout=10,
        retries={"total_max_attempts": settings.model_max_attempts, "mode": "adaptive"},  # the first call included
    )
    extra: dict[str, Any] = {"cache_config": CacheConfig(strategy="auto")} if spec.cache else {}
    if settings.exact_token_count and aws_credentials_present():
        extra["use_native_token_count"] = True
    model = CountingBedrockModel(
        token_margin=settings.token_margin,
        model_id=spec.model_id,
        max_tokens=spec.max_tokens,
        region_name=bedrock_region(),
        boto_client_config=client_config,
        **extra,
        **inference_params(spec),
    )
    return model
