"""Running the app under uvicorn: ``insightloom serve``, and a server in a thread for tests and benchmarks."""

from __future__ import annotations

import logging
import os
import socket
import threading
from types import TracebackType

import uvicorn
from fastapi import FastAPI

from ..config import Settings
from ..errors import BadInputError
from .app import create_app
from .service_settings import SECRET_ENV, ServiceConfig, prepare_serving

logger = logging.getLogger(__name__)

GRACEFUL_SHUTDOWN_S = 10


class _Server(uvicorn.Server):
    """uvicorn, ending the app's SSE streams first when it stops, so open streams don't hold the shutdown up."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self._app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._app.state.manager.begin_stop()
        await super().shutdown(sockets=sockets)


def build_server(app: FastAPI, host: str, port: int, *, log_level: str = "info") -> uvicorn.Server:
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        server_header=False,
    )
    return _Server(config, app)


def run_server(host: str, port: int, settings: Settings) -> None:
    """``insightloom serve``: run the API and web page until interrupted.

    With a token or a non-loopback bind the server is a deployment: ``provider: auto`` is resolved before binding
    and never falls back to the offline model (:func:`~.service_settings.prepare_serving`).

    Raises:
        BadInputError: A non-loopback ``host`` with no API token configured, or an artifacts folder that can't be
            created.
        ConfigError: A malformed service env var or tokens file, or a deployment with ``provider: auto`` and no AWS
            credentials configured.
    """
    config = ServiceConfig.from_env()
    forget_secret_env()  # read once: the process that forks scripts keeps no token in its environment
    settings = prepare_serving(host, settings, config)
    try:
        settings.artifacts.expanduser().mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInputError(
            f"The artifacts folder {settings.artifacts} cannot be created: {exc.strerror}.",
            "set INSIGHTLOOM_ARTIFACTS (or `artifacts:` in the config) to a writable folder.",
        ) from None
    app = create_app(settings, config)
    shown = f"[{host}]" if ":" in host else host
    logger.warning("insightloom serving on http://%s:%d (%s)", shown, port, "open" if config.open else "token auth")
    try:
        build_server(app, host, port).run()
    finally:
        _abandon_running_jobs(app)


def forget_secret_env() -> None:
    """Drop the service's token variables from this process's environment once they were read.

    Scripts never inherit the host's environment (the runners build theirs from an allowlist, and the sandbox
    hides the host's /proc), but a token that is no longer there cannot leak by any path.
    """
    for name in SECRET_ENV:
        os.environ.pop(name, None)


def _abandon_running_jobs(app: FastAPI) -> None:
    """Leave running jobs as a crash would, so the next start resumes them from their last completed step.

    Letting the interpreter shut down under them instead would break their model and tool calls half-way (thread
    pools refuse new work at exit) and record them as failed.
    """
    running = app.state.manager.running()
    if running:
        logger.warning("stopping with %d job step(s) running: they resume on the next start", running)
        logging.shutdown()
        os._exit(0)


class ThreadedServer:
    """The app on a loopback port in a background thread (tests, benchmarks, embedding).

    The socket is bound and listening before the thread starts, so a client may connect at once: the kernel holds the
    connection until uvicorn accepts it.

    Args:
        app: The app to serve.
        host: Loopback address to bind.
        port: 0 for a free port.
    """

    def __init__(self, app: FastAPI, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(128)
        self.host, self.port = self.sock.getsockname()[:2]
        self.server = build_server(app, self.host, self.port, log_level="warning")
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ThreadedServer:
        self.thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop accepting, end the streams and the app's lifespan; running jobs are abandoned (they resume later)."""
        self.server.should_exit = True
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise RuntimeError(f"the server on {self.url} did not stop within {timeout:g} s")

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
