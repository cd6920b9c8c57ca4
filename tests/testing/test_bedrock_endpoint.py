"""The strict Bedrock endpoint, through the real boto3 client: every rule refuses its violation with Bedrock's
``ValidationException`` shape, a valid request is answered (Converse and ConverseStream), faults are injected on
demand, and the prompt cache is billed as Bedrock bills it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ReadTimeoutError
from botocore.retries import adaptive, standard

from insightloom.testing.bedrock_endpoint import (
    RULES,
    BedrockEndpoint,
    BrainReply,
    ScriptedBrain,
    check_request,
    family_rule,
)

SONNET = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
HAIKU_3 = "anthropic.claude-3-haiku-20240307-v1:0"
USER = {"role": "user", "content": [{"text": "hello"}]}
TOOL = {"toolSpec": {"name": "lookup", "description": "d", "inputSchema": {"json": {"type": "object"}}}}
USE = {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {}}}
RESULT = {"toolResult": {"toolUseId": "t1", "content": [{"text": "ok"}]}}
POINT = {"cachePoint": {"type": "default"}}
REASONING = {"reasoningContent": {"reasoningText": {"text": "thinking", "signature": "sig"}}}


def _request(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"messages": messages, **extra}


#: One request per rule that breaks that rule (and the model it goes to).
VIOLATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "roles.first_user": (SONNET, _request([{"role": "assistant", "content": [{"text": "hi"}]}])),
    "roles.alternate": (SONNET, _request([USER, USER])),
    "content.empty": (SONNET, _request([{"role": "user", "content": []}])),
    "content.blank_text": (SONNET, _request([{"role": "user", "content": [{"text": "  "}]}])),
    "tools.result_follows_use": (
        SONNET,
        _request([USER, {"role": "assistant", "content": [USE]}, USER], toolConfig={"tools": [TOOL]}),
    ),
    "tools.orphan_result": (SONNET, _request([{"role": "user", "content": [RESULT]}], toolConfig={"tools": [TOOL]})),
    "tools.config_missing": (
        SONNET,
        _request([USER, {"role": "assistant", "content": [USE]}, {"role": "user", "content": [RESULT]}]),
    ),
    "tools.use_id": (
        SONNET,
        _request(
            [
                USER,
                {"role": "assistant", "content": [{"toolUse": {**USE["toolUse"], "toolUseId": "id with space"}}]},
                {"role": "user", "content": [{"toolResult": {**RESULT["toolResult"], "toolUseId": "id with space"}}]},
            ],
            toolConfig={"tools": [TOOL]},
        ),  # fmt: skip
    ),
    "tools.config_empty": (SONNET, _request([USER], toolConfig={"tools": []})),
    "tools.name": (
        SONNET,
        _request([USER], toolConfig={"tools": [{"toolSpec": {**TOOL["toolSpec"], "name": "look up!"}}]}),
    ),
    "tools.unique": (SONNET, _request([USER], toolConfig={"tools": [TOOL, TOOL]})),
    "tools.schema_object": (
        SONNET,
        _request(
            [USER],
            toolConfig={"tools": [{"toolSpec": {**TOOL["toolSpec"], "inputSchema": {"json": {"type": "array"}}}}]},
        ),
    ),
    "cache.max_points": (
        SONNET,
        _request(
            [{"role": "user", "content": [{"text": "a"}, POINT, {"text": "b"}, POINT, {"text": "c"}, POINT]}],
            system=[{"text": "s"}, POINT, {"text": "t"}, POINT],
        ),  # fmt: skip
    ),
    "cache.after_reasoning": (
        SONNET,
        _request([USER, {"role": "assistant", "content": [REASONING, POINT, {"text": "x"}]}, USER]),
    ),
    "cache.unsupported_model": (HAIKU_3, _request([{"role": "user", "content": [{"text": "a"}, POINT]}])),
    "params.temperature": (
        "global.anthropic.claude-opus-4-7-v1:0",
        _request([USER], inferenceConfig={"maxTokens": 10, "temperature": 0.0}),
    ),
    "params.temperature_with_top_p": (
        SONNET,
        _request([USER], inferenceConfig={"maxTokens": 10, "temperature": 0.0, "topP": 0.9}),
    ),
    "params.thinking_temperature": (
        SONNET,
        _request(
            [USER],
            inferenceConfig={"maxTokens": 3000, "temperature": 0.2},
            additionalModelRequestFields={"thinking": {"type": "enabled", "budget_tokens": 1024}},
        ),
    ),
    "reasoning.signature": (
        SONNET,
        _request(
            [
                USER,
                {
                    "role": "assistant",
                    "content": [{"reasoningContent": {"reasoningText": {"text": "t"}}}, {"text": "x"}],
                },
                USER,
            ]
        ),  # fmt: skip
    ),
    "model.region": ("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", _request([USER])),
    "model.on_demand": ("anthropic.claude-sonnet-4-5-20250929-v1:0", _request([USER])),
}


@pytest.fixture
def endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BedrockEndpoint]:
    brain = ScriptedBrain([BrainReply.text("answer")] * 50)
    with BedrockEndpoint(brain) as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
        # botocore's waits are real sleeps: zero them, keep the counting.
        monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", lambda self, context: 0)
        monkeypatch.setattr(adaptive.ClientRateLimiter, "on_sending_request", lambda self, request, **kw: None)
        yield server


def _client(**config: Any) -> Any:
    # Client-side validation off: the point is what the service refuses, not what botocore catches first.
    options = {"parameter_validation": False, "retries": {"total_max_attempts": 1}, **config}
    return boto3.client("bedrock-runtime", config=Config(**options))


def test_every_rule_has_a_violation_here() -> None:
    assert set(VIOLATIONS) == {rule.name for rule in RULES} | {"model.region", "model.on_demand"}


@pytest.mark.parametrize("rule", sorted(VIOLATIONS))
def test_the_endpoint_refuses_each_rules_violation_as_bedrock_does(rule: str, endpoint: BedrockEndpoint) -> None:
    model_id, request = VIOLATIONS[rule]
    with pytest.raises(ClientError) as caught:
        _client().converse(modelId=model_id, **request)
    error = caught.value.response
    assert error["Error"]["Code"] == "ValidationException"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert f"[{rule}]" in error["Error"]["Message"], error["Error"]["Message"]
    assert rule in [v.rule for v in endpoint.violations]
    assert endpoint.stats()["rejected"] == 1 and endpoint.stats()["completed"] == 0


def test_each_violation_breaks_only_its_own_rule() -> None:
    for rule, (model_id, request) in VIOLATIONS.items():
        if rule.startswith("model."):
            continue
        broken = {v.rule for v in check_request(model_id, request)}
        assert rule in broken, rule
        assert broken <= {rule, "tools.result_follows_use", "tools.orphan_result"}, (rule, broken)


def test_a_valid_request_is_answered_on_both_operations(endpoint: BedrockEndpoint) -> None:
    reply = _client().converse(modelId=SONNET, messages=[USER], inferenceConfig={"maxTokens": 20})
    assert reply["output"]["message"]["content"] == [{"text": "answer"}]
    assert reply["usage"]["outputTokens"] == 1 and reply["usage"]["inputTokens"] > 0
    endpoint.brain = ScriptedBrain([BrainReply([{"text": "calling"}, USE], "tool_use")])
    stream = _client().converse_stream(modelId=SONNET, messages=[USER], toolConfig={"tools": [TOOL]})["stream"]
    events = list(stream)
    assert [next(iter(e)) for e in events] == [
        "messageStart", "contentBlockDelta", "contentBlockStop", "contentBlockStart", "contentBlockDelta",
        "contentBlockStop", "messageStop", "metadata",
    ]  # fmt: skip
    assert events[3]["contentBlockStart"]["start"]["toolUse"]["name"] == "lookup"
    assert events[6]["messageStop"]["stopReason"] == "tool_use"
    assert endpoint.stats()["completed"] == 2 and not endpoint.violations


def test_a_throttling_burst_is_retried_by_botocore_and_recovers(endpoint: BedrockEndpoint) -> None:
    endpoint.throttle(2)
    client = _client(retries={"total_max_attempts": 5, "mode": "adaptive"})
    reply = client.converse(modelId=SONNET, messages=[USER])
    assert reply["output"]["message"]["content"][0]["text"] == "answer"
    stats = endpoint.stats()
    assert (stats["throttled"], stats["completed"], stats["requests"]) == (2, 1, 3)
    endpoint.throttle(5)
    with pytest.raises(ClientError) as caught:
        _client().converse(modelId=SONNET, messages=[USER])
    assert caught.value.response["Error"]["Code"] == "ThrottlingException"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429


def test_a_stalled_call_times_out_on_the_client(endpoint: BedrockEndpoint) -> None:
    endpoint.stall(1, seconds=1.5)
    with pytest.raises(ReadTimeoutError):
        _client(read_timeout=0.3).converse(modelId=SONNET, messages=[USER])
    assert endpoint.stats()["stalled"] == 1


def test_a_refusal_is_answered_with_its_code(endpoint: BedrockEndpoint) -> None:
    endpoint.refuse("AccessDeniedException")
    for _ in range(2):
        with pytest.raises(ClientError) as caught:
            _client().converse(modelId=SONNET, messages=[USER])
        assert caught.value.response["Error"]["Code"] == "AccessDeniedException"
    endpoint.clear_faults()
    assert _client().converse(modelId=SONNET, messages=[USER])["stopReason"] == "end_turn"


def _long_prefix(tokens: int) -> str:
    return " ".join(f"word{i}" for i in range(tokens))


def test_the_cache_reads_a_prefix_only_at_or_above_the_models_minimum(endpoint: BedrockEndpoint) -> None:
    client = _client()
    for model_id, size, expect_read in ((SONNET, 300, False), (SONNET, 1600, True)):
        system = [{"text": _long_prefix(size)}, POINT]
        usages = [client.converse(modelId=model_id, system=system, messages=[USER])["usage"] for _ in range(2)]
        if expect_read:
            assert usages[0]["cacheWriteInputTokens"] >= 1024 and usages[0]["cacheReadInputTokens"] == 0
            assert usages[1]["cacheReadInputTokens"] == usages[0]["cacheWriteInputTokens"]
            assert usages[1]["inputTokens"] < 50
        else:  # below the 1,024-token minimum: the point is ignored, everything is plain input
            assert all(u["cacheReadInputTokens"] == 0 and u["cacheWriteInputTokens"] == 0 for u in usages)
            assert usages[1]["inputTokens"] == usages[0]["inputTokens"] > 300


def test_a_reply_over_max_tokens_is_cut_with_the_models_stop_reason(endpoint: BedrockEndpoint) -> None:
    endpoint.brain = ScriptedBrain([BrainReply.text(_long_prefix(200))])
    reply = _client().converse(modelId=SONNET, messages=[USER], inferenceConfig={"maxTokens": 30})
    assert reply["stopReason"] == "max_tokens"
    assert reply["usage"]["outputTokens"] == 30


def test_family_rows_tell_opus_4_from_opus_4_7() -> None:
    assert family_rule("us.anthropic.claude-opus-4-20250514-v1:0").temperature
    assert not family_rule("global.anthropic.claude-opus-4-7-v1:0").temperature
    assert not family_rule("anthropic.claude-3-haiku-20240307-v1:0").prompt_cache
