"""Which model ids a region can call, as the strict endpoint enforces it (its own table, not the product's).

Sources: Bedrock user guide, "Supported Regions and models for inference profiles": a system-defined cross-region
profile ``<geography>.<model id>`` is served from the source regions of its geography (``us.`` from US regions,
``eu.`` from European ones, ``apac.`` from Asia Pacific ones, ``jp.`` from Tokyo and Osaka, ``au.`` from Sydney and
Melbourne, ``ca.`` from Canada), ``global.`` from every commercial region; from another region Bedrock answers
"The provided model identifier is invalid." The Claude 3.7 and Claude 4 models have no on-demand throughput: a bare
model id is refused with "Invocation of model ID … with on-demand throughput isn't supported. Retry your request
with the ID or ARN of an inference profile that contains this model."
"""

from __future__ import annotations

import re

from .rules import Violation

__all__ = ["SOURCE_REGIONS", "access_violation"]

#: Profile prefix -> the region-name patterns that may call it (None: every commercial region).
SOURCE_REGIONS: dict[str, str | None] = {
    "us-gov": r"us-gov-",
    "us": r"us-(?!gov-)",
    "eu": r"eu-",
    "apac": r"ap-",
    "jp": r"ap-northeast-[13]$",
    "au": r"ap-southeast-[24]$",
    "ca": r"ca-",
    "global": None,
}
_PROFILE_RE = re.compile(r"^(?P<prefix>us-gov|us|eu|apac|jp|au|ca|global)\.(?P<base>.+)$")
#: Models served through inference profiles only.
_PROFILE_ONLY_RE = re.compile(r"^anthropic\.claude-(?:3-7-|(?:sonnet|opus|haiku)-4)")


def access_violation(model_id: str, region: str) -> list[Violation]:
    """The access rule ``model_id`` called from ``region`` breaks (``model.region``, ``model.on_demand``), if any."""
    if model_id.startswith("arn:"):
        return []
    match = _PROFILE_RE.match(model_id)
    if match:
        allowed = SOURCE_REGIONS[match["prefix"]]
        if allowed is not None and not re.match(allowed, region):
            return [
                Violation(
                    "model.region",
                    f"The provided model identifier is invalid. ({model_id} is a {match['prefix']}. inference "
                    f"profile, which {region} cannot call.)",
                    model_id,
                )
            ]
        return []
    if _PROFILE_ONLY_RE.match(model_id):
        return [
            Violation(
                "model.on_demand",
                f"Invocation of model ID {model_id} with on-demand throughput isn't supported. Retry your request "
                "with the ID or ARN of an inference profile that contains this model.",
                model_id,
            )
        ]
    return []
