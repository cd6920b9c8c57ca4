"""Fixtures for the deploy lane: a real S3-protocol server (moto's standalone server) on loopback.

Tests here talk to it through boto3 with a custom endpoint (``AWS_ENDPOINT_URL_S3``), exactly as a deployment talks
to S3. Without moto the tests skip locally and fail under ``INSIGHTLOOM_NO_SKIPS=1`` (CI).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery_lane import RedisServer, free_port, redis_available

from insightloom.config import CREDENTIAL_ENV_VARS

NO_SKIPS_ENV = "INSIGHTLOOM_NO_SKIPS"
#: moto's server, but answering one request at a time. moto checks a conditional write's precondition and stores the
#: object in two steps, so under its threaded server two racing ``If-None-Match: *`` PUTs can both succeed; real S3
#: decides them atomically, and serving requests one by one gives the lock tests that same guarantee.
_SERIAL_MOTO = """
import sys
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
run_simple(sys.argv[1], int(sys.argv[2]), DomainDispatcherApplication(create_backend_app), threaded=False,
           request_handler=MotoRequestHandler)
"""
_CLEARED = (*CREDENTIAL_ENV_VARS, "AWS_ENDPOINT_URL")  # the test keys set below are the only credentials


def _missing(what: str) -> None:
    if os.environ.get(NO_SKIPS_ENV) == "1":
        pytest.fail(f"{what} (CI runs the deploy lane with no skips)")
    pytest.skip(what)


def _wait_listening(proc: subprocess.Popen[bytes], port: int, log: Path, deadline_s: float = 30.0) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"moto's server exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)  # polling for a subprocess to start listening: there is nothing to wait on instead
    pytest.fail(f"moto's server did not listen on 127.0.0.1:{port} within {deadline_s:g} s")


@pytest.fixture(scope="session")
def moto_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:<port>``: moto's S3 server, started once for the session."""
    if importlib.util.find_spec("moto") is None or importlib.util.find_spec("werkzeug") is None:
        _missing("moto[server] is not installed (pip install 'moto[server]')")
    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "server.log"
    env = {**os.environ, "AWS_EC2_METADATA_DISABLED": "true", "MOTO_PORT": str(port)}
    env.pop("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", None)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", _SERIAL_MOTO, "127.0.0.1", str(port)], stdout=out, stderr=subprocess.STDOUT, env=env
        )
    try:
        _wait_listening(proc, port, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def s3_env(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point boto3 at the loopback server with test credentials; returns the variables set (for subprocess envs).

    Every other credential source (profiles, container and web-identity variables) is removed from the environment.
    """
    for name in _CLEARED:
        monkeypatch.delenv(name, raising=False)
    values = {
        "AWS_ENDPOINT_URL_S3": moto_endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


@pytest.fixture
def s3_uri(s3_env: dict[str, str]) -> str:
    """``s3://<bucket>/jobs`` in a fresh bucket for this test."""
    import boto3

    bucket = f"insightloom-test-{uuid.uuid4().hex[:16]}"
    boto3.session.Session().client("s3").create_bucket(Bucket=bucket)
    return f"s3://{bucket}/jobs"


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A loopback ``redis-server`` for one test module (its own port and append-only file)."""
    if not redis_available():
        _missing("redis-server is not installed; .ci/run installs it (apt-get install redis-server)")
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()
