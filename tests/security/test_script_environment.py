"""Scripts see an allowlisted environment: no API token, tokens file, cloud or model key reaches them, whatever its
name (escape class 3, the child's side: the variables the runner hands down)."""

from __future__ import annotations

from pathlib import Path

import pytest

from insightloom.execution import ColdRunner, Limits, WarmRunner
from insightloom.execution.runner_base import child_env

SECRETS = {
    "INSIGHTLOOM_API_TOKEN": "tok-do-not-leak",
    "INSIGHTLOOM_TOKENS_FILE": "/srv/tokens-do-not-leak.yaml",
    "AWS_SECRET_ACCESS_KEY": "aws-do-not-leak",
    "ANTHROPIC_API_KEY": "anthropic-do-not-leak",
    "MY_COMPANY_DB_DSN": "postgres://user:pw-do-not-leak@db/x",  # a name no denylist would think of
}
SCRIPT = "import os\nleaks = [k for k, v in os.environ.items() if 'do-not-leak' in v]\nprint('leaks', leaks)\n"


def test_child_env_is_an_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = child_env()
    assert not any("do-not-leak" in value for value in env.values())
    assert env["LC_ALL"] == "C.UTF-8" and "PATH" in env and env["MPLBACKEND"] == "Agg"


@pytest.mark.parametrize("kind", ["warm", "cold"])
def test_scripts_never_see_host_secrets(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    job = tmp_path / "job"
    (job / "code").mkdir(parents=True)
    script = job / "code" / "env.py"
    script.write_text(SCRIPT, encoding="utf-8")
    runner = WarmRunner() if kind == "warm" else ColdRunner()  # started after the secrets were set
    try:
        result = runner.run(script, job, Limits(timeout_s=60))
    finally:
        if isinstance(runner, WarmRunner):
            runner.shutdown()
    assert result.exit_code == 0, result.stderr
    assert "leaks []" in result.stdout


def test_doctor_names_the_isolation_level_in_force() -> None:
    """``insightloom doctor`` prints ``isolation: <level>``; CI pins the level it must reach."""
    import os

    from typer.testing import CliRunner

    from insightloom.cli import app
    from insightloom.execution import isolation_level

    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0
    line = next(line for line in result.stdout.splitlines() if line.startswith("isolation: "))
    level = isolation_level()
    assert line.split()[1] == level and level in ("bwrap+cgroup", "bwrap", "landlock+ns", "landlock", "none")
    expected = os.environ.get("INSIGHTLOOM_EXPECT_ISOLATION")
    if expected:
        assert level == expected, f"isolation is {level} here, CI expects {expected}: install bubblewrap"


def test_serve_reads_the_token_once_and_drops_it_from_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from insightloom.service import server

    monkeypatch.setenv("INSIGHTLOOM_API_TOKEN", "tok-do-not-leak")
    config = server.ServiceConfig.from_env()
    server.forget_secret_env()
    assert config.tokens == {"tok-do-not-leak": "admin"} or "tok-do-not-leak" in config.tokens
    assert "INSIGHTLOOM_API_TOKEN" not in os.environ
