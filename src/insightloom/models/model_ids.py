"""Model ids per provider: the same Claude model has one name on Bedrock, another on Anthropic's API, another in
LiteLLM, and none on an OpenAI-compatible server or Ollama.

``--provider`` switches every agent at once, so the defaults (Bedrock ids) are mapped here, and an id a provider
cannot serve is refused with the fix rather than sent to fail at the first model call.
"""

from __future__ import annotations

import re

from ..errors import ConfigError

#: ``us.anthropic.claude-sonnet-4-5-20250929-v1:0``: optional region prefix, vendor, model, version suffix.
_BEDROCK_ID_RE = re.compile(
    r"^(?:(?:us|eu|apac|au|jp|ca|us-gov|global)\.)?(?P<vendor>anthropic|amazon|meta|mistral|cohere|ai21|deepseek|qwen)"
    r"\.(?P<model>[A-Za-z0-9.\-]+?)(?:-v\d+(?::\d+)?)?$"
)
_LITELLM_BEDROCK = "bedrock/"


def is_bedrock_id(model_id: str) -> bool:
    """Whether ``model_id`` is a Bedrock model or inference-profile id."""
    return bool(_BEDROCK_ID_RE.match(model_id))


def model_id_for(provider: str, model_id: str, role: str) -> str:
    """The id ``provider`` knows ``model_id`` by.

    Ids that are not Bedrock ids are the user's own choice for that provider and pass unchanged.

    Raises:
        ConfigError: ``provider`` cannot serve the Bedrock model (OpenAI-compatible servers, Ollama).
    """
    match = _BEDROCK_ID_RE.match(model_id)
    if match is None or provider in ("bedrock", "auto", "offline", "replay"):
        return model_id
    if provider == "litellm":
        return _LITELLM_BEDROCK + model_id  # LiteLLM routes Bedrock ids with this prefix
    if provider == "anthropic" and match.group("vendor") == "anthropic":
        return match.group("model")
    raise ConfigError(
        f"The {role} agent's model id {model_id!r} is a Bedrock id, which provider {provider!r} cannot serve.",
        f"set agents.{role}.model_id (and the other agents' ids) to a model your {provider} endpoint serves in "
        "insightloom.yaml, e.g. `agents: {" + role + ": {provider: " + provider + ", model_id: <model>}}`, "
        "or use --provider bedrock, anthropic or litellm.",
    )
