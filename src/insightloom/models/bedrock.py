"""Amazon Bedrock (Converse API), the production default."""

from __future__ import annotations

import os

from botocore.config import Config as BotocoreConfig
from strands.models import BedrockModel, CacheConfig

from ..config import AgentModelSpec, Settings

DEFAULT_REGION = "us-west-2"


def make_bedrock(spec: AgentModelSpec, settings: Settings) -> BedrockModel:
    """A Bedrock model with a read timeout and bounded retries on every call.

    Only the parameters the config names are sent: newer models reject ``temperature`` and friends, and no stop
    sequence is set because one like ``"\\n\\nHuman"`` truncates prose that contains it.
    """
    client_config = BotocoreConfig(
        read_timeout=settings.model_timeout_s,
        connect_timeout=10,
        retries={"max_attempts": settings.model_max_attempts, "mode": "adaptive"},
    )
    extra = {"cache_config": CacheConfig(strategy="auto")} if spec.cache else {}
    return BedrockModel(
        model_id=spec.model_id,
        max_tokens=spec.max_tokens,
        region_name=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
        boto_client_config=client_config,
        **extra,
        **spec.params,
    )
