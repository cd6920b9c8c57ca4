"""A container task role alone (ECS/Fargate-style, at a loopback stub) makes ``auto`` pick Bedrock, and the Bedrock
model the product builds takes its credentials from that endpoint: nothing else is configured."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from container_creds import ContainerCredentialsStub

from insightloom.config import CREDENTIAL_ENV_VARS, Settings, aws_credential_source, deployment_settings
from insightloom.models import make_model

#: Every other source boto3 would read: a container test must see none of them.
OTHER_SOURCES = (*(v for v in CREDENTIAL_ENV_VARS if v != "AWS_CONTAINER_CREDENTIALS_FULL_URI"), "INSIGHTLOOM_PROVIDER")


@pytest.fixture
def container_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ContainerCredentialsStub]:
    """The stub running, and an environment whose only credential source is its FULL_URI."""
    home = tmp_path / "home"
    home.mkdir()
    for name in OTHER_SOURCES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "no-config"))
    monkeypatch.setenv("BOTO_CONFIG", str(home / "no-boto"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    stub = ContainerCredentialsStub().start()
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", stub.url)
    yield stub
    stub.stop()


def test_the_bedrock_model_resolves_credentials_from_the_container_endpoint(
    container_only: ContainerCredentialsStub,
) -> None:
    assert aws_credential_source() == "container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI"
    assert container_only.hits == 0  # deciding reads the variable only: it never calls the endpoint
    settings = deployment_settings(Settings(), "celery worker")
    spec = settings.spec("coder")
    assert spec.provider == "bedrock"
    model = make_model(spec, "coder", settings)  # no Bedrock call: building the client resolves its credentials
    frozen = model.client._get_credentials().get_frozen_credentials()  # type: ignore[attr-defined]
    assert container_only.hits >= 1
    assert frozen.access_key == container_only.access_key
    assert frozen.secret_key == container_only.secret_key
    assert frozen.token == container_only.session_token


def test_the_stub_serves_only_its_path_and_counts_hits() -> None:
    import json
    import urllib.error
    import urllib.request

    with ContainerCredentialsStub(access_key="ASIAOTHER", token="secret-header") as stub:
        request = urllib.request.Request(stub.url, headers={"Authorization": "secret-header"})
        with urllib.request.urlopen(request, timeout=5) as response:
            document = json.load(response)
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(stub.url, timeout=5)
        assert denied.value.code == 401
    assert set(document) == {"AccessKeyId", "SecretAccessKey", "Token", "Expiration"}
    assert document["AccessKeyId"] == "ASIAOTHER" and stub.hits == 1
