"""The warm runner: a lazily started fork server with pandas, numpy, matplotlib, pyarrow and duckdb imported.

Each script still runs in a fresh child process (forked from the server), so nothing leaks between scripts, but
it skips the ~1.4 s of interpreter start and imports. Where bubblewrap works, each job has its own server inside
its own sandbox, so no job can reach another's server or files; elsewhere one server is shared by every job of the
host process (it holds no job state). If a server dies it is restarted; if it cannot be started, scripts run on the
cold path and the reason is logged once.
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import queue
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from insightloom.errors import ServerUnavailable
from insightloom.execution.bwrap import (
    BWRAP_ENV,
    SandboxSpec,
    bwrap_works,
    give_to_sandbox,
    sandbox_argv,
    seed_mpl_cache,
    start_sandboxed,
)
from insightloom.execution.cgroups import CapEvents, SandboxCgroup, cgroup_support
from insightloom.execution.cold import ColdRunner
from insightloom.execution.limits import Limits, RunResult
from insightloom.execution.quota import QuotaWatch
from insightloom.execution.runner_base import (
    HOST_GRACE_S,
    build_spec,
    child_env,
    default_isolation,
    host_killed,
    kill_leftovers,
    make_run_dir,
    make_runs_root,
    note_run_limits,
    sandbox_env,
    sandboxed_isolation,
    snapshot,
    to_result,
    warn_once,
)
from insightloom.execution.script_paths import ensure_inside_code
from insightloom.fileio import read_tail

logger = logging.getLogger(__name__)

_CONNECT_TIMEOUT_S = 10.0
_DEATH_WAIT_S = 2.0
#: Memory the server and its spare child hold, on top of a script's own cap, in the job's cgroup (MiB).
SERVER_RESERVE_MB = 768
#: Processes the server, its spare and a script's whole tree may have together: a fork bomb stops here.
MAX_PIDS = 128


@dataclass
class _Server:
    """One fork server process: the shared one, or one job's inside that job's sandbox."""

    job_dir: Path | None
    lock: threading.Lock = field(default_factory=threading.Lock)
    proc: subprocess.Popen | None = None
    dir: str | None = None  # host-side folder with the control socket and the log
    runs_root: str | None = None  # the sandbox's run folders (bound into it), or None for the shared server
    cgroup: SandboxCgroup | None = None
    starts: int = 0
    started_ms: float | None = None

    @property
    def pid(self) -> int | None:
        proc = self.proc
        return proc.pid if proc is not None and proc.poll() is None else None


class WarmRunner:
    """Run scripts in fresh children of a pre-imported fork server.

    Where bubblewrap works (``sandbox`` left at None, or True), every job gets its own server inside its own
    sandbox (``execution.bwrap``), started at the job's first script or earlier through :meth:`prestart`, and held
    to one memory and process cap for the server and all its scripts (``execution.cgroups``). Elsewhere one shared
    server serves every job, each script confined by namespaces and Landlock.

    Args:
        python: Interpreter for the server (tests pass a bogus one to exercise the fallback).
        isolate: Which isolation to request: ``network``, ``filesystem``, ``pidns`` (all on by default).
        start_timeout_s: How long the first caller waits for the server's imports.
        max_restarts: Restarts after which the runner gives up and stays on the cold path.
        sandbox: Per-job bubblewrap sandboxes: None picks them where they work, False never.
    """

    name = "warm"

    def __init__(
        self,
        *,
        python: str = sys.executable,
        isolate: dict | None = None,
        start_timeout_s: float = 120.0,
        max_restarts: int = 5,
        sandbox: bool | None = None,
    ) -> None:
        self.python = python
        self.isolate = isolate or default_isolation()
        self.start_timeout_s = start_timeout_s
        self.max_restarts = max_restarts
        self.sandboxed = bwrap_works()[0] if sandbox is None else sandbox
        self.cold = ColdRunner(python=sys.executable, isolate=self.isolate, sandbox=self.sandboxed)
        self._lock = threading.Lock()
        self._servers: dict[str, _Server] = {}
        self._last: _Server | None = None
        self._given_up: str | None = None
        self._launcher = _Launcher()
        atexit.register(self.shutdown)

    # ------------------------------------------------------------------------------------------ public API

    def run(self, script: Path, job_dir: Path, limits: Limits | None = None) -> RunResult:
        """Run ``script`` for ``job_dir`` under ``limits``; falls back to a cold process if the server is gone."""
        limits = limits or Limits()
        script = ensure_inside_code(script, job_dir)
        if self._given_up:
            return self.cold.run(script, job_dir, limits)
        server = self._server_for(job_dir)
        if server.job_dir is not None:
            give_to_sandbox(server.job_dir)  # files the host wrote since the last script (the script itself)
        before = snapshot(Path(job_dir))
        started = time.monotonic()
        try:
            raw = self._run_on_server(server, script, job_dir, limits)
        except ServerUnavailable as exc:
            if exc.permanent:
                self._give_up(str(exc))
            else:
                logger.warning("warm script runner unreachable (%s); running this script cold", exc)
            return self.cold.run(script, job_dir, limits)
        duration = time.monotonic() - started
        new_files = sorted(snapshot(Path(job_dir)) - before)
        return to_result(raw, limits, duration_s=duration, new_files=new_files, runner=self.name)

    def start(self, job_dir: Path | None = None) -> None:
        """Start the (job's) server now instead of at the first script; failures are noted, not raised."""
        try:
            self._ensure_started(self._server_for(job_dir))
        except ServerUnavailable as exc:
            self._give_up(str(exc))

    def prestart(self, job_dir: Path) -> None:
        """Start the job's server in the background (while the plan is made or reviewed), so that the first
        script does not wait for the imports."""
        if self._given_up:
            return
        threading.Thread(target=self.start, args=(job_dir,), name="insightloom-warm-prestart", daemon=True).start()

    def release(self, job_dir: Path) -> None:
        """Stop the job's own server (its job ended or parked for review); a later script starts a new one."""
        with self._lock:
            server = self._servers.pop(self._key(job_dir), None) if self.sandboxed else None
        if server is not None:
            with server.lock:
                self._stop_locked(server)

    @property
    def server_pid(self) -> int | None:
        """The pid (on the host) of the server used last: the bwrap process when sandboxed."""
        return self._last.pid if self._last is not None else None

    def server_start_ms(self, job_dir: Path | None = None) -> float | None:
        """How long the (job's) server took from start to ready, in milliseconds."""
        server = self._servers.get(self._key(job_dir))
        return server.started_ms if server is not None else None

    def shutdown(self) -> None:
        """Stop every server (closing its stdin makes it exit) and remove its folders."""
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            with server.lock:
                self._stop_locked(server)

    # ------------------------------------------------------------------------------------------ internals

    def _key(self, job_dir: Path | None) -> str:
        return str(Path(job_dir).resolve()) if self.sandboxed and job_dir is not None else ""

    def _server_for(self, job_dir: Path | None) -> _Server:
        key = self._key(job_dir)
        with self._lock:
            server = self._servers.get(key)
            if server is None:
                server = self._servers[key] = _Server(Path(key) if key else None)
            self._last = server
            return server

    def _give_up(self, reason: str) -> None:
        self._given_up = reason
        warn_once(f"warm script runner unavailable, using cold subprocesses instead: {reason}")

    def _run_on_server(self, server: _Server, script: Path, job_dir: Path, limits: Limits) -> dict:
        for _attempt in range(2):
            sock_path = self._ensure_started(server)
            run_dir = make_run_dir(server.runs_root)
            try:
                before = CapEvents()
                if server.cgroup is not None:
                    server.cgroup.set_memory(limits.memory_mb + SERVER_RESERVE_MB)
                    before = server.cgroup.events()
                spec = build_spec(script, job_dir, limits, run_dir, self._isolate(server), server_cwd=server.dir)
                try:
                    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    conn.settimeout(_CONNECT_TIMEOUT_S)
                    conn.connect(sock_path)
                except OSError as exc:
                    self._note_dead(server, f"cannot connect: {exc}")
                    continue
                # One byte on the connection stops the script; the report still comes back on it.
                stop = functools.partial(conn.sendall, b"S")
                with conn, QuotaWatch(job_dir, limits.max_job_mb, limits.max_job_files, stop) as watch:
                    reply, error = _exchange(conn, spec, limits)
                if reply is not None:
                    note_run_limits(reply, server.cgroup, before, watch)
                    return reply
                if not any(Path(run_dir, name).exists() for name in ("supervisor.pid", "child.pid")):
                    self._note_dead(server, f"server dropped the request ({error})")
                    continue  # the script never started: safe to retry on a fresh server
                log = _log_tail(server)
                if log:
                    logger.warning("warm server of %s lost a run (%s); its log ends: %s", job_dir, error, log)
                if server.runs_root is None:
                    kill_leftovers(run_dir)  # host pids: the shared server's scripts are visible from here
                else:
                    with server.lock:  # sandbox pids mean nothing on the host: end the whole sandbox instead
                        self._stop_locked(server)
                why = "timeout" if error == "timeout" else f"supervisor lost ({error})"
                return host_killed(limits, why)
            finally:
                shutil.rmtree(run_dir, ignore_errors=True)
        raise ServerUnavailable("the warm server stopped answering twice in a row", permanent=False)

    def _isolate(self, server: _Server) -> dict:
        if server.runs_root is None:
            return dict(self.isolate)
        return {**self.isolate, **sandboxed_isolation()}

    def _note_dead(self, server: _Server, why: str) -> None:
        with server.lock:
            proc = server.proc
            if proc is not None:
                try:
                    proc.wait(timeout=_DEATH_WAIT_S)  # a killed server may take a moment to exit
                except subprocess.TimeoutExpired:
                    return  # server is alive; only this connection failed
            logger.warning("warm script runner died (%s); restarting it", why)
            self._stop_locked(server)

    def _ensure_started(self, server: _Server) -> str:
        with server.lock:
            if server.proc is not None and server.proc.poll() is None and server.dir:
                return str(Path(server.dir, "server.sock"))
            if server.proc is not None:
                logger.warning("warm script runner exited with code %s; restarting it", server.proc.returncode)
                self._stop_locked(server)
            if server.starts > self.max_restarts:
                raise ServerUnavailable(f"restarted {self.max_restarts} times already")
            server.starts += 1
            return self._start_locked(server)

    def _command(self, server: _Server, listener_fd: int, isolate: dict) -> tuple[list[str], dict[str, str], str]:
        """The server's argv, environment and cwd: plain, or inside the job's sandbox."""
        argv = [self.python, "-m", "insightloom.execution._server", str(listener_fd), json.dumps(isolate)]
        assert server.dir is not None
        if server.job_dir is None:
            return argv, child_env(), server.dir
        assert server.runs_root is not None
        mpl = seed_mpl_cache(Path(server.runs_root) / "mpl-server")
        env = sandbox_env({"HOME": server.runs_root, "TMPDIR": server.runs_root, "MPLCONFIGDIR": str(mpl)})
        spec = SandboxSpec(
            writable=(server.job_dir, Path(server.runs_root)),
            cwd=Path(server.runs_root),
            env=env,
            switch_user=False,
        )
        return sandbox_argv(spec, argv), dict(BWRAP_ENV), server.dir

    def _start_locked(self, server: _Server) -> str:
        began = time.perf_counter()
        server.dir = tempfile.mkdtemp(prefix="insightloom-warm-")
        if server.job_dir is not None:
            server.runs_root = make_runs_root()
            give_to_sandbox(Path(server.runs_root))
            give_to_sandbox(server.job_dir)
            server.cgroup = _job_cgroup(server.job_dir)
        sock_path = str(Path(server.dir, "server.sock"))
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(sock_path)
        listener.listen(128)
        log_path = Path(server.dir, "server.log")
        isolate = {**self._isolate(server), "host_uid": os.getuid()}
        argv, env, cwd = self._command(server, listener.fileno(), isolate)
        if server.runs_root is not None:
            give_to_sandbox(Path(server.runs_root))  # the font list just copied in
        try:
            with open(log_path, "wb") as log:
                # bwrap's --die-with-parent follows the *thread* that starts it: start every server from the
                # runner's one long-lived launcher thread, never from a tool call's short-lived worker thread.
                server.proc = self._launcher.call(
                    lambda: start_sandboxed(
                        argv,
                        server.cgroup,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=log,
                        pass_fds=(listener.fileno(),),
                        env=env,
                        cwd=cwd,
                    )
                )
        except OSError as exc:
            self._stop_locked(server)
            raise ServerUnavailable(f"cannot start {self.python}: {exc}") from exc
        finally:
            listener.close()
        ready = _read_ready(server.proc, self.start_timeout_s)
        if ready is None:
            tail = read_tail(log_path, beneath=log_path.parent, max_bytes=1500)
            self._stop_locked(server)
            raise ServerUnavailable(f"server did not become ready in {self.start_timeout_s:g} s. {tail}".strip())
        server.started_ms = (time.perf_counter() - began) * 1000
        where = f"job {server.job_dir.name}'s sandbox" if server.job_dir else "the shared server"
        logger.info("warm script runner ready in %s (pid %s, %.0f ms)", where, server.proc.pid, server.started_ms)
        if ready.get("failed"):
            logger.info("warm script runner could not pre-import: %s", "; ".join(ready["failed"]))
        if ready.get("threads", 1) > 1:
            warn_once(f"warm script runner has {ready['threads']} threads after its imports; forking may be unsafe")
        for note in ready.get("notes", []):
            warn_once(f"script isolation missing: {note}")
        return sock_path

    def _stop_locked(self, server: _Server) -> None:
        proc, server.proc = server.proc, None
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
        if server.cgroup is not None:
            server.cgroup.close()
            server.cgroup = None
        for folder in (server.dir, server.runs_root):
            if folder:
                shutil.rmtree(folder, ignore_errors=True)
        server.dir = server.runs_root = None


def _job_cgroup(job_dir: Path) -> SandboxCgroup | None:
    """A cgroup for one job's sandbox, or None where cgroups cannot be used (the level is then ``bwrap``)."""
    if cgroup_support().version is None:
        return None
    try:
        return SandboxCgroup(f"{job_dir.name}-{os.getpid()}-{time.monotonic_ns()}", Limits().memory_mb, MAX_PIDS)
    except OSError as exc:
        warn_once(f"no cgroup for the script sandbox: {exc}")
        return None


class _Launcher:
    """One long-lived thread that starts every server process, so a parent-death signal tied to the starting
    thread (bwrap's ``--die-with-parent``) fires only when the runner's process ends."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], queue.Queue[tuple[bool, Any]]]] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="insightloom-warm-launcher", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            fn, reply = self._jobs.get()
            try:
                reply.put((True, fn()))
            except BaseException as exc:  # handed back to the caller, raised there
                reply.put((False, exc))

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the launcher thread and return its result (or raise its exception) here."""
        reply: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
        self._jobs.put((fn, reply))
        ok, value = reply.get()
        if not ok:
            raise value
        return value


def _log_tail(server: _Server, size: int = 1500) -> str:
    """The end of the server's own log (its stderr), for a lost run's warning."""
    if not server.dir:
        return ""
    # The server's folder is bound into its sandbox, so a script may have replaced the log with a FIFO or a link.
    return read_tail(Path(server.dir, "server.log"), beneath=Path(server.dir), max_bytes=size).strip()


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
