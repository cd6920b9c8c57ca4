"""Where cache points sit in the real Bedrock ``converse_stream`` request, captured through botocore's Stubber, and
exact token counts through Bedrock ``CountTokens``.

The Stubber validates the request against botocore's own Bedrock model before it answers; it cannot return an event
stream, so it answers with an error and the request captured just before is what the test checks. The client has
fake static credentials: no credential chain runs and nothing leaves the process.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber
from strands import tool

from insightloom.agents import build_agent
from insightloom.config import Settings
from insightloom.context.tokens import count_request
from insightloom.jobs import JobFolder
from insightloom.models.bedrock import CountingBedrockModel, make_bedrock
from insightloom.runtime import JobRuntime

SHORT_STATIC = "# Role\nYou check plan items off. Rules that never change between calls."
STATIC = SHORT_STATIC + " A rule that never changes between calls." * 700  # over Haiku 4.5's 4,096-token minimum
DYNAMIC = "## Your plan section\n<plan_section>### 1. Coder: x\n- [ ] item</plan_section>"
PROMPT = f"{STATIC}\n<!-- dynamic -->\n{DYNAMIC}\n"


@tool
def update_plan(items: list[str]) -> str:
    """Mark plan items done.

    Args:
        items: The exact wording of each completed item.
    """
    return "ok"


def runtime(tmp_path: Path) -> JobRuntime:
    settings = Settings(provider="bedrock").with_provider("bedrock")
    settings.agents["coordinator"].cache = False
    return JobRuntime.create(JobFolder.create(tmp_path / "artifacts"), settings, "req", "en")


def capture_request(tmp_path: Path, role: str, prompt: str = PROMPT, rt: JobRuntime | None = None) -> dict[str, Any]:
    rt = rt or runtime(tmp_path)
    agent = build_agent(role, rt, prompt, [update_plan])
    model = agent.model
    assert isinstance(model, CountingBedrockModel)
    session = boto3.Session(aws_access_key_id="AKIDFAKE", aws_secret_access_key="fake", region_name="us-west-2")
    model.client = session.client("bedrock-runtime")
    captured: dict[str, Any] = {}
    model.client.meta.events.register(
        "before-parameter-build.bedrock-runtime.ConverseStream", lambda params, **_: captured.update(params)
    )
    with Stubber(model.client) as stubber:
        stubber.add_client_error("converse_stream", service_error_code="StubbedStop", http_status_code=400)
        with pytest.raises(Exception) as info:
            asyncio.run(agent.invoke_async("Tick the items the coder completed."))
        stubber.assert_no_pending_responses()
    error: BaseException | None = info.value
    while error is not None and not isinstance(error, ClientError):
        error = error.__cause__ or error.__context__
    assert isinstance(error, ClientError) and "StubbedStop" in str(error)  # the request passed validation
    return captured


def cache_points(request: dict[str, Any]) -> list[str]:
    where = [f"system[{i}]" for i, b in enumerate(request["system"]) if "cachePoint" in b]
    where += [f"tools[{i}]" for i, t in enumerate(request.get("toolConfig", {}).get("tools", [])) if "cachePoint" in t]
    for m, message in enumerate(request["messages"]):
        where += [f"messages[{m}][{i}]" for i, b in enumerate(message["content"]) if "cachePoint" in b]
    return where


def test_cached_agent_sends_static_prompt_a_cache_point_then_the_per_call_part(tmp_path: Path) -> None:
    request = capture_request(tmp_path, "tracker")
    assert request["system"] == [{"text": STATIC}, {"cachePoint": {"type": "default"}}, {"text": DYNAMIC + "\n"}]
    last = request["messages"][-1]
    assert last["role"] == "user" and last["content"][-1] == {"cachePoint": {"type": "default"}}
    assert cache_points(request) == ["system[1]", f"messages[{len(request['messages']) - 1}][1]"]
    # Only what the config names, no stop sequences; the Tracker copies formats, so temperature 0.
    assert request["inferenceConfig"] == {"maxTokens": 1024, "temperature": 0.0}


def test_a_system_cache_point_below_the_models_minimum_is_not_sent_and_the_usage_says_why(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    request = capture_request(tmp_path, "tracker", f"{SHORT_STATIC}\n<!-- dynamic -->\n{DYNAMIC}\n", rt)
    assert request["system"] == [{"text": f"{SHORT_STATIC}\n\n{DYNAMIC}\n"}]
    assert cache_points(request) == [f"messages[{len(request['messages']) - 1}][1]"]  # a longer prefix may cache
    note = rt.ledger.to_dict()["cache_notes"]["tracker"]
    assert "below the 4,096-token minimum of us.anthropic.claude-haiku-4-5" in note and "billed as input" in note


def test_uncached_agent_sends_one_system_text_and_no_cache_point(tmp_path: Path) -> None:
    request = capture_request(tmp_path, "coordinator")
    assert request["system"] == [{"text": f"{STATIC}\n\n{DYNAMIC}\n"}]
    assert cache_points(request) == []


def test_exact_counts_use_bedrock_count_tokens_and_fall_back_to_the_local_count(monkeypatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKE")  # fake static credentials: only the presence is probed
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake")
    settings = Settings(provider="bedrock", exact_token_count=True).with_provider("bedrock")
    model = make_bedrock(settings.spec("coder"), settings)
    assert model.config.get("use_native_token_count") is True
    session = boto3.Session(aws_access_key_id="AKIDFAKE", aws_secret_access_key="fake", region_name="us-west-2")
    model.client = session.client("bedrock-runtime")
    messages = [{"role": "user", "content": [{"text": "How did revenue change in December?"}]}]
    with Stubber(model.client) as stubber:
        stubber.add_response("count_tokens", {"inputTokens": 1234})
        assert asyncio.run(model.count_tokens(messages, system_prompt="rules")) == 1234
        stubber.add_client_error("count_tokens", service_error_code="AccessDeniedException", http_status_code=403)
        local = count_request(messages, None, "rules")
        assert asyncio.run(model.count_tokens(messages, system_prompt="rules")) == -(-local * 12 // 10)
        stubber.assert_no_pending_responses()
