"""Model settings a real model needs: output room, temperature 0 where formats are copied, ids per provider."""

from __future__ import annotations

import pytest

from insightloom.config import AgentModelSpec, Settings, load_settings
from insightloom.errors import ConfigError
from insightloom.models import make_model
from insightloom.models.model_ids import model_id_for
from insightloom.models.params import inference_params

MESSAGES = [{"role": "user", "content": [{"text": "Write the plan."}]}]


def bedrock_inference_config(role: str, settings: Settings) -> dict:
    """The inferenceConfig of the Converse request Bedrock would receive for one agent."""
    model = make_model(settings.spec(role), role, settings)
    return model.format_request(MESSAGES, None, [{"text": "system"}])["inferenceConfig"]


def test_output_room_fits_long_reports_scripts_and_plans() -> None:
    settings = Settings()
    budgets = {role: settings.spec(role).max_tokens for role in ("reporter", "coder", "validator", "planner")}
    assert budgets == {"reporter": 32_000, "coder": 32_000, "validator": 16_000, "planner": 8_000}


def test_format_copying_roles_are_sent_temperature_zero_and_the_others_the_model_default() -> None:
    settings = Settings().with_provider("bedrock")
    for role in ("planner", "tracker", "auditor"):
        assert bedrock_inference_config(role, settings)["temperature"] == 0.0, role
    for role in ("coder", "reporter", "supervisor"):
        assert "temperature" not in bedrock_inference_config(role, settings), role
    assert bedrock_inference_config("reporter", settings)["maxTokens"] == 32_000


def test_temperature_is_configurable_per_agent(tmp_path) -> None:
    (tmp_path / "insightloom.yaml").write_text(
        "agents:\n  coder:\n    temperature: 0.3\n  planner:\n    temperature: null\n"
    )
    settings = load_settings(env={}, cwd=tmp_path).with_provider("bedrock")
    assert bedrock_inference_config("coder", settings)["temperature"] == 0.3
    assert "temperature" not in bedrock_inference_config("planner", settings)
    (tmp_path / "insightloom.yaml").write_text("agents:\n  coder:\n    temperature: warm\n")
    with pytest.raises(ConfigError, match=r"agents\.coder\.temperature"):
        load_settings(env={}, cwd=tmp_path)


@pytest.mark.parametrize(
    "model_id, params",
    [
        ("gpt-5-mini", {}),
        ("openai/o3", {}),
        ("o4-mini", {}),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", {"top_p": 0.9}),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", {"additional_request_fields": {"thinking": {"type": "x"}}}),
    ],
)
def test_temperature_is_not_sent_where_the_model_family_rejects_it(model_id: str, params: dict) -> None:
    sent = inference_params(AgentModelSpec(model_id=model_id, params=params, temperature=0.0))
    assert "temperature" not in sent and sent == params


def test_an_explicit_param_wins_over_the_role_default() -> None:
    sent = inference_params(AgentModelSpec(model_id="llama3.1", params={"temperature": 0.7}, temperature=0.0))
    assert sent == {"temperature": 0.7}


def test_switching_provider_maps_the_bedrock_ids_or_refuses_with_the_fix() -> None:
    anthropic = Settings().with_provider("anthropic")
    assert anthropic.spec("coder").model_id == "claude-sonnet-4-5-20250929"
    assert anthropic.spec("tracker").model_id == "claude-haiku-4-5-20251001"
    litellm = Settings().with_provider("litellm")
    assert litellm.spec("coder").model_id == "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    with pytest.raises(ConfigError) as info:
        Settings().with_provider("openai")
    assert "Bedrock id" in info.value.message and "agents.coordinator.model_id" in info.value.fix
    own = Settings(agents={role: AgentModelSpec(model_id="qwen2.5:7b") for role in Settings().agents})
    assert own.with_provider("ollama").spec("coder").model_id == "qwen2.5:7b"  # the user's own ids pass


def test_a_config_naming_a_provider_gets_mapped_ids_when_models_are_built() -> None:
    spec = AgentModelSpec(provider="openai", model_id="us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    with pytest.raises(ConfigError, match="cannot serve"):
        make_model(spec, "coder", Settings())
    assert model_id_for("bedrock", spec.model_id, "coder") == spec.model_id


def test_every_providers_name_for_the_default_models_is_priced() -> None:
    from insightloom.telemetry.pricing import PriceTable

    for provider in ("bedrock", "anthropic", "litellm"):
        settings = Settings().with_provider(provider)
        prices = PriceTable(settings.pricing)
        coder, tracker = prices.price(settings.spec("coder").model_id), prices.price(settings.spec("tracker").model_id)
        assert coder is not None and coder.output == 15.0, provider  # Sonnet 4.5
        assert tracker is not None and tracker.output == 5.0, provider  # Haiku 4.5
