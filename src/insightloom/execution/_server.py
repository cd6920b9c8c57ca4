"""The warm fork server: pay the pandas/numpy/matplotlib import cost once, fork a fresh child per script.

Started by :class:`insightloom.execution.runners.WarmRunner` as
``python -m insightloom.execution._server <listening-socket-fd>``. It stays single-threaded (BLAS and jemalloc
background threads are disabled through the environment before import) so that forking is safe, and it holds no
job state: every request carries its own job folder, and each request is served by a freshly forked supervisor
(see ``_sandbox.supervise``). It exits when the host closes its stdin.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
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
        except Exception as exc:  # noqa: BLE001 - a missing optional module must not stop the server
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


def _serve_one(conn: socket.socket) -> None:
    """In the forked per-run supervisor: read the spec, run it, answer, exit."""
    try:
        conn.settimeout(30)
        data = b""
        while not data.endswith(b"\n") and len(data) < _MAX_SPEC_BYTES:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        spec = json.loads(data.decode())
        conn.settimeout(None)
        try:
            result = _sandbox.supervise(spec)
        except BaseException:  # noqa: BLE001 - report, never hang the host
            result = {"runner_error": traceback.format_exc()}
        conn.sendall(json.dumps(result).encode() + b"\n")
    finally:
        conn.close()


def _reap(signum: int, frame: object) -> None:
    _sandbox._reap_nohang()


def serve(listener: socket.socket) -> None:
    """Accept connections until stdin closes; fork one supervisor per connection."""
    signal.signal(signal.SIGCHLD, _reap)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    while True:
        for key, _mask in sel.select():
            if key.data == "stdin":
                if not os.read(key.fd, 1024):
                    return  # host went away
                continue
            try:
                conn, _addr = listener.accept()
            except BlockingIOError:
                continue
            _fork_supervisor(conn, listener)


def _fork_supervisor(conn: socket.socket, listener: socket.socket) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        conn.close()
        return
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the supervisor waits for its own child
        listener.close()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        _serve_one(conn)
    except BaseException:  # noqa: BLE001
        code = 1
    finally:
        os._exit(code)


def main() -> int:
    """Entry point: ``python -m insightloom.execution._server <fd>``."""
    listener = socket.socket(fileno=int(sys.argv[1]))
    listener.setblocking(False)
    error = kernel.set_child_subreaper()  # orphans of a crashed supervisor come back here to be reaped
    if error:
        _log(f"cannot become a child subreaper: {error}")
    failed = preload()
    for item in failed:
        _log(f"could not pre-import {item}; scripts will import it themselves")
    threads = _thread_count()
    if threads > 1:
        _log(f"{threads} threads after pre-import; forking may be unsafe (check *_NUM_THREADS settings)")
    sys.stdout.write(json.dumps({"ready": True, "threads": threads, "failed": failed}) + "\n")
    sys.stdout.flush()
    serve(listener)
    return 0


if __name__ == "__main__":
    sys.exit(main())
