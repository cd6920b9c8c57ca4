"""make_model: every provider builds or fails with the extra to install; hosted ones count real tokens."""

from __future__ import annotations

import asyncio

import pytest

from insightloom.config import AgentModelSpec, Settings
from insightloom.context.tokens import count_tokens
from insightloom.errors import ConfigError
from insightloom.models import make_model
from insightloom.models._counting import counting_subclass, make_counting
from insightloom.models.offline import OfflineModel


@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama", "litellm"])
def test_optional_provider_without_its_sdk_names_the_extra(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def no_sdk(name: str, *args, **kwargs):
        if name == f"strands.models.{provider}":
            raise ImportError("missing", name=provider)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", no_sdk)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with pytest.raises(ConfigError) as info:
        make_model(AgentModelSpec(provider=provider, model_id="m"), "coder", Settings())
    assert f"insightloom[{provider}]" in str(info.value)


def test_unresolved_auto_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not resolved"):
        make_model(AgentModelSpec(provider="auto"), "coder", Settings())


def test_offline_and_bedrock_models_build_without_network() -> None:
    offline = make_model(AgentModelSpec(provider="offline", max_tokens=321), "tracker", Settings())
    assert isinstance(offline, OfflineModel) and offline.get_config()["max_tokens"] == 321
    bedrock = make_model(
        AgentModelSpec(
            provider="bedrock", model_id="us.anthropic.claude-x", max_tokens=99, params={"temperature": 0.2}
        ),
        "coder",
        Settings(),
    )
    config = bedrock.get_config()
    assert config["model_id"] == "us.anthropic.claude-x" and config["max_tokens"] == 99
    assert config["temperature"] == 0.2 and "stop_sequences" not in config
    assert bedrock.client.meta.config.read_timeout == Settings().model_timeout_s


class _FakeProvider:
    def __init__(self, *, model_id: str) -> None:
        self.config = {"model_id": model_id}

    def get_config(self) -> dict:
        return self.config

    async def count_tokens(self, *args, **kwargs) -> int:  # what Strands does: chars / 4
        return 1


def test_counting_subclass_uses_the_tokenizer_and_claude_margin() -> None:
    messages = [{"role": "user", "content": [{"text": "안녕하세요, 매출 데이터를 분석해 주세요. " * 20}]}]
    plain = make_counting(_FakeProvider, token_margin=0.2, model_id="gpt-4o")
    claude = make_counting(_FakeProvider, token_margin=0.2, model_id="anthropic.claude-sonnet")
    counted = asyncio.run(plain.count_tokens(messages))
    assert counted >= count_tokens(messages[0]["content"][0]["text"])
    assert asyncio.run(claude.count_tokens(messages)) > counted
    assert plain.context_window_limit == 128_000
    assert counting_subclass(_FakeProvider) is counting_subclass(_FakeProvider)


def test_offline_model_rejects_a_request_over_its_context_window_before_billing() -> None:
    from strands.types.exceptions import ContextWindowOverflowException

    model = OfflineModel(role="tracker", max_tokens=100)
    model.update_config(context_window_limit=50)
    messages = [{"role": "user", "content": [{"text": "word " * 200}]}]

    with pytest.raises(ContextWindowOverflowException, match="50-token window"):
        asyncio.run(_stream_all(model, messages))
    small = [{"role": "user", "content": [{"text": "hello"}]}]
    events = asyncio.run(_stream_all(model, small))
    assert any("metadata" in event for event in events)


async def _stream_all(model: OfflineModel, messages: list) -> list:
    return [event async for event in model.stream(messages)]
