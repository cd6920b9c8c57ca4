"""The inference parameters sent to a model: only what its family accepts.

Newer models reject some parameters outright: OpenAI's reasoning models refuse ``temperature``, Claude refuses
``temperature`` together with ``top_p`` and wants the default while extended thinking is on. A request the model
rejects fails every call, so a configured temperature is dropped (with a debug line) where it would be refused.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import AgentModelSpec

logger = logging.getLogger(__name__)

_NO_TEMPERATURE_RE = re.compile(r"(?:^|[/.])(?:o\d(?:-|$)|o\d-mini|gpt-5)", re.IGNORECASE)


def accepts_temperature(model_id: str, params: dict[str, Any]) -> bool:
    """Whether a request to ``model_id`` with ``params`` may also carry ``temperature``."""
    if _NO_TEMPERATURE_RE.search(model_id):
        return False
    extra = params.get("additional_request_fields")
    thinking = "thinking" in params or (isinstance(extra, dict) and "thinking" in extra)
    return "top_p" not in params and not thinking


def inference_params(spec: AgentModelSpec) -> dict[str, Any]:
    """``spec.params`` plus the spec's temperature where the model accepts it (an explicit param wins)."""
    params = dict(spec.params)
    if spec.temperature is None or "temperature" in params:
        return params
    if accepts_temperature(spec.model_id, params):
        params["temperature"] = spec.temperature
    else:
        logger.debug("temperature not sent to %s: the model family does not accept it here", spec.model_id)
    return params
