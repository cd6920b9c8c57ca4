"""Opt-in OpenTelemetry tracing through Strands' own telemetry, with the job and role on every agent's spans.

Off by default: nothing here touches OpenTelemetry's global tracer provider until ``trace: true`` (config) or
``run --trace`` asks for it. Strands then emits its agent, cycle, model and tool spans; the exporter is chosen by
the standard ``OTEL_*`` variables (``OTEL_TRACES_EXPORTER``, ``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``...), read by the OpenTelemetry SDK itself.

The OTLP exporter is the optional extra ``insightloom[otel]`` (Strands' ``otel`` extra); turning tracing on
without it stops the run with exit 2 and the install command.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

    from ..runtime import JobRuntime

logger = logging.getLogger(__name__)

#: The span attributes every agent of a job carries (Strands copies them onto the agent's span and its children's
#: parent): which job, which agent and which model, so a trace backend can filter one job or one role.
JOB_ID = "insightloom.job_id"
ROLE = "insightloom.agent.role"
MODEL_ID = "insightloom.model_id"
PROVIDER = "insightloom.provider"
#: The grouping key trace backends (Langfuse, Phoenix) read to put one job's agents in one session.
SESSION_ID = "session.id"

OTLP_MODULE = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
INSTALL = "pip install 'insightloom[otel]'"
#: ``OTEL_TRACES_EXPORTER`` values this build can honour; Strands ships the OTLP/HTTP exporter only.
EXPORTERS = ("otlp", "console", "none")

_lock = threading.Lock()
_provider: TracerProvider | None = None


def trace_attributes(role: str, rt: JobRuntime) -> dict[str, str]:
    """The attributes put on one agent's spans.

    Args:
        role: The agent's role.
        rt: The job's runtime.

    Returns:
        Job id, role, model id and provider, keyed by the names above.
    """
    spec = rt.settings.spec(role)
    return {JOB_ID: rt.job.id, SESSION_ID: rt.job.id, ROLE: role, MODEL_ID: spec.model_id, PROVIDER: spec.provider}


def exporters_from_env(env: Mapping[str, str] | None = None) -> list[str]:
    """The exporters ``OTEL_TRACES_EXPORTER`` names (default ``otlp``), checked against what this build has.

    Args:
        env: Environment to read, defaulting to ``os.environ``.

    Returns:
        The exporter names, in order, without ``none``.

    Raises:
        ConfigError: An exporter or OTLP protocol this build cannot provide.
    """
    env = os.environ if env is None else env
    names = [n.strip().lower() for n in (env.get("OTEL_TRACES_EXPORTER") or "otlp").split(",") if n.strip()]
    unknown = [n for n in names if n not in EXPORTERS]
    if unknown:
        raise ConfigError(
            f"OTEL_TRACES_EXPORTER names {', '.join(unknown)}, which insightloom cannot export to.",
            f"set OTEL_TRACES_EXPORTER to one of: {', '.join(EXPORTERS)}.",
        )
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    if "otlp" in names and protocol and protocol != "http/protobuf":
        # Strands' exporter speaks OTLP over HTTP only; a gRPC collector would silently receive nothing.
        raise ConfigError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported: the OTLP exporter sends http/protobuf.",
            "unset it or set http/protobuf, and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's HTTP port "
            "(usually 4318).",
        )
    return [n for n in names if n != "none"]


def start_tracing(exporter: SpanExporter | None = None) -> TracerProvider:
    """Install Strands' tracer provider as the global one, once per process.

    Args:
        exporter: An exporter to send spans to at once (a test's in-memory one) instead of those the ``OTEL_*``
            variables name.

    Returns:
        The provider in force (the first call's on later calls: OpenTelemetry allows one global provider).

    Raises:
        ConfigError: The OTLP exporter is asked for and ``insightloom[otel]`` is not installed, or the
            ``OTEL_*`` variables name something this build cannot export to.
    """
    global _provider
    with _lock:
        if _provider is not None:
            return _provider
        names = [] if exporter is not None else exporters_from_env()
        if "otlp" in names:
            _require_otlp()  # before any global is set, so a failed start leaves the process untraced
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        if exporter is not None:
            telemetry.tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        if "console" in names:
            telemetry.setup_console_exporter()
        if "otlp" in names:
            telemetry.setup_otlp_exporter()  # endpoint, headers and timeout from OTEL_EXPORTER_OTLP_*
        logger.info("OpenTelemetry tracing on (exporters: %s)", ", ".join(names) or "given")
        _provider = telemetry.tracer_provider
        return _provider


def tracing_provider() -> TracerProvider | None:
    """The provider :func:`start_tracing` installed, or None while tracing is off."""
    return _provider


def _require_otlp() -> None:
    try:
        importlib.import_module(OTLP_MODULE)
    except ImportError as exc:
        raise ConfigError(
            f"Tracing needs the OTLP exporter, an optional dependency that is not installed ({exc.name}).",
            f"{INSTALL}, or set OTEL_TRACES_EXPORTER=console to print spans instead.",
        ) from exc
