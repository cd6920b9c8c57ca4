"""LiteLLM, for any provider it routes to."""

from __future__ import annotations

import os
from typing import Any

from ..config import AgentModelSpec, Settings
from ._counting import make_counting
from ._optional import import_provider
from .params import inference_params


def make_litellm(spec: AgentModelSpec, settings: Settings) -> Any:
    # litellm fetches a cost map over the network at import unless told to use its bundled copy.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    module = import_provider("strands.models.litellm", "litellm")
    client_args = {"api_base": spec.base_url} if spec.base_url else {}
    return make_counting(
        module.LiteLLMModel,
        token_margin=settings.token_margin,
        client_args=client_args,
        model_id=spec.model_id,
        params={"max_tokens": spec.max_tokens, "timeout": settings.model_timeout_s, **inference_params(spec)},
    )
