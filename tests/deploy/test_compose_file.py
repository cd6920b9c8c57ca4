"""The compose file, read as Compose reads it: every insightloom service gets the shared environment (YAML merge
keys are shallow, so a service's own ``environment:`` must merge it again), and only the api holds the token."""

from __future__ import annotations

from typing import Any

import yaml

from repo_paths import REPO

COMPOSE = REPO / "deploy" / "docker-compose.yml"
SHARED = ("AWS_REGION", "INSIGHTLOOM_PROVIDER", "CELERY_BROKER_URL", "INSIGHTLOOM_ARTIFACTS")


def _services() -> dict[str, dict[str, Any]]:
    services = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]
    assert isinstance(services, dict)
    return services


def _environment(service: dict[str, Any]) -> dict[str, Any]:
    env = service.get("environment") or {}
    assert isinstance(env, dict), "keep environment as a mapping, so the shared block can be merged into it"
    return env


def test_api_and_worker_both_get_the_shared_environment() -> None:
    services = _services()
    for name in ("api", "worker"):
        env = _environment(services[name])
        missing = [key for key in SHARED if key not in env]
        assert not missing, f"{name} lacks {missing}"
        assert env["AWS_REGION"].startswith("${AWS_REGION:-"), "a region default, overridable from the shell"
        assert env["INSIGHTLOOM_PROVIDER"] == "${INSIGHTLOOM_PROVIDER:-auto}"
    assert "INSIGHTLOOM_MAX_UPLOAD_MB" in _environment(services["api"])  # the api's own variables survive the merge


def test_only_the_api_holds_the_token() -> None:
    services = _services()
    app_services = {name: s for name, s in services.items() if s.get("image") == "insightloom-worker:latest"}
    assert {"api", "worker"} <= set(app_services)
    assert "INSIGHTLOOM_API_TOKEN" in _environment(services["api"])
    holders = sorted(name for name, s in app_services.items() if "INSIGHTLOOM_API_TOKEN" in _environment(s))
    assert holders == ["api"], "workers take no requests: least privilege keeps the token out of them"
    for name, service in app_services.items():
        assert all(key in _environment(service) for key in SHARED), f"{name} lost the shared environment"
