"""A local Ollama server."""

from __future__ import annotations

from typing import Any

from ..config import AgentModelSpec, Settings
from ._counting import make_counting
from ._optional import import_provider
from .params import inference_params

DEFAULT_HOST = "http://127.0.0.1:11434"


def make_ollama(spec: AgentModelSpec, settings: Settings) -> Any:
    module = import_provider("strands.models.ollama", "ollama")
    return make_counting(
        module.OllamaModel,
        token_margin=settings.token_margin,
        host=spec.base_url or DEFAULT_HOST,
        model_id=spec.model_id,
        max_tokens=spec.max_tokens,
        options=inference_params(spec) or None,
        ollama_client_args={"timeout": settings.model_timeout_s},
    )
