"""The warm runner: a lazily started fork server with pandas, numpy, matplotlib, pyarrow and duckdb imported.

Each script still runs in a fresh child process (forked from the server), so nothing leaks between scripts, but
it skips the ~1.4 s of interpreter start and imports. One server is shared by every job of the host process; it
holds no job state. If the server dies it is restarted; if it cannot be started, scripts run on the cold path
and the reason is logged once.
"""

from __future__ import annotations

import atexit
import json
import logging
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from insightloom.errors import ServerUnavailable
from insightloom.execution.cold import ColdRunner
from insightloom.execution.limits import Limits, RunResult
from insightloom.execution.runner_base import (
    HOST_GRACE_S,
    build_spec,
    child_env,
    default_isolation,
    host_killed,
    kill_leftovers,
    make_run_dir,
    snapshot,
    to_result,
    warn_once,
)
from insightloom.execution.script_paths import ensure_inside_code

logger = logging.getLogger(__name__)

_CONNECT_TIMEOUT_S = 10.0
_DEATH_WAIT_S = 2.0


class WarmRunner:
    """Run scripts in fresh children of a pre-imported fork server.

    Args:
        python: Interpreter for the server (tests pass a bogus one to exercise the fallback).
        isolate: Which isolation to request: ``network``, ``filesystem``, ``pidns`` (all on by default).
        start_timeout_s: How long the first caller waits for the server's imports.
        max_restarts: Restarts after which the runner gives up and stays on the cold path.
    """

    name = "warm"

    def __init__(
        self,
        *,
        python: str = sys.executable,
        isolate: dict | None = None,
        start_timeout_s: float = 120.0,
        max_restarts: int = 5,
    ) -> None:
        self.python = python
        self.isolate = isolate or default_isolation()
        self.start_timeout_s = start_timeout_s
        self.max_restarts = max_restarts
        self.cold = ColdRunner(python=sys.executable, isolate=self.isolate)
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._dir: str | None = None
        self._starts = 0
        self._given_up: str | None = None
        atexit.register(self.shutdown)

    # ------------------------------------------------------------------------------------------ public API

    def run(self, script: Path, job_dir: Path, limits: Limits | None = None) -> RunResult:
        """Run ``script`` for ``job_dir`` under ``limits``; falls back to a cold process if the server is gone."""
        limits = limits or Limits()
        script = ensure_inside_code(script, job_dir)
        if self._given_up:
            return self.cold.run(script, job_dir, limits)
        before = snapshot(Path(job_dir))
        run_dir = make_run_dir()
        started = time.monotonic()
        try:
            raw = self._run_on_server(script, job_dir, limits, run_dir)
        except ServerUnavailable as exc:
            if exc.permanent:
                self._give_up(str(exc))
            else:
                logger.warning("warm script runner unreachable (%s); running this script cold", exc)
            return self.cold.run(script, job_dir, limits)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)
        duration = time.monotonic() - started
        new_files = sorted(snapshot(Path(job_dir)) - before)
        return to_result(raw, limits, duration_s=duration, new_files=new_files, runner=self.name)

    def start(self) -> None:
        """Start the server now instead of on the first script (e.g. at service start-up)."""
        try:
            self._ensure_started()
        except ServerUnavailable as exc:
            self._give_up(str(exc))

    @property
    def server_pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def shutdown(self) -> None:
        """Stop the server (closing its stdin makes it exit) and remove its socket folder."""
        with self._lock:
            self._stop_locked()

    # ------------------------------------------------------------------------------------------ internals

    def _give_up(self, reason: str) -> None:
        self._given_up = reason
        warn_once(f"warm script runner unavailable, using cold subprocesses instead: {reason}")

    def _run_on_server(self, script: Path, job_dir: Path, limits: Limits, run_dir: str) -> dict:
        for _attempt in range(2):
            sock_path = self._ensure_started()
            spec = build_spec(script, job_dir, limits, run_dir, self.isolate, server_cwd=self._dir)
            try:
                conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                conn.settimeout(_CONNECT_TIMEOUT_S)
                conn.connect(sock_path)
            except OSError as exc:
                self._note_dead(f"cannot connect: {exc}")
                continue
            with conn:
                reply, error = _exchange(conn, spec, limits)
            if reply is not None:
                return reply
            if not any(Path(run_dir, name).exists() for name in ("supervisor.pid", "child.pid")):
                self._note_dead(f"server dropped the request ({error})")
                continue  # the script never started: safe to retry on a fresh server
            kill_leftovers(run_dir)
            why = "timeout" if error == "timeout" else f"supervisor lost ({error})"
            return host_killed(limits, why)
        raise ServerUnavailable("the warm server stopped answering twice in a row", permanent=False)

    def _note_dead(self, why: str) -> None:
        with self._lock:
            proc = self._proc
            if proc is not None:
                try:
                    proc.wait(timeout=_DEATH_WAIT_S)  # a killed server may take a moment to exit
                except subprocess.TimeoutExpired:
                    return  # server is alive; only this connection failed
            logger.warning("warm script runner died (%s); restarting it", why)
            self._stop_locked()

    def _ensure_started(self) -> str:
        with self._lock:
            if self._proc is not None and self._proc.poll() is None and self._dir:
                return str(Path(self._dir, "server.sock"))
            if self._proc is not None:
                logger.warning("warm script runner exited with code %s; restarting it", self._proc.returncode)
                self._stop_locked()
            if self._starts > self.max_restarts:
                raise ServerUnavailable(f"restarted {self.max_restarts} times already")
            self._starts += 1
            return self._start_locked()

    def _start_locked(self) -> str:
        self._dir = tempfile.mkdtemp(prefix="insightloom-warm-")
        sock_path = str(Path(self._dir, "server.sock"))
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(sock_path)
        listener.listen(128)
        log_path = Path(self._dir, "server.log")
        argv = [self.python, "-m", "insightloom.execution._server", str(listener.fileno()), json.dumps(self.isolate)]
        try:
            with open(log_path, "wb") as log:
                self._proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    pass_fds=(listener.fileno(),),
                    env=child_env(),
                    cwd=self._dir,
                )
        except OSError as exc:
            self._stop_locked()
            raise ServerUnavailable(f"cannot start {self.python}: {exc}") from exc
        finally:
            listener.close()
        ready = _read_ready(self._proc, self.start_timeout_s)
        if ready is None:
            tail = log_path.read_text(errors="replace")[-1500:] if log_path.exists() else ""
            self._stop_locked()
            raise ServerUnavailable(f"server did not become ready in {self.start_timeout_s:g} s. {tail}".strip())
        logger.info("warm script runner ready (pid %s, %s thread(s))", self._proc.pid, ready.get("threads"))
        if ready.get("failed"):
            logger.info("warm script runner could not pre-import: %s", "; ".join(ready["failed"]))
        if ready.get("threads", 1) > 1:
            warn_once(f"warm script runner has {ready['threads']} threads after its imports; forking may be unsafe")
        return sock_path

    def _stop_locked(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                if proc.stdin:
                    proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
            if proc.stdout:
                proc.stdout.close()
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def _read_ready(proc: subprocess.Popen, timeout_s: float) -> dict | None:
    """Wait for the server's ready line (it is printed after the heavy imports)."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout_s):
            return None
    line = proc.stdout.readline()
    try:
        ready = json.loads(line.decode())
    except ValueError:
        return None
    return ready if ready.get("ready") else None


def _exchange(conn: socket.socket, spec: dict, limits: Limits) -> tuple[dict | None, str]:
    """Send the spec, wait for the supervisor's report; (report, "") or (None, why it failed)."""
    try:
        conn.sendall(json.dumps(spec).encode() + b"\n")
        conn.settimeout(float(limits.timeout_s) + HOST_GRACE_S)
        chunks = []
        while True:
            chunk = conn.recv(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except TimeoutError:
        return None, "timeout"
    except OSError as exc:
        return None, str(exc)
    data = b"".join(chunks)
    if not data:
        return None, "no reply"
    try:
        return json.loads(data.decode()), ""
    except ValueError:
        return None, "unreadable reply"
