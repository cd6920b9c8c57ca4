"""Opt-in OpenTelemetry tracing: spans carry the job and role when on, nothing is traced when off.

OpenTelemetry allows one global tracer provider per process, so every test that lets tracing start runs the agent
in a child interpreter; the in-process tests only reach the checks made before any global is set.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.config import Settings, load_settings
from insightloom.errors import ConfigError
from insightloom.telemetry import tracing

#: One coordinator call on the offline model in a fresh interpreter. argv: mode (memory, env, off) and a temp dir.
#: It prints one JSON line: the job id, whether a global SDK provider is set, and the in-memory spans.
CHILD = """
import json, sys
from pathlib import Path
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from insightloom.agents import build_agent
from insightloom.config import Settings
from insightloom.jobs import JobFolder
from insightloom.runtime import JobRuntime
from insightloom.telemetry import tracing

mode, tmp = sys.argv[1], Path(sys.argv[2])
exporter = InMemorySpanExporter()
if mode == "memory":
    tracing.start_tracing(exporter)
settings = Settings(provider="offline", trace=mode != "off").with_provider("offline")
rt = JobRuntime.create(JobFolder.create(tmp / "artifacts"), settings, "req", "en")
for role in ("coordinator", "tracker"):
    build_agent(role, rt, "Rules.\\n<!-- dynamic -->\\nper call\\n")("hello")
provider = tracing.tracing_provider()
if provider is not None:
    provider.force_flush()  # the OTLP batch goes out now, not at exit
spans = [{"name": s.name, "attributes": dict(s.attributes or {})} for s in exporter.get_finished_spans()]
sdk = type(trace.get_tracer_provider()).__module__.startswith("opentelemetry.sdk")
print(json.dumps({"job": rt.job.id, "started": provider is not None, "sdk_provider": sdk, "spans": spans}))
"""


def _child(mode: str, tmp_path: Path, **env: str) -> dict:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    base.update(
        AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_EC2_METADATA_DISABLED="true",
        PYTHONPATH=os.pathsep.join(sys.path), **env,
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(tmp_path)],
        env=base, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


class _Collector(http.server.BaseHTTPRequestHandler):
    """A loopback OTLP/HTTP collector: keeps each request's path and body, answers 200."""

    received: list[tuple[str, bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.received.append((self.path, body))  # before the reply: the exporter waits for it
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    received: list[tuple[str, bytes]] = []
    handler = type("Collector", (_Collector,), {"received": received})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()
    server.server_close()


def test_spans_carry_the_job_role_and_model_of_each_agent(tmp_path: Path) -> None:
    out = _child("memory", tmp_path)
    agent_spans = {s["attributes"].get("gen_ai.agent.name"): s for s in out["spans"] if s["name"].startswith("invoke")}
    assert set(agent_spans) == {"coordinator", "tracker"}
    settings = Settings()
    for role, span in agent_spans.items():
        attrs = span["attributes"]
        assert attrs[tracing.JOB_ID] == out["job"] and attrs[tracing.SESSION_ID] == out["job"]
        assert attrs[tracing.ROLE] == role
        assert attrs[tracing.MODEL_ID] == settings.spec(role).model_id
        assert attrs[tracing.PROVIDER] == "offline"
    model_calls = [s for s in out["spans"] if s["name"] == "chat"]
    assert {s["attributes"][tracing.ROLE] for s in model_calls} == {"coordinator", "tracker"}
    assert all(s["attributes"][tracing.JOB_ID] == out["job"] for s in model_calls)


def test_the_otlp_exporter_follows_the_otel_variables_to_a_loopback_collector(
    tmp_path: Path, collector: tuple[str, list[tuple[str, bytes]]]
) -> None:
    url, received = collector
    out = _child("env", tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_SERVICE_NAME="insightloom-test")
    assert out["started"] and out["sdk_provider"]
    assert received and {path for path, _ in received} == {"/v1/traces"}
    body = b"".join(b for _, b in received)
    for expected in (out["job"], "coordinator", "tracker", "insightloom-test"):
        assert expected.encode() in body


def test_off_by_default_sets_no_provider_and_sends_nothing(
    tmp_path: Path, collector: tuple[str, list[tuple[str, bytes]]]
) -> None:
    url, received = collector
    assert Settings().trace is False
    out = _child("off", tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=url)
    assert out == {"job": out["job"], "started": False, "sdk_provider": False, "spans": []}
    assert received == []


def test_trace_without_the_extra_exits_2_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, tracing.OTLP_MODULE, None)  # the import fails as if not installed
    data = tmp_path / "sales.csv"
    data.write_text("month,revenue\n2024-01,10\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(data), "-r", "trend", "--provider", "offline", "-y", "--trace"])
    assert result.exit_code == 2
    assert "pip install 'insightloom[otel]'" in " ".join(result.output.split())
    assert tracing.tracing_provider() is None  # refused before any global was set


def test_the_setting_is_read_from_config_and_checked(tmp_path: Path) -> None:
    config = tmp_path / "insightloom.yaml"
    config.write_text("trace: true\n", encoding="utf-8")
    assert load_settings(config, env={}).trace is True
    config.write_text("trace: sometimes\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="trace .* must be true or false"):
        load_settings(config, env={})


@pytest.mark.parametrize(
    ("env", "message"),
    [({"OTEL_TRACES_EXPORTER": "zipkin"}, "zipkin"), ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "http/protobuf")],
)
def test_exporters_this_build_cannot_provide_are_refused_with_the_fix(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        tracing.exporters_from_env(env)
    assert tracing.exporters_from_env({"OTEL_TRACES_EXPORTER": "console,none"}) == ["console"]
    assert tracing.exporters_from_env({}) == ["otlp"]
