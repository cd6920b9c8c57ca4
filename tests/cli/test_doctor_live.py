"""``insightloom doctor --live`` against the strict Bedrock endpoint: each configured model's status and round trip,
the cause and the fix of a failure (exit 2), the cache test, and the region's inference profiles."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.config import load_settings
from insightloom.models.live_check import bedrock_models
from insightloom.testing.bedrock_endpoint import BedrockEndpoint, BrainReply, ScriptedBrain


def _endpoint(region: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[BedrockEndpoint]:
    with BedrockEndpoint(ScriptedBrain([BrainReply.text("OK")] * 20), region=region) as server:
        for key in ("AWS_PROFILE", "INSIGHTLOOM_PROVIDER"):
            monkeypatch.delenv(key, raising=False)
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-creds"))
        monkeypatch.chdir(tmp_path)
        yield server


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[BedrockEndpoint]:
    yield from _endpoint("us-west-2", monkeypatch, tmp_path)


def doctor(*args: str):
    return CliRunner().invoke(app, ["doctor", "--live", "--provider", "bedrock", *args])


def test_each_configured_model_gets_one_call_and_its_status(endpoint: BedrockEndpoint) -> None:
    result = doctor()
    assert result.exit_code == 0, result.output
    models = bedrock_models(load_settings(None).with_provider("bedrock"))
    assert len(models) >= 2  # the defaults: a Sonnet and a Haiku profile
    lines = [line for line in result.stdout.splitlines() if line.startswith("live: ")]
    assert len(lines) == len(models)
    for line, model_id in zip(lines, models, strict=True):
        assert line.startswith(f"live: {model_id} (") and " in us-west-2: ok, " in line and line.endswith(" ms")
    assert [e.model_id for e in endpoint.exchanges] == list(models)
    assert all(e.request["inferenceConfig"]["maxTokens"] <= 5 for e in endpoint.exchanges)
    assert not endpoint.violations


def test_access_denied_exits_2_with_the_fix(endpoint: BedrockEndpoint) -> None:
    endpoint.refuse("AccessDeniedException")
    result = doctor()
    assert result.exit_code == 2, result.output
    assert "access denied" in result.stdout
    assert "Model access" in result.stderr and "AccessDeniedException" in result.stderr


def test_an_id_the_region_cannot_serve_is_named_with_the_fix(endpoint: BedrockEndpoint, tmp_path: Path) -> None:
    (tmp_path / "insightloom.yaml").write_text(
        "agents:\n  coder:\n    provider: bedrock\n    model_id: anthropic.claude-sonnet-4-5-20250929-v1:0\n",
        encoding="utf-8",
    )
    result = doctor()
    assert result.exit_code == 2, result.output
    assert "no on-demand access" in result.stdout
    assert "inference profile" in result.stderr and "[model.on_demand]" in result.stderr


def test_the_cache_test_says_its_cost_first_and_sees_the_read(endpoint: BedrockEndpoint) -> None:
    result = doctor("--cache")
    assert result.exit_code == 0, result.output
    assert "The cache test sends about" in result.stderr
    oks = [line for line in result.stdout.splitlines() if line.startswith("live: ")]
    assert oks and all("cache works: wrote " in line for line in oks), oks
    assert endpoint.stats()["cache_read"] > 0


def test_no_credentials_calls_nothing_and_says_how(endpoint: BedrockEndpoint, monkeypatch) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(key)
    result = doctor()
    assert result.exit_code == 2
    assert "no AWS credentials found" in result.stdout and "aws configure" in result.stderr
    assert endpoint.exchanges == []


def test_from_eu_west_1_the_default_ids_take_eu_profiles(monkeypatch, tmp_path: Path) -> None:
    for endpoint in _endpoint("eu-west-1", monkeypatch, tmp_path):
        result = doctor()
        assert result.exit_code == 0, result.output
        called = {e.model_id for e in endpoint.exchanges}
        assert called and all(model_id.startswith("eu.") for model_id in called), called
        assert not endpoint.violations
