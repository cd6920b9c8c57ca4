"""Any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp server, LM Studio)."""

from __future__ import annotations

import os
from typing import Any

from ..config import AgentModelSpec, Settings
from ._counting import make_counting
from ._optional import import_provider
from .params import inference_params


def make_openai(spec: AgentModelSpec, settings: Settings) -> Any:
    module = import_provider("strands.models.openai", "openai")
    client_args: dict[str, Any] = {
        "api_key": os.environ.get("OPENAI_API_KEY", "not-needed"),
        "timeout": settings.model_timeout_s,
        "max_retries": settings.model_max_attempts,
    }
    if spec.base_url:
        client_args["base_url"] = spec.base_url
    return make_counting(
        module.OpenAIModel,
        token_margin=settings.token_margin,
        client_args=client_args,
        model_id=spec.model_id,
        params={"max_tokens": spec.max_tokens, **inference_params(spec)},
    )
