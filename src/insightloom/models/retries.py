"""Retries in one layer: the provider's client retries, Strands' agent loop does not.

A job makes about 40 model calls, and an account with a low tokens-per-minute quota is throttled in bursts. Each
client library already retries what it can tell is transient: botocore's ``adaptive`` mode (``model_max_attempts``
attempts, default 50, with client-side rate limiting once throttled) for Bedrock, and the Anthropic and OpenAI SDKs'
own ``max_retries``. Strands' ``ModelRetryStrategy`` would retry the same throttling error again on top, multiplying
the attempts (3 × 3 before this layer was settled); so every agent gets one attempt from Strands and the client owns
the waiting. ``docs/bedrock.md`` documents the settings.
"""

from __future__ import annotations

from strands import ModelRetryStrategy


def agent_retry_strategy() -> ModelRetryStrategy:
    """Strands' retry strategy for every agent: a single attempt, since the model client already retried."""
    return ModelRetryStrategy(max_attempts=1)
