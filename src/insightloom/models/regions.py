"""The AWS region a Bedrock call goes to, and the inference profile that region can serve.

The default model ids are ``us.`` cross-region inference profiles, which only a US source region can call: from
eu-west-1 the first call fails. Cross-region (system-defined) profiles are named ``<geography>.<model id>`` and are
served from the source regions of their geography; ``global.`` profiles from every commercial region (AWS,
"Supported Regions and models for inference profiles", Bedrock user guide). So at start-up the default ids take the
prefix of the region's geography, and an id the user chose whose prefix the region cannot serve is refused with the
id that would work.

The region is read the way botocore would, from env vars and the shared config file alone (never the credential
chain, which probes the instance-metadata address): ``AWS_REGION``, ``AWS_DEFAULT_REGION``, the selected profile's
``region`` in ``AWS_CONFIG_FILE`` (``~/.aws/config``), else :data:`DEFAULT_REGION`.
"""

from __future__ import annotations

import configparser
import dataclasses
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..config import Settings

logger = logging.getLogger(__name__)

DEFAULT_REGION = "us-west-2"
#: Region name prefix -> the geography profile prefixes its source regions serve, the default ids' first (first
#: match wins). Japan and Australia have their own geographies for the Claude 4.5 models, and their regions are
#: source regions of ``apac.`` profiles too; other APAC regions use ``apac.``, and so may the UAE. A region whose
#: first entry is None (South America, the Middle East, Africa, Canada) gets ``global.`` default ids. Sources: AWS,
#: "Supported Regions and models for inference profiles" (Bedrock user guide) and the CDK's
#: ``CrossRegionInferenceProfileRegion`` (the APAC source regions, Tokyo and Sydney among them, and me-central-1).
GEOGRAPHY_BY_REGION: tuple[tuple[str, tuple[str | None, ...]], ...] = (
    ("us-gov-", ("us-gov",)),
    ("us-", ("us",)),
    ("eu-", ("eu",)),
    ("ap-northeast-1", ("jp", "apac")),
    ("ap-northeast-3", ("jp", "apac")),
    ("ap-southeast-2", ("au", "apac")),
    ("ap-southeast-4", ("au", "apac")),
    ("ap-", ("apac",)),
    ("me-central-1", (None, "apac")),
)
#: Geography prefixes of system-defined profiles (``global`` is served from every commercial region).
PROFILE_PREFIXES = ("us-gov", "us", "eu", "apac", "jp", "au", "ca", "global")
_PREFIX_RE = re.compile(r"^(?P<prefix>" + "|".join(re.escape(p) for p in PROFILE_PREFIXES) + r")\.(?P<base>.+)$")


def bedrock_region(env: dict[str, str] | None = None, home: Path | None = None) -> str:
    """The region boto3 would call, from env vars and the shared config file alone."""
    env = dict(os.environ if env is None else env)
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if env.get(name):
            return env[name]
    from ..config import aws_profile

    path = Path(env.get("AWS_CONFIG_FILE") or (home or Path.home()) / ".aws" / "config").expanduser()
    profile = aws_profile(env)
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (OSError, configparser.Error):
        return DEFAULT_REGION
    for section in (f"profile {profile}", profile if profile == "default" else ""):
        if section and parser.has_option(section, "region"):
            return parser.get(section, "region").strip() or DEFAULT_REGION
    return DEFAULT_REGION


def geographies(region: str) -> tuple[str | None, ...]:
    """The geography prefixes whose profiles ``region`` can call, the default ids' first (None: ``global.``)."""
    return next((found for start, found in GEOGRAPHY_BY_REGION if region.startswith(start)), (None,))


def profile_for_region(model_id: str, region: str, *, role: str, default: bool) -> str:
    """``model_id`` as ``region`` can call it.

    Args:
        model_id: A Bedrock model or inference-profile id.
        region: The source region.
        role: The agent, for the error.
        default: The id is the product's default (remapped), not the user's choice (only checked).

    Raises:
        ConfigError: The id names a geography the region cannot call.
    """
    match = _PREFIX_RE.match(model_id)
    if match is None or match.group("prefix") == "global" and not region.startswith("us-gov-"):
        return model_id  # a base model id or a global profile: the region decides nothing here
    prefix, base = match.group("prefix"), match.group("base")
    served = geographies(region)
    home = served[0]  # the geography the default ids take here
    if prefix in served:
        return model_id
    fitting = f"{home}.{base}" if home else f"global.{base}"
    if default and home != "us-gov":  # GovCloud serves no default profile: the user picks a model there
        logger.debug("the %s agent's default %s is called from %s as %s", role, model_id, region, fitting)
        return fitting
    raise ConfigError(
        f"The {role} agent's model id {model_id!r} is a {prefix}. inference profile, which the region {region} "
        "cannot call (a cross-region profile is served only from its own geography's regions).",
        f"set agents.{role}.model_id to {fitting!r} (or another profile of the {home or 'global'} geography) in "
        "insightloom.yaml, or set AWS_REGION to a region of the "
        f"{prefix} geography.",
    )


def with_region_profiles(settings: Settings, env: dict[str, str] | None = None) -> Settings:
    """``settings`` with every Bedrock agent's model id callable from the configured region.

    Raises:
        ConfigError: An id the user chose names a geography the region cannot call (exit 2 at start).
    """
    from ..config import default_model_id

    region = bedrock_region(env)
    agents = {}
    for role, spec in settings.agents.items():
        if settings.spec(role).provider != "bedrock":
            agents[role] = spec
            continue
        fitted = profile_for_region(spec.model_id, region, role=role, default=spec.model_id == default_model_id(role))
        agents[role] = dataclasses.replace(spec, model_id=fitted)
    return dataclasses.replace(settings, agents=agents)
