"""Retries in one layer: botocore's adaptive mode retries a throttled Bedrock call, Strands adds no attempts, and
each retry is announced with its wait. Against a loopback fake of the Bedrock Runtime endpoint, no network."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from botocore.retries import adaptive, standard
from strands import Agent

from insightloom.config import AgentModelSpec, Settings
from insightloom.models.bedrock import make_bedrock, watch_throttling
from insightloom.models.retries import agent_retry_strategy

REPLY = {
    "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4},
    "metrics": {"latencyMs": 1},
}


#: Bedrock's error header: the code, then the namespace botocore strips.
THROTTLED = {"x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}


class _Bedrock(BaseHTTPRequestHandler):
    throttle = 0
    hits = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).hits += 1
        if type(self).throttle:
            type(self).throttle -= 1
            self._send(429, {"message": "Too many requests, please wait before trying again."}, THROTTLED)
            return
        self._send(200, REPLY, {})

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[type[_Bedrock]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Bedrock)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    env = {
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
        "AWS_REGION": "us-west-2",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": f"http://127.0.0.1:{server.server_port}",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    # botocore's waits (jittered backoff, the adaptive rate limiter) are real sleeps: zero them, keep the counting.
    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", lambda self, context: 0)
    monkeypatch.setattr(adaptive.ClientRateLimiter, "on_sending_request", lambda self, request, **kw: None)
    _Bedrock.throttle, _Bedrock.hits = 0, 0
    yield _Bedrock
    server.shutdown()


def _model(settings: Settings) -> Any:
    spec = AgentModelSpec(provider="bedrock", model_id="us.anthropic.claude-haiku-4-5-20251001-v1:0", max_tokens=64)
    return make_bedrock(spec, settings)


def test_a_throttled_call_is_retried_by_botocore_and_each_retry_announced_with_its_wait(
    endpoint: type[_Bedrock],
) -> None:
    settings = Settings(model_max_attempts=50)
    model = _model(settings)
    notices: list[dict[str, Any]] = []
    watch_throttling(model, settings, lambda **data: notices.append(data))
    endpoint.throttle = 2
    reply = model.client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])
    assert reply["output"]["message"]["content"][0]["text"] == "ok" and endpoint.hits == 3
    assert [n["attempt"] for n in notices] == [2, 3] and [n["wait_s"] for n in notices] == [1, 2]
    assert notices[0]["message"].startswith("throttled by Bedrock (ThrottlingException), retrying in up to 1 s")


def test_the_agent_loop_adds_no_attempts_to_the_clients(endpoint: type[_Bedrock]) -> None:
    settings = Settings(model_max_attempts=3)
    agent = Agent(model=_model(settings), callback_handler=None, retry_strategy=agent_retry_strategy())
    endpoint.throttle = 100
    with pytest.raises(Exception, match="(?i)throttl|too many"):
        agent("hi")
    assert endpoint.hits == 3  # botocore's 3, not 3 × Strands' attempts


def test_the_defaults_are_sized_for_a_forty_call_job() -> None:
    settings = Settings()
    assert (settings.model_max_attempts, settings.model_timeout_s) == (50, 900.0)
    config = _config_of(make_bedrock(AgentModelSpec(provider="bedrock"), settings))
    assert config.retries == {"total_max_attempts": 50, "mode": "adaptive"} and config.read_timeout == 900.0


def _config_of(model: Any) -> Any:
    return model.client.meta.config
