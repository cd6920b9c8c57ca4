"""Run one script in a fresh, confined child and supervise it until nothing it spawned is left.

This file is shared by both execution paths and therefore uses the standard library only:

- the warm server imports it and calls :func:`supervise` in a per-run process forked from the pre-imported server;
- the cold runner executes it as a plain file (``python _sandbox.py`` with the spec on stdin), so each script pays
  the full interpreter and import cost but gets exactly the same limits and confinement.

Process tree per run::

    supervisor (subreaper, owns the pipes and the clock)
      └── child (setsid, rlimits, Landlock, runs the script with runpy; pid 1 of its own pid namespace if allowed)
            └── anything the script spawns, daemonized or not

The supervisor never trusts the child to report on itself: it reads the exit status and CPU time from the kernel,
enforces the wall clock, and afterwards kills and reaps every remaining descendant.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import sys
import time
import traceback

try:
    from . import _kernel as kernel
except ImportError:  # executed as a file by the cold runner: the sibling module is on sys.path[0]
    import _kernel as kernel  # type: ignore[no-redef]

_READ_CHUNK = 65536
_DRAIN_LIMIT_S = 2.0
_EXEC_DIR = os.path.dirname(os.path.abspath(__file__))


class _Capture:
    """Keep the first and last ``cap/2`` bytes of a stream and count the rest, in bounded memory."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def as_dict(self) -> dict:
        kept = len(self.head) + len(self.tail)
        return {
            "head": self.head.decode("utf-8", "replace"),
            "tail": self.tail.decode("utf-8", "replace"),
            "total_bytes": self.total,
            "cut_bytes": self.total - kept,
        }


# ----------------------------------------------------------------------------------------------- the child


def _reset_signals() -> None:
    """Give the script the signal dispositions a fresh interpreter would have."""
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _on_cpu_limit(signum: int, frame: object) -> None:
    # As pid 1 of a pid namespace the default SIGXCPU action is ignored, so end the run ourselves.
    os.write(2, b"\nCPU time limit exceeded\n")
    os._exit(152)


def _set_rlimits(limits: dict) -> None:
    import resource

    mb = 1024 * 1024
    cpu = max(int(limits["cpu_s"]), 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["file_size_mb"] * mb),) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (int(limits["memory_mb"] * mb),) * 2)


def _redirect_stdio(out_w: int, err_w: int, status_w: int) -> None:
    """Point fds 0/1/2 at /dev/null and our pipes, keep the status pipe as fd 3, close everything else."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    if status_w != 3:
        os.dup2(status_w, 3)
    os.closerange(4, 65536)  # listening socket, server stdin, pipes, log files: none may leak into the script
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the process
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)  # noqa: SIM115


def _prepare_environment(spec: dict) -> None:
    """cwd, environment and sys.path exactly as documented for analysis scripts."""
    job_dir, code_dir, run_dir = spec["job_dir"], spec["code_dir"], spec["run_dir"]
    tmp_dir = os.path.join(run_dir, "tmp")
    mpl_dir = os.path.join(run_dir, "mpl")
    os.makedirs(tmp_dir, exist_ok=True)
    os.makedirs(mpl_dir, exist_ok=True)
    os.chdir(job_dir)
    extra = [code_dir, *spec.get("extra_sys_path", [])]
    env = os.environ
    env["INSIGHTLOOM_JOB_DIR"] = job_dir
    env["MPLBACKEND"] = "Agg"
    env["TMPDIR"] = tmp_dir
    env["MPLCONFIGDIR"] = mpl_dir
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(extra)
    for key in [k for k in env if k.startswith("INSIGHTLOOM_RUNNER_")]:
        del env[key]
    import tempfile

    tempfile.tempdir = None  # recompute from TMPDIR on first use
    keep = [p for p in sys.path if p and os.path.abspath(p) not in (_EXEC_DIR, os.path.abspath(os.sep))]
    keep = [p for p in keep if os.path.abspath(p) != os.path.abspath(spec.get("server_cwd", "/nonexistent"))]
    sys.path[:] = extra + [p for p in keep if p not in extra]
    sys.argv = [spec["script"]]
    sys.dont_write_bytecode = True
    _seed_mpl_cache(spec.get("mpl_cache"), mpl_dir)


def _seed_mpl_cache(src: str | None, dest: str) -> None:
    """Copy matplotlib's font list so a cold script does not rebuild it (it cannot write the shared cache)."""
    if not src or "matplotlib" in sys.modules or not os.path.isdir(src):
        return
    import shutil

    for name in os.listdir(src):
        if name.startswith("fontlist") and name.endswith(".json"):
            shutil.copyfile(os.path.join(src, name), os.path.join(dest, name))


