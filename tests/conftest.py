"""Shared test set-up: no network beyond loopback, no real credentials, paths to the shared data and contracts."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

from shared_paths import load_contract

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if isinstance(address, tuple) and address:
        host = address[0]
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise RuntimeError(f"test tried to reach {host}: tests must not use the network")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network_no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    empty = tmp_path_factory.mktemp("aws")
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
        "INSIGHTLOOM_CONFIG",
        "INSIGHTLOOM_PROVIDER",
        "INSIGHTLOOM_ARTIFACTS",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def contract():
    """Validate a JSON document against one of ../shared/contracts."""
    import jsonschema

    def check(name: str, document: Any) -> None:
        jsonschema.validate(document, load_contract(name))

    return check
