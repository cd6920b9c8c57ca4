"""A first real job's defaults: inference profiles the region can call, and only the parameters a family takes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.config import AgentModelSpec, Settings, resolve_auto_provider
from insightloom.errors import ConfigError
from insightloom.models import make_model
from insightloom.models.params import inference_params
from insightloom.models.regions import bedrock_region, profile_for_region

SONNET = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def _bedrock(region: str) -> Settings:
    settings, _ = resolve_auto_provider(Settings().with_provider("bedrock"), env={"AWS_REGION": region})
    return settings


@pytest.mark.parametrize(
    "region, prefix",
    [("us-east-1", "us"), ("eu-west-1", "eu"), ("eu-central-1", "eu"), ("ap-northeast-2", "apac"),
     ("ap-northeast-1", "jp"), ("ap-northeast-3", "jp"), ("ap-southeast-2", "au"),
     ("ap-southeast-4", "au"), ("me-central-1", "global"), ("sa-east-1", "global"), ("ca-central-1", "global")],
)  # fmt: skip
def test_the_default_ids_take_the_regions_geography(region: str, prefix: str) -> None:
    settings = _bedrock(region)
    assert settings.spec("coder").model_id == SONNET.replace("us.", f"{prefix}.", 1)
    assert settings.spec("tracker").model_id == HAIKU.replace("us.", f"{prefix}.", 1)


def test_a_chosen_profile_the_region_cannot_call_is_refused_with_the_id_that_would_work() -> None:
    settings = Settings().with_provider("bedrock")
    opus = "us.anthropic.claude-opus-4-1-20250805-v1:0"
    settings.agents["planner"] = AgentModelSpec(provider="bedrock", model_id=opus)
    with pytest.raises(ConfigError) as info:
        resolve_auto_provider(settings, env={"AWS_REGION": "eu-west-1"})
    assert "eu-west-1" in str(info.value) and "eu.anthropic.claude-opus-4-1-20250805-v1:0" in info.value.fix
    with pytest.raises(ConfigError, match="GovCloud|us-gov"):
        profile_for_region(SONNET, "us-gov-west-1", role="coder", default=True)
    assert profile_for_region("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "eu-west-1", role="coder",
                              default=False).startswith("global.")  # fmt: skip


@pytest.mark.parametrize("region", ["ap-northeast-1", "ap-southeast-2", "ap-southeast-4", "me-central-1"])
def test_a_chosen_apac_profile_passes_from_a_region_with_its_own_geography_too(region: str) -> None:
    apac = SONNET.replace("us.", "apac.", 1)
    assert profile_for_region(apac, region, role="coder", default=False) == apac


def test_a_chosen_japan_profile_is_refused_from_seoul_with_the_apac_id() -> None:
    with pytest.raises(ConfigError) as info:
        profile_for_region(SONNET.replace("us.", "jp.", 1), "ap-northeast-2", role="planner", default=False)
    assert SONNET.replace("us.", "apac.", 1) in info.value.fix


def test_offline_agents_are_left_alone() -> None:
    settings, _ = resolve_auto_provider(Settings().with_provider("offline"), env={"AWS_REGION": "eu-west-1"})
    assert settings.spec("coder").model_id == SONNET


def test_the_region_comes_from_the_env_then_the_shared_config_file(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("[default]\nregion = ap-northeast-2\n[profile work]\nregion = eu-west-2\n")
    assert bedrock_region({"AWS_CONFIG_FILE": str(config)}) == "ap-northeast-2"
    assert bedrock_region({"AWS_CONFIG_FILE": str(config), "AWS_PROFILE": "work"}) == "eu-west-2"
    assert bedrock_region({"AWS_CONFIG_FILE": str(config), "AWS_REGION": "us-east-1"}) == "us-east-1"
    assert bedrock_region({"AWS_CONFIG_FILE": str(tmp_path / "none")}) == "us-west-2"


def test_a_run_from_eu_west_1_with_a_us_profile_it_chose_exits_2_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "insightloom.yaml").write_text(f"agents:\n  coder:\n    model_id: '{SONNET.replace('4-5', '4', 1)}'\n")
    (tmp_path / "sales.csv").write_text("a,b\n1,2\n3,4\n")
    monkeypatch.chdir(tmp_path)
    env = {"AWS_REGION": "eu-west-1", "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": str(tmp_path / "c"),
           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "k")}  # fmt: skip
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, ["run", "--provider", "bedrock", "sales.csv", "-r", "analyze this", "--yes"])
    assert result.exit_code == 2, result.output
    assert "eu-west-1" in result.stderr and "eu.anthropic.claude-sonnet-4-20250929-v1:0" in result.stderr


@pytest.mark.parametrize(
    "model_id, sent",
    [(SONNET, True), ("anthropic.claude-3-5-sonnet-20241022-v2:0", True), ("us.amazon.nova-pro-v1:0", True),
     ("us.anthropic.claude-opus-4-6-v1", False), ("anthropic.claude-sonnet-5-20260101-v1:0", False),
     ("us.cohere.command-r-v1:0", False), ("claude-sonnet-5", False)],
)  # fmt: skip
def test_temperature_goes_only_to_families_the_table_knows_take_it(model_id: str, sent: bool) -> None:
    params = inference_params(AgentModelSpec(provider="bedrock", model_id=model_id, temperature=0.0))
    assert ("temperature" in params) is sent


def test_extended_thinking_for_the_planner_where_the_family_supports_it() -> None:
    spec = AgentModelSpec(provider="bedrock", model_id=SONNET, max_tokens=8000, temperature=0.0, thinking_tokens=2048)
    params = inference_params(spec)
    assert params["additional_request_fields"] == {"thinking": {"type": "enabled", "budget_tokens": 2048}}
    assert "temperature" not in params  # Claude refuses a temperature beside thinking
    settings = Settings().with_provider("bedrock")
    settings.agents["planner"] = spec
    request = make_model(settings.spec("planner"), "planner", settings).format_request(
        [{"role": "user", "content": [{"text": "plan"}]}], None, [{"text": "system"}]
    )
    assert request["additionalModelRequestFields"]["thinking"]["budget_tokens"] == 2048
    haiku3 = AgentModelSpec(provider="bedrock", model_id="anthropic.claude-3-haiku-20240307-v1:0", thinking_tokens=2048)
    assert "additional_request_fields" not in inference_params(haiku3)


def test_a_thinking_budget_is_checked_against_the_output_room(tmp_path: Path) -> None:
    from insightloom.config import load_settings

    (tmp_path / "insightloom.yaml").write_text("agents:\n  planner:\n    thinking_tokens: 9000\n")
    with pytest.raises(ConfigError, match="max_tokens"):
        load_settings(env={}, cwd=tmp_path)
