"""The warm fork server: pay the pandas/numpy/matplotlib import cost once, fork a fresh child per script.

Started by :class:`insightloom.execution.warm.WarmRunner` as
``python -m insightloom.execution._server <listening-socket-fd> <isolation JSON>``. It stays single-threaded (BLAS
and jemalloc background threads are disabled through the environment before import, and it never starts a thread)
so that forking is safe, and it holds no job state: every request carries its own job folder.

Per request, the script runs in a *spare* child forked ahead of time in its own pid namespace (the fork and the
job-independent setup are off the caller's critical path). Where pid namespaces are not allowed, a per-run
supervisor is forked instead (``_sandbox.supervise``: subreaper + descendant sweep). The server exits when the
host closes its stdin, killing any script still running.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import selectors
import socket
import struct
import sys
import time
import traceback

from insightloom.execution import _kernel as kernel
from insightloom.execution import _sandbox

# Modules every analysis script needs; the last one is optional because another module provides it.
PRELOAD = (
    "numpy",
    "pandas",
    "matplotlib",
    "matplotlib.pyplot",
    "pyarrow",
    "pyarrow.parquet",
    "duckdb",
    "insightloom.analysis_utils",
    "insightloom.validation.script_checks",  # the tracked checks run at every script end
)
_MAX_SPEC_BYTES = 1 << 20


def _log(message: str) -> None:
    # The server does not configure `logging`: children would inherit handlers pointing at the server's stderr.
    sys.stderr.write(f"insightloom warm server: {message}\n")
    sys.stderr.flush()


def preload() -> list[str]:
    """Import the heavy modules and exercise their first-call paths; return the modules that failed."""
    failed = []
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception as exc:
            failed.append(f"{name} ({type(exc).__name__}: {exc})")
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib

        matplotlib.use("Agg")
        _warm_matplotlib()
    if "pandas" in sys.modules:
        import pandas as pd

        frame = pd.DataFrame({"k": [1, 2, 1], "v": [1.0, 2.0, 3.0]})
        frame.groupby("k")["v"].sum()
    return failed


def _warm_matplotlib() -> None:
    """Draw once so fonts and the Agg renderer are loaded in every child, then drop the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_title("warm")
    fig.canvas.draw()
    plt.close("all")


def _thread_count() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


