"""``insightloom doctor --live``: one small Bedrock call per configured model, with what went wrong and the fix.

Each distinct Bedrock model id of the settings gets one Converse call of a few output tokens. The result names the
region and the id (the inference profile), the round-trip time, and for a failure the cause Bedrock gave (access
denied, the model not enabled, an id the region cannot serve, throttled, bad credentials) with the fix. With
``cache``, a prefix at the model's minimum cacheable size is sent twice behind a cache point, to see the second
call read it; that costs about twice the prefix in input tokens, which :func:`cache_test_tokens` tells first.

Credentials are looked for in the environment and the shared files only; with none, nothing is called (boto3's
full chain would probe the instance-metadata address).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from botocore.config import Config as BotocoreConfig
from botocore.exceptions import BotoCoreError, ClientError

from ..config import Settings, aws_credentials_present
from ..context.prompt_cache import min_cacheable_tokens
from ..context.tokens import count_tokens
from .regions import bedrock_region

__all__ = ["LiveResult", "bedrock_models", "cache_prefix", "cache_test_tokens", "check_models"]

#: The prompt of the live call and its output budget: a few tokens.
PING = "Reply with the single word OK."
PING_TOKENS = 5
#: How far above the model's minimum the cache test's prefix is (tokenizers differ a little).
_CACHE_MARGIN = 1.1

#: Error code (or message fragment) -> what it means and the fix, first match wins.
FIXES: tuple[tuple[str, str, str], ...] = (
    ("on-demand throughput", "no on-demand access to this id",
     "use an inference profile id: the region's geography prefix (us., eu., apac., jp., au.) or global. before it"),
    ("identifier is invalid", "this region cannot serve this id",
     "use the inference profile of the region's geography, or set AWS_REGION to a region that serves this id"),
    ("AccessDeniedException", "access denied: the model is not enabled for this account, or IAM refuses the call",
     "enable the model under Bedrock > Model access in this region, and allow bedrock:InvokeModel and "
     "bedrock:InvokeModelWithResponseStream in IAM"),
    ("ResourceNotFoundException", "the model is not available here",
     "pick a model id this region offers (aws bedrock list-foundation-models), or change AWS_REGION"),
    ("ThrottlingException", "throttled",
     "wait and retry; for jobs, ask for a higher tokens-per-minute quota (Service Quotas > Amazon Bedrock)"),
    ("ServiceQuotaExceededException", "over the account's quota",
     "ask for a higher quota (Service Quotas > Amazon Bedrock)"),
    ("UnrecognizedClientException", "the credentials are not valid",
     "check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or the profile (aws sts get-caller-identity)"),
    ("ExpiredToken", "the credentials have expired", "refresh them (aws sso login, or new session credentials)"),
    ("ValidationException", "Bedrock refused the request", "see the message; run with -vv for the request"),
)  # fmt: skip


@dataclass(frozen=True)
class LiveResult:
    """What one model's live call found.

    Attributes:
        model_id: The id called (an inference profile when it has a geography prefix).
        roles: The roles configured with it.
        region: The region called.
        status: ``ok``, or a short cause (``access denied…``).
        fix: What to do about a failure (empty when ok).
        round_trip_ms: The call's wall time.
        detail: Bedrock's own message for a failure; for a cache test, the tokens read and written.
    """

    model_id: str
    roles: tuple[str, ...]
    region: str
    status: str
    fix: str = ""
    round_trip_ms: int = 0
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def bedrock_models(settings: Settings) -> dict[str, tuple[str, ...]]:
    """Each distinct Bedrock model id of the settings and the roles that use it, in role order."""
    models: dict[str, list[str]] = {}
    for role, spec in settings.agents.items():
        if spec.provider == "bedrock":
            models.setdefault(spec.model_id, []).append(role)
    return {model_id: tuple(roles) for model_id, roles in models.items()}


def cache_prefix(model_id: str) -> str:
    """A system prefix just above ``model_id``'s minimum cacheable size (counted with the product's tokenizer)."""
    target = int(min_cacheable_tokens(model_id) * _CACHE_MARGIN)
    sentence = "This sentence is filler for a prompt cache test. "
    return "Cache test prefix. " + sentence * (target // count_tokens(sentence) + 1)


def cache_test_tokens(model_id: str) -> int:
    """About how many input tokens the cache test sends for ``model_id`` (its prefix, twice)."""
    return 2 * count_tokens(cache_prefix(model_id))


def _client(region: str) -> Any:
    import boto3

    config = BotocoreConfig(read_timeout=60, connect_timeout=10, retries={"total_max_attempts": 2, "mode": "standard"})
    return boto3.client("bedrock-runtime", region_name=region, config=config)


def _explain(exc: Exception) -> tuple[str, str, str]:
    """(status, fix, detail) for a failed call."""
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        message = str(exc.response.get("Error", {}).get("Message", ""))
        for key, status, fix in FIXES:
            if key in message or key == code:
                return status, fix, f"{code}: {message}"
        return f"error {code}", "see the message", f"{code}: {message}"
    return "could not reach Bedrock", "check the network, AWS_REGION and AWS_ENDPOINT_URL_BEDROCK_RUNTIME", str(exc)


def _ping(client: Any, model_id: str) -> None:
    client.converse(
        modelId=model_id,
        messages=[{"role": "user", "content": [{"text": PING}]}],
        inferenceConfig={"maxTokens": PING_TOKENS},
    )


def _cache_test(client: Any, model_id: str) -> str:
    system = [{"text": cache_prefix(model_id)}, {"cachePoint": {"type": "default"}}]
    usages = []
    for _ in range(2):
        reply = client.converse(
            modelId=model_id,
            system=system,
            messages=[{"role": "user", "content": [{"text": PING}]}],
            inferenceConfig={"maxTokens": PING_TOKENS},
        )
        usages.append(reply.get("usage", {}))
    written = int(usages[0].get("cacheWriteInputTokens", 0))
    read = int(usages[1].get("cacheReadInputTokens", 0))
    verdict = "cache works" if read > 0 else "no cache read on the second call"
    return f"{verdict}: wrote {written:,} tokens, then read {read:,}"


def check_models(settings: Settings, *, cache: bool = False, env: dict[str, str] | None = None) -> list[LiveResult]:
    """One live call per distinct Bedrock model of ``settings`` (and the cache test with ``cache``)."""
    region = bedrock_region(env)
    models = bedrock_models(settings)
    if not models:
        return []
    if not aws_credentials_present(env):
        fix = "set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run aws configure / aws sso login"
        return [LiveResult(m, roles, region, "no AWS credentials found", fix) for m, roles in models.items()]
    client = _client(region)
    results = []
    for model_id, roles in models.items():
        started, elapsed = time.perf_counter(), 0
        try:
            _ping(client, model_id)
            elapsed = int((time.perf_counter() - started) * 1000)  # the ping alone, not the cache test
            detail = _cache_test(client, model_id) if cache else ""
        except (ClientError, BotoCoreError) as exc:
            status, fix, detail = _explain(exc)
            elapsed = elapsed or int((time.perf_counter() - started) * 1000)
            results.append(LiveResult(model_id, roles, region, status, fix, elapsed, detail))
            continue
        results.append(LiveResult(model_id, roles, region, "ok", round_trip_ms=elapsed, detail=detail))
    return results
