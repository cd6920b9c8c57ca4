"""Service tests never see the developer's service env vars (tokens, upload limit, pool size)."""

from __future__ import annotations

import pytest

SERVICE_ENV = ("INSIGHTLOOM_API_TOKEN", "INSIGHTLOOM_TOKENS_FILE", "INSIGHTLOOM_MAX_UPLOAD_MB", "INSIGHTLOOM_WORKERS")


@pytest.fixture(autouse=True)
def _no_service_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SERVICE_ENV:
        monkeypatch.delenv(name, raising=False)
