"""Anthropic's own API."""

from __future__ import annotations

import os
from typing import Any

from ..config import AgentModelSpec, Settings
from ..errors import ConfigError
from ._counting import make_counting
from ._optional import import_provider
from .params import inference_params


def make_anthropic(spec: AgentModelSpec, settings: Settings) -> Any:
    module = import_provider("strands.models.anthropic", "anthropic")
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise ConfigError("The anthropic provider needs an API key.", "export ANTHROPIC_API_KEY=...")
    client_args = {"api_key": key, "timeout": settings.model_timeout_s, "max_retries": settings.model_max_attempts}
    return make_counting(
        module.AnthropicModel,
        token_margin=settings.token_margin,
        client_args=client_args,
        model_id=spec.model_id,
        max_tokens=spec.max_tokens,
        params=inference_params(spec),
    )
