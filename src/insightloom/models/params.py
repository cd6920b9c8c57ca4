"""The inference parameters sent to a model: only what its family accepts (``models.families``).

A request the model rejects fails every call, so a configured temperature is dropped (with a debug line) where the
family refuses it, where its family is unknown, or where Claude refuses it beside ``top_p`` or extended thinking;
extended thinking is asked for only where the family supports it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .families import accepts_temperature_family, supports_thinking

if TYPE_CHECKING:
    from ..config import AgentModelSpec

logger = logging.getLogger(__name__)


def _thinking_in(params: dict[str, Any]) -> bool:
    extra = params.get("additional_request_fields")
    return "thinking" in params or (isinstance(extra, dict) and "thinking" in extra)


def accepts_temperature(model_id: str, params: dict[str, Any], provider: str = "bedrock") -> bool:
    """Whether a request to ``model_id`` with ``params`` may also carry ``temperature``."""
    if not accepts_temperature_family(model_id, provider):
        return False
    return "top_p" not in params and not _thinking_in(params)


def inference_params(spec: AgentModelSpec) -> dict[str, Any]:
    """``spec.params``, extended thinking where asked for and supported, and the spec's temperature where the
    model accepts it (an explicit param wins)."""
    params = dict(spec.params)
    if spec.thinking_tokens and not _thinking_in(params):
        if supports_thinking(spec.model_id):
            thinking = {"thinking": {"type": "enabled", "budget_tokens": spec.thinking_tokens}}
            if spec.provider in ("bedrock", "auto"):
                extra = dict(params.get("additional_request_fields") or {})
                params["additional_request_fields"] = {**extra, **thinking}
            else:
                params.update(thinking)
        else:
            logger.debug("no extended thinking for %s: its model family does not support it", spec.model_id)
    if spec.temperature is None or "temperature" in params:
        return params
    if accepts_temperature(spec.model_id, params, spec.provider):
        params["temperature"] = spec.temperature
    else:
        logger.debug("temperature not sent to %s: the model family does not accept it here", spec.model_id)
    return params
