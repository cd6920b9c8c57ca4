from pathlib import Path

import pytest

from insightloom.config import (
    ROLES,
    aws_credentials_present,
    load_settings,
    resolve_auto_provider,
)
from insightloom.errors import ConfigError


def test_defaults_cover_every_role_with_cheap_models_for_coordinator_and_tracker(tmp_path: Path) -> None:
    settings = load_settings(env={}, cwd=tmp_path)
    assert set(settings.agents) == set(ROLES)
    assert "haiku" in settings.spec("tracker").model_id
    assert "sonnet" in settings.spec("planner").model_id
    assert settings.spec("coder").max_tokens > settings.spec("tracker").max_tokens


def test_yaml_env_and_flag_precedence(tmp_path: Path) -> None:
    (tmp_path / "insightloom.yaml").write_text(
        "provider: bedrock\nmax_revisions: 5\nagents:\n  coder:\n    model_id: my-coder\n    max_tokens: 999\n"
    )
    settings = load_settings(env={}, cwd=tmp_path)
    assert settings.spec("coder").model_id == "my-coder"
    assert settings.spec("coder").max_tokens == 999
    assert settings.spec("coder").provider == "bedrock"
    assert settings.max_revisions == 5
    env = load_settings(
        env={"INSIGHTLOOM_PROVIDER": "offline", "INSIGHTLOOM_ARTIFACTS": str(tmp_path / "a")}, cwd=tmp_path
    )
    assert env.spec("planner").provider == "offline"
    assert env.spec("coder").model_id == "my-coder"  # per-agent ids still apply
    assert env.artifacts == tmp_path / "a"
    flag = env.with_provider("anthropic")
    assert all(flag.spec(role).provider == "anthropic" for role in ROLES)


@pytest.mark.parametrize(
    "text, needle",
    [
        ("provider: nope\n", "Unknown provider"),
        ("agents:\n  painter: {}\n", "Unknown agent role"),
        ("agents:\n  coder:\n    colour: red\n", "colour"),
        ("agents:\n  coder:\n    max_tokens: -1\n", "max_tokens"),
        ("colour: red\n", "colour"),
        ("[unclosed\n", "not valid YAML"),
    ],
)
def test_bad_config_names_the_problem(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings(path, env={}, cwd=tmp_path)
    assert needle in str(info.value)
    assert info.value.exit_code == 2


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.yaml", env={}, cwd=tmp_path)


def test_auto_reads_only_env_and_shared_files(tmp_path: Path) -> None:
    assert not aws_credentials_present({}, home=tmp_path)
    assert aws_credentials_present({"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}, home=tmp_path)
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\naws_access_key_id = x\naws_secret_access_key = y\n")
    assert aws_credentials_present({}, home=tmp_path)


def test_auto_falls_back_to_offline_with_a_banner(tmp_path: Path) -> None:
    settings = load_settings(env={}, cwd=tmp_path)
    resolved, banner = resolve_auto_provider(
        settings, env={"AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "x"), "AWS_CONFIG_FILE": str(tmp_path / "y")}
    )
    assert all(resolved.spec(role).provider == "offline" for role in ROLES)
    assert banner and "--provider bedrock" in banner
    resolved, banner = resolve_auto_provider(settings, env={"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"})
    assert resolved.spec("coder").provider == "bedrock" and banner is None