def _reset_inherited_state() -> None:
    """Undo what a fork from the warm server would otherwise share between scripts."""
    random_mod = sys.modules.get("random")
    if random_mod is not None:
        random_mod.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()  # legacy global RandomState would repeat the server's sequence in every child
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    logging_mod = sys.modules.get("logging")
    if logging_mod is not None:
        logging_mod.root.handlers.clear()
        logging_mod.root.setLevel(logging_mod.WARNING)


def _confine(spec: dict) -> list[str]:
    """Apply Landlock (writes only in the job and run folders); return notes about what is missing."""
    notes = []
    isolate = spec["isolate"]
    if isolate.get("filesystem", True) or isolate.get("network", True):
        writable = [spec["job_dir"], spec["run_dir"]] if isolate.get("filesystem", True) else ["/"]
        _features, error = kernel.landlock_confine(writable, deny_tcp=isolate.get("network", True), scope=True)
        if error:
            notes.append(f"landlock: {error}")
    return notes


def _run_child(spec: dict, out_w: int, err_w: int, status_w: int) -> int:
    """Body of the forked child: set up, run the script as __main__, return its exit code."""
    os.setsid()
    _redirect_stdio(out_w, err_w, status_w)
    _reset_signals()
    signal.signal(signal.SIGXCPU, _on_cpu_limit)
    _prepare_environment(spec)
    _reset_inherited_state()
    notes = _confine(spec)
    _set_rlimits(spec["limits"])
    # Report confinement before any script code runs, then close the channel so the script cannot use it.
    os.write(3, json.dumps(notes).encode())
    os.close(3)
    import runpy

    try:
        runpy.run_path(spec["script"], run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:  # noqa: BLE001 - report every script failure as a traceback, like python would
        traceback.print_exc()
        code = 1
    _finish_threads()
    return code


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _finish_threads() -> None:
    """Wait for non-daemon threads and flush, as interpreter shutdown would."""
    try:
        import threading

        threading._shutdown()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - shutdown is best effort; the supervisor still cleans up
        pass
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


# ------------------------------------------------------------------------------------------ the supervisor


def _children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` from /proc (all threads), or [] when it is gone."""
    found: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                found.extend(int(x) for x in fh.read().split())
        except OSError:
            continue
    return found


def _descendants(root: int) -> list[int]:
    seen: list[int] = []
    stack = _children_of(root)
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.append(pid)
        stack.extend(_children_of(pid))
    return seen


def _reap_nohang() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_descendants() -> int:
    """Kill and reap everything below this (subreaper) process; return how many processes were killed.

    Killing a parent re-parents its children to us, so repeat until a scan finds nobody. A process forked while we
    were scanning shows up in the next round.
    """
    me = os.getpid()
    killed = 0
    for _ in range(200):
        victims = _descendants(me)
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        for pid in set(victims) & set(_children_of(me)):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        _reap_nohang()
    _reap_nohang()
    return killed


def _enter_namespaces(isolate: dict) -> tuple[dict, list[str]]:
    """Network and pid namespaces for the child-to-be; report what could not be had."""
    active: dict = {"netns": False, "pidns": False, "subreaper": False}
    notes: list[str] = []
    error = kernel.set_child_subreaper()
    active["subreaper"] = error is None
    if error:
        notes.append(f"subreaper: {error}")
    if isolate.get("network", True):
        error = kernel.unshare(kernel.CLONE_NEWNET)
        active["netns"] = error is None
        if error:
            notes.append(f"network namespace: {error}")
    if isolate.get("pidns", True):
        error = kernel.unshare(kernel.CLONE_NEWPID)
        active["pidns"] = error is None
        if error:
            notes.append(f"pid namespace: {error}")
    return active, notes


def _watch(pid: int, pipes: dict[int, _Capture], status_r: int, deadline: float) -> tuple[bool, bytes]:
    """Pump output until the child exits or the deadline passes; return (timed_out, status bytes)."""
    sel = selectors.DefaultSelector()
    pidfd = os.pidfd_open(pid)
    sel.register(pidfd, selectors.EVENT_READ, "exit")
    for fd in pipes:
        sel.register(fd, selectors.EVENT_READ, "out")
    sel.register(status_r, selectors.EVENT_READ, "status")
    status = b""
    timed_out = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            events = sel.select(remaining)
            done = False
            for key, _mask in events:
                if key.data == "exit":
                    done = True
                    continue
                data = os.read(key.fd, _READ_CHUNK)
                if not data:
                    sel.unregister(key.fd)
                elif key.data == "status":
                    status += data
                else:
                    pipes[key.fd].feed(data)
            if done:
                break
    finally:
        sel.close()
        os.close(pidfd)
    return timed_out, status


def _drain(pipes: dict[int, _Capture]) -> None:
    """Read what is left in the pipes; every writer is dead by now, so EOF comes quickly."""
    sel = selectors.DefaultSelector()
    for fd in pipes:
        sel.register(fd, selectors.EVENT_READ)
    end = time.monotonic() + _DRAIN_LIMIT_S
    try:
        while sel.get_map() and time.monotonic() < end:
            for key, _mask in sel.select(max(end - time.monotonic(), 0)):
                data = os.read(key.fd, _READ_CHUNK)
                if data:
                    pipes[key.fd].feed(data)
                else:
                    sel.unregister(key.fd)
    finally:
        sel.close()


def _write_pid(run_dir: str, name: str, pid: int) -> None:
    # The host reads these only if this supervisor stops answering, to kill what it left behind.
    with open(os.path.join(run_dir, name), "w") as fh:
        fh.write(str(pid))


def supervise(spec: dict) -> dict:
    """Fork the child, enforce the wall clock, clean up every descendant and describe what happened.

    Must run in a process dedicated to this one run (it becomes a subreaper and enters namespaces).
    """
    started = time.monotonic()
    limits = spec["limits"]
    active, notes = _enter_namespaces(spec["isolate"])
    phases = {"namespaces": time.monotonic()}
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    status_r, status_w = os.pipe()
    _write_pid(spec["run_dir"], "supervisor.pid", os.getpid())
    pid = os.fork()
    if pid == 0:  # child
        code = 70
        try:
            for fd in (out_r, err_r, status_r):
                os.close(fd)
            code = _run_child(spec, out_w, err_w, status_w)
        except BaseException:  # noqa: BLE001 - setup failed before the script ran
            traceback.print_exc()
        finally:
            os._exit(code)
    for fd in (out_w, err_w, status_w):
        os.close(fd)
    _write_pid(spec["run_dir"], "child.pid", pid)
    phases["forked"] = time.monotonic()
    captures = {out_r: _Capture(limits["max_output_bytes"]), err_r: _Capture(limits["max_output_bytes"])}
    timed_out, status = _watch(pid, captures, status_r, started + float(limits["timeout_s"]))
    if timed_out:
        _kill_quietly(pid)
    phases["exited"] = time.monotonic()
    _pid, wait_status, usage = os.wait4(pid, 0)
    leftovers = kill_descendants()
    _drain(captures)
    phases["cleaned"] = time.monotonic()
    for fd in (out_r, err_r, status_r):
        os.close(fd)
    try:
        notes.extend(json.loads(status.decode() or "[]"))
    except ValueError:
        notes.append("child did not report its confinement")
    return {
        "exit_code": os.waitstatus_to_exitcode(wait_status),
        "timed_out": timed_out,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "max_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "duration_s": round(time.monotonic() - started, 4),
        "stdout": captures[out_r].as_dict(),
        "stderr": captures[err_r].as_dict(),
        "leftovers_killed": leftovers,
        "confined": bool(status),
        "active": active,
        "notes": notes,
        "phases_ms": {k: round((v - started) * 1000, 2) for k, v in phases.items()},
    }


def _kill_quietly(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def probe() -> dict:
    """Try each isolation feature in this (throwaway) process and report which ones work."""
    isolate = {"network": True, "pidns": True, "filesystem": True}
    active, notes = _enter_namespaces(isolate)
    abi = kernel.landlock_abi()
    return {"active": active, "notes": notes, "landlock_abi": abi, "euid": os.geteuid()}


def main() -> int:
    """Cold entry point: spec JSON on stdin, result JSON on stdout."""
    if sys.argv[1:] == ["--probe"]:
        result = probe()
    else:
        spec = json.loads(sys.stdin.read())
        try:
            result = supervise(spec)
        except BaseException:  # noqa: BLE001 - turn any supervisor failure into a reportable result
            result = {"runner_error": traceback.format_exc()}
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
