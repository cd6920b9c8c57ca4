"""Provider safety: local modes may fall back to the offline model with a notice; deployment modes never do silently."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.config import (
    CREDENTIAL_ENV_VARS,
    ROLES,
    Settings,
    aws_credential_source,
    aws_credentials_present,
    deployment_settings,
    load_settings,
    resolve_auto_provider,
)
from insightloom.errors import BadInputError, ConfigError
from insightloom.service.service_settings import ServiceConfig, deployment_mode, prepare_serving

#: Every credential source boto3 reads from the environment; each test starts with none of them.
CREDENTIAL_VARS = (*CREDENTIAL_ENV_VARS, "INSIGHTLOOM_PROVIDER", "INSIGHTLOOM_API_TOKEN", "INSIGHTLOOM_TOKENS_FILE")
LOCAL_BANNER = (
    "No AWS credentials found: running with the deterministic offline model. "
    "To use Bedrock, configure AWS credentials or pass --provider bedrock."
)


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty HOME, no credential variable set and the shared files pointing into it (absent until written)."""
    folder = tmp_path / "home"
    (folder / ".aws").mkdir(parents=True)
    for name in CREDENTIAL_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(folder / ".aws" / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(folder / ".aws" / "config"))
    monkeypatch.setenv("BOTO_CONFIG", str(folder / ".boto"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return folder


def _unused_loopback_url() -> str:
    """A container credentials URL on loopback that nothing serves: deciding must not need to call it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/creds"


def test_container_variables_alone_select_bedrock_in_a_deployment(
    home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", _unused_loopback_url())
    caplog.set_level(logging.INFO, logger="insightloom.config")
    resolved, banner = resolve_auto_provider(Settings(), deployment="celery worker")
    assert banner is None
    assert all(resolved.spec(role).provider == "bedrock" for role in ROLES)
    started = deployment_settings(Settings(), "AgentCore entrypoint")
    assert started.provider == "bedrock"
    assert (
        "provider auto → bedrock (container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI) (AgentCore entrypoint)"
        in caplog.messages
    )


def test_no_credentials_in_a_deployment_refuses_with_exit_2_and_the_choices(home: Path) -> None:
    for mode in ("celery worker", "AgentCore entrypoint", "serve with a token", "serve on 0.0.0.0"):
        with pytest.raises(ConfigError) as refused:
            resolve_auto_provider(Settings(), deployment=mode)
        assert refused.value.exit_code == 2
        assert mode in refused.value.message and "auto" in refused.value.message
        fix = refused.value.fix
        for choice in ("--provider offline", "INSIGHTLOOM_PROVIDER=offline", "provider: offline"):
            assert choice in fix
        for source in ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_ACCESS_KEY_ID", "AWS_WEB_IDENTITY_TOKEN_FILE"):
            assert source in fix
    with pytest.raises(ConfigError, match="celery worker"):
        deployment_settings(Settings(), "celery worker")


def test_an_explicit_offline_choice_in_a_deployment_is_allowed_and_logged(
    home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="insightloom.config")
    env = {"INSIGHTLOOM_PROVIDER": "offline"}
    settings = load_settings(env=env, cwd=tmp_path)
    resolved, banner = resolve_auto_provider(settings, env, deployment="celery worker")
    assert banner is None and all(resolved.spec(role).provider == "offline" for role in ROLES)
    [line] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "INSIGHTLOOM_PROVIDER=offline" in line.getMessage() and "celery worker" in line.getMessage()

    caplog.clear()
    config = tmp_path / "insightloom.yaml"
    config.write_text("provider: offline\n", encoding="utf-8")
    from_yaml = load_settings(env={}, cwd=tmp_path)
    assert deployment_settings(from_yaml, "AgentCore entrypoint", env={}).spec("coder").provider == "offline"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("provider offline chosen explicitly" in m and str(config) in m for m in warnings)


def test_local_modes_keep_the_offline_fallback_and_its_banner(home: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="insightloom.config")
    resolved, banner = resolve_auto_provider(Settings())
    assert banner == LOCAL_BANNER
    assert all(resolved.spec(role).provider == "offline" for role in ROLES)
    assert not caplog.records  # the banner is the one notice: no extra log line in local modes
    resolved, banner = resolve_auto_provider(Settings(), {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"})
    assert banner is None and resolved.provider == "bedrock"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}, "env keys: AWS_ACCESS_KEY_ID"),
        (
            {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_SESSION_TOKEN": "t"},
            "env keys: AWS_ACCESS_KEY_ID + AWS_SESSION_TOKEN",
        ),
        ({"AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"}, "web identity"),
        # Only read from this dict, never put in the environment: nothing here resolves or calls it.
        ({"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/x"}, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
        ({"AWS_ACCESS_KEY_ID": "a"}, None),  # half a key pair is not credentials
        ({"AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token"}, None),  # no role to assume
        ({"AWS_CONTAINER_CREDENTIALS_FULL_URI": ""}, None),
    ],
)
def test_env_sources_boto3_would_use(home: Path, env: dict[str, str], expected: str | None) -> None:
    env = {**env, "AWS_SHARED_CREDENTIALS_FILE": str(home / "none"), "AWS_CONFIG_FILE": str(home / "none")}
    source = aws_credential_source(env, home=home)
    assert (source is None) if expected is None else (source is not None and expected in source)


def test_shared_files_count_for_the_profile_boto3_selects(home: Path) -> None:
    (home / ".aws" / "credentials").write_text("[work]\naws_access_key_id = x\naws_secret_access_key = y\n")
    (home / ".aws" / "config").write_text(
        "[profile sso]\nsso_session = corp\n[ops]\nrole_arn = arn:aws:iam::1:role/r\n"
    )
    files = {
        "AWS_SHARED_CREDENTIALS_FILE": str(home / ".aws" / "credentials"),
        "AWS_CONFIG_FILE": str(home / ".aws" / "config"),
    }
    assert not aws_credentials_present(files, home=home)  # the default profile holds nothing
    assert aws_credential_source({**files, "AWS_PROFILE": "work"}, home=home) == (
        f"shared files: {home / '.aws' / 'credentials'} [work]"
    )
    assert aws_credentials_present({**files, "AWS_PROFILE": "sso"}, home=home)
    # `[ops]` in the config file is not a profile (profiles there are `[profile NAME]`), and `nope` does not exist.
    assert not aws_credentials_present({**files, "AWS_PROFILE": "ops"}, home=home)
    with pytest.raises(ConfigError, match="'nope'"):
        resolve_auto_provider(Settings(), {**files, "AWS_PROFILE": "nope"}, deployment="celery worker")


def test_deployment_mode_of_a_server() -> None:
    token = ServiceConfig(tokens={"t": "u"})
    assert deployment_mode("127.0.0.1", ServiceConfig()) is None
    assert deployment_mode("::1", ServiceConfig()) is None
    assert deployment_mode("127.0.0.1", token) == "serve with a token"
    assert deployment_mode("0.0.0.0", token) == "serve with a token"
    assert deployment_mode("0.0.0.0", ServiceConfig()) == "serve on 0.0.0.0"


def test_prepare_serving_records_the_mode_and_resolves_at_start_up(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = ServiceConfig()
    assert prepare_serving("127.0.0.1", Settings(), local).provider == "auto"  # jobs resolve it, with the banner
    assert local.deployment is None
    with pytest.raises(BadInputError, match="without an API token"):  # the binding rule still comes first
        prepare_serving("0.0.0.0", Settings(), ServiceConfig())
    token = ServiceConfig(tokens={"t": "u"})
    with pytest.raises(ConfigError, match="serve with a token"):
        prepare_serving("127.0.0.1", Settings(), token)
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", _unused_loopback_url())
    assert prepare_serving("0.0.0.0", Settings(), token).provider == "bedrock"
    assert token.deployment == "serve with a token"


class _Reached(Exception):
    """Raised where ``serve`` would build the app and bind: the start-up checks have passed."""


def test_serve_with_a_token_and_no_credentials_exits_2_before_binding(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import insightloom.service.server as server

    def reached(*args: object, **kwargs: object) -> None:
        raise _Reached

    monkeypatch.setattr(server, "build_server", reached)
    monkeypatch.setattr(server, "create_app", reached)
    monkeypatch.setenv("INSIGHTLOOM_ARTIFACTS", str(tmp_path / "artifacts"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INSIGHTLOOM_API_TOKEN", "s3cr3t")
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", "8765"])
    assert result.exit_code == 2, result.output
    assert "Refusing to start (serve with a token)" in result.stderr and "--provider offline" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "artifacts").exists()  # refused before anything was set up

    monkeypatch.setenv("INSIGHTLOOM_API_TOKEN", "s3cr3t")  # serve drops it from the environment once read
    caplog.set_level(logging.WARNING, logger="insightloom.config")
    chosen = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", "8765", "--provider", "offline"])
    assert isinstance(chosen.exception, _Reached), chosen.output  # an explicit offline choice gets past the check
    assert any("provider offline chosen explicitly" in m and "serve with a token" in m for m in caplog.messages)
