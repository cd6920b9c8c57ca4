"""Model providers behind one factory: ``make_model(spec, role, settings)``.

One module per provider; optional SDKs are imported lazily and fail with an install hint naming the extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:
    from strands.models import Model

    from ..config import AgentModelSpec, Settings

__all__ = ["make_model"]


def make_model(spec: AgentModelSpec, role: str, settings: Settings) -> Model:
    """Build the Strands model for one agent from its spec.

    Raises:
        ConfigError: Unknown or unresolved provider, a model id the provider cannot serve, or the provider's extra
            is not installed.
    """
    from dataclasses import replace
    from pathlib import Path

    from .model_ids import model_id_for

    provider = spec.provider
    spec = replace(spec, model_id=model_id_for(provider, spec.model_id, role))
    if provider == "offline":
        from .offline import OfflineModel

        return OfflineModel(
            role=role,
            max_tokens=spec.max_tokens,
            cache=spec.cache,
            priced_as=spec.model_id,
            reply_size=settings.offline_reply_size,
        )
    if provider == "replay":
        from .model_io import ReplayModel, read_model_io

        if not settings.replay_from:
            raise ConfigError(
                "The replay provider needs the recording to answer from.",
                "pass --replay-from <job>/transcripts/model_io.jsonl (a job run with --record).",
            )
        return ReplayModel(role, read_model_io(Path(settings.replay_from)))
    if provider == "bedrock":
        from .bedrock import make_bedrock

        return make_bedrock(spec, settings)
    if provider == "openai":
        from .openai import make_openai

        return make_openai(spec, settings)
    if provider == "anthropic":
        from .anthropic import make_anthropic

        return make_anthropic(spec, settings)
    if provider == "ollama":
        from .ollama import make_ollama

        return make_ollama(spec, settings)
    if provider == "litellm":
        from .litellm import make_litellm

        return make_litellm(spec, settings)
    raise ConfigError(
        f"Provider {provider!r} for the {role} agent is not resolved.",
        "use bedrock, openai, ollama, anthropic, "
        "litellm, offline or replay (auto is resolved from credentials before models are built).",
    )