class _Server:
    """Single-threaded event loop: accepts requests, forks children, pumps their output, enforces deadlines.

    Fast path (a pid namespace per script is possible): the script child is forked straight from this process,
    as pid 1 of a fresh pid namespace, so one fork per script and the kernel kills everything it spawned when it
    ends. Otherwise a per-run supervisor is forked (``_sandbox.supervise``: subreaper + descendant sweep).
    """

    def __init__(self, listener: socket.socket, isolate: dict) -> None:
        self.listener = listener
        self.host_uid = isolate.get("host_uid")
        self.in_sandbox = bool(isolate.get("own_userns") or isolate.get("in_sandbox"))
        self.network = bool(isolate.get("network", True))
        self.sel = selectors.DefaultSelector()
        self.sel.register(listener, selectors.EVENT_READ, ("accept", None))
        self.sel.register(sys.stdin.fileno(), selectors.EVENT_READ, ("stdin", None))
        self.runs: dict[_sandbox.Run, socket.socket | None] = {}
        self.spare: _sandbox.Spare | None = None
        self.pidns_ok = True

    def refill_spare(self) -> None:
        """Fork the next script's process now, in its own pid namespace, while nobody is waiting for it."""
        if self.spare is not None or not self.pidns_ok:
            return
        error = kernel.new_pid_namespace_for_next_child()
        if error:
            self.pidns_ok = False
            _log(f"no pid namespace per script ({error}); using a supervisor process per script")
            kernel.reset_pid_namespace_for_children()
            return
        self.spare = _sandbox.Spare(network=self.network)

    def launch_fast(self, spec: dict) -> _sandbox.Run | None:
        """Hand ``spec`` to the spare (or a freshly forked one if the spare died); None if pid namespaces fail."""
        for _attempt in range(2):
            self.refill_spare()
            spare, self.spare = self.spare, None
            if spare is None:
                return None
            if not spare.fits(spec):
                spare.discard()
                if kernel.new_pid_namespace_for_next_child() is not None:
                    return None
                spare = _sandbox.Spare(network=bool(spec["isolate"].get("network", True)))
            if spare.start(spec):
                return _sandbox.Run(spec, spare)
            spare.discard()
        return None

    def close(self) -> None:
        for run in self.runs:
            if run.exited_at is None:
                run.kill()  # nobody will collect the result: do not leave the script running
        if self.spare is not None:
            self.spare.discard()
            self.spare = None

    def serve(self) -> None:
        while True:
            for key, _mask in self.sel.select(self._next_timeout()):
                kind, item = key.data
                if kind == "stdin" and not os.read(key.fd, 1024):
                    self.close()
                    return  # the host closed our stdin: it is gone or shutting us down
                if kind == "accept":
                    self._accept()
                elif kind == "exit":
                    self.sel.unregister(key.fd)
                    item.reap()
                elif kind == "pipe" and not item.feed(key.fd):
                    self.sel.unregister(key.fd)
                elif kind == "conn":
                    self._host_event(key.fileobj, item)  # type: ignore[arg-type]  # registered as a socket
                elif kind == "supervisor":
                    self.sel.unregister(key.fd)
                    os.close(key.fd)
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(item, 0)
            self._enforce_deadlines()

    def _next_timeout(self) -> float | None:
        now = time.monotonic()
        ends = [r.deadline if r.exited_at is None else r.exited_at + _sandbox.DRAIN_LIMIT_S for r in self.runs]
        return max(min(ends) - now, 0.0) if ends else None

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for run in list(self.runs):
            if run.exited_at is None:
                if now >= run.deadline and not run.timed_out:
                    run.kill()
            elif not run.open_fds or now >= run.exited_at + _sandbox.DRAIN_LIMIT_S:
                self._finish(run)

    def _host_is_calling(self, conn: socket.socket) -> bool:
        """Only the host may send specs: check the caller's uid and pid (``SO_PEERCRED``), never trust the path.

        In a sandbox the host is outside our pid namespace, so it shows pid 0, and every script (inside it, or in
        a namespace nested in it) shows a real pid. Outside a sandbox the host is our parent, with its own uid.
        """
        pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if self.in_sandbox:
            return pid == 0
        return pid == os.getppid() and (self.host_uid is None or uid == self.host_uid)

    def _accept(self) -> None:
        try:
            conn, _addr = self.listener.accept()
        except BlockingIOError:
            return
        if not self._host_is_calling(conn):
            _log("refused a connection that did not come from the host")
            conn.close()
            return
        spec, early = _read_spec(conn)
        if spec is None:
            conn.close()
            return
        if early:  # the host already asked to stop (its job folder was over quota before the script began)
            _send(conn, _not_started())
            conn.close()
            return
        run = None
        if spec["isolate"].get("pidns", True) and self.pidns_ok:
            try:
                run = self.launch_fast(spec)
            except OSError as exc:
                _send(conn, {"runner_error": f"cannot start the script: {exc}"})
                conn.close()
                return
        if run is None:
            kernel.reset_pid_namespace_for_children()
            self._start_supervisor(conn, spec)
            return
        run.active = {"pidns": True, "subreaper": False}
        self.runs[run] = conn
        self.sel.register(run.pidfd, selectors.EVENT_READ, ("exit", run))
        for fd in run.open_fds:
            self.sel.register(fd, selectors.EVENT_READ, ("pipe", run))
        self.sel.register(conn, selectors.EVENT_READ, ("conn", run))

    def _host_event(self, conn: socket.socket, run: _sandbox.Run) -> None:
        """The host sends a byte to stop the script (the job folder went over quota; the reply still goes back), or
        closes its end early (it gave up: the script is killed and nobody gets a reply)."""
        if run.on_control(conn.fileno()):
            return
        self.sel.unregister(conn)
        self.runs[run] = None
        conn.close()

    def _finish(self, run: _sandbox.Run) -> None:
        for fd in list(run.open_fds):
            self.sel.unregister(fd)
        conn = self.runs.pop(run)
        result = run.result()
        if conn is not None:
            self.sel.unregister(conn)
            _send(conn, result)
            conn.close()
        self.refill_spare()  # after the reply, so the fork is not on anyone's critical path

    def _start_supervisor(self, conn: socket.socket, spec: dict) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid:
            conn.close()
            self.sel.register(os.pidfd_open(pid), selectors.EVENT_READ, ("supervisor", pid))
            return
        code = 0
        try:
            self.listener.close()
            self.sel.close()
            for fd in self.spare.parent_fds() if self.spare is not None else []:
                os.close(fd)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            try:
                result = _sandbox.supervise(spec, conn.fileno())
            except BaseException:
                result = {"runner_error": traceback.format_exc()}
            _send(conn, result)
        except BaseException:
            code = 1
        finally:
            os._exit(code)


def _read_spec(conn: socket.socket) -> tuple[dict | None, bytes]:
    """The host sends one JSON line right after connecting; return it and any bytes after it (a stop request)."""
    try:
        conn.setblocking(True)
        conn.settimeout(10)
        data = b""
        while b"\n" not in data and len(data) < _MAX_SPEC_BYTES:
            chunk = conn.recv(65536)
            if not chunk:
                return None, b""
            data += chunk
        conn.settimeout(None)
        line, _newline, rest = data.partition(b"\n")
        return json.loads(line.decode()), rest
    except (OSError, ValueError) as exc:
        _log(f"bad request: {exc}")
        return None, b""


def _not_started() -> dict:
    """The report of a run the host stopped before its script began."""
    empty = _sandbox.OutputCapture(1).as_dict()
    return {"exit_code": None, "timed_out": False, "stopped": True, "cpu_s": 0.0, "stdout": empty, "stderr": empty}


def _send(conn: socket.socket, result: dict) -> None:
    with contextlib.suppress(OSError):
        conn.settimeout(30)
        conn.sendall(json.dumps(result).encode() + b"\n")


def main() -> int:
    """Entry point: ``python -m insightloom.execution._server <listening fd> [<isolation JSON>]``."""
    listener = socket.socket(fileno=int(sys.argv[1]))
    listener.setblocking(False)
    isolate = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    notes: list[str] = []
    if isolate.get("own_userns"):  # in the job's sandbox: before any import can start a thread
        error = kernel.enter_own_user_namespace()
        if error:
            notes.append(f"user namespace inside the sandbox: {error}")
        os.environ["INSIGHTLOOM_IN_USERNS"] = "1"
    failed = preload()
    for item in failed:
        _log(f"could not pre-import {item}; scripts will import it themselves")
    threads = _thread_count()
    if threads > 1:
        _log(f"{threads} threads after pre-import; forking may be unsafe (check *_NUM_THREADS settings)")
    gc.freeze()  # keep the collector from touching (and so copying) every pre-imported object in each child
    sys.stdout.write(json.dumps({"ready": True, "threads": threads, "failed": failed, "notes": notes}) + "\n")
    sys.stdout.flush()
    server = _Server(listener, isolate)
    server.refill_spare()
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
