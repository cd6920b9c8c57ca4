"""A strict, local Bedrock Runtime endpoint for tests: Converse, ConverseStream and CountTokens on loopback.

It checks every request against Bedrock's documented rules (``RULES``), refuses a violation as Bedrock does, bills
the prompt cache as Bedrock does (``CacheLedger``), and answers from a brain. See docs/testing.md.

    from insightloom.testing.bedrock_endpoint import BedrockEndpoint, ScriptedBrain, BrainReply

    with BedrockEndpoint(ScriptedBrain([BrainReply.text("hello")])) as endpoint, endpoint.environment(os.environ):
        ...  # boto3 / Strands BedrockModel calls land here
    assert not endpoint.violations
"""

from .brains import (
    Brain,
    BrainReply,
    ConverseCall,
    ModelBrain,
    NoBrainError,
    RoleRouter,
    ScriptedBrain,
    offline_router,
)
from .caching import CacheLedger, CacheUsage
from .family_rules import FAMILY_RULES, FamilyRule, family_rule
from .model_access import access_violation
from .rules import RULES, Rule, Violation, check_request
from .server import BedrockEndpoint, Exchange

__all__ = [
    "FAMILY_RULES",
    "RULES",
    "BedrockEndpoint",
    "Brain",
    "BrainReply",
    "CacheLedger",
    "CacheUsage",
    "ConverseCall",
    "Exchange",
    "FamilyRule",
    "ModelBrain",
    "NoBrainError",
    "Rule",
    "RoleRouter",
    "ScriptedBrain",
    "Violation",
    "access_violation",
    "check_request",
    "family_rule",
    "offline_router",
]
