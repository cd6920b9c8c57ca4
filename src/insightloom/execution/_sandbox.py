"""Run one script in a fresh, confined child and supervise it until nothing it spawned is left.

This file is shared by both execution paths and therefore uses the standard library only:

- the warm server imports it: its event loop supervises many :class:`Run` s at once, each in a pre-forked
  :class:`Spare` that is pid 1 of its own pid namespace (when pid namespaces are not allowed it forks a per-run
  process that calls :func:`supervise`);
- the cold runner executes it as a plain file (``python _sandbox.py`` with the spec on stdin), so each script pays
  the full interpreter and import cost but gets exactly the same limits and confinement.

Process tree per run::

    supervisor (warm server, or a subreaper per run; owns the pipes and the clock)
      └── child (setsid, rlimits, network namespace, Landlock, runs the script with runpy; pid 1 of its own pid
            │    namespace where allowed, so the kernel kills everything below it when it ends)
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
    from ._child import prepare_generic, read_spec, run_prepared
except ImportError:  # executed as a file by the cold runner: sibling modules are on sys.path[0]
    import _kernel as kernel  # type: ignore[no-redef, import-not-found]
    from _child import prepare_generic, read_spec, run_prepared  # type: ignore[no-redef, import-not-found]

_READ_CHUNK = 65536
DRAIN_LIMIT_S = 2.0


class OutputCapture:
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
    """Subreaper and a pid namespace for the child-to-be; report what could not be had."""
    active: dict = {"pidns": False, "subreaper": False}
    notes: list[str] = []
    error = kernel.set_child_subreaper()
    active["subreaper"] = error is None
    if error:
        notes.append(f"subreaper: {error}")
    if isolate.get("pidns", True):
        error = kernel.unshare(kernel.CLONE_NEWPID)
        active["pidns"] = error is None
        if error:
            notes.append(f"pid namespace: {error}")
    return active, notes


class Run:
    """One running script as its supervisor sees it: pipes, bounded captures, clock and exit status.

    Used both by :func:`supervise` (a process dedicated to one run) and by the warm server's event loop, which
    supervises many runs at once.
    """

    def __init__(self, spec: dict, child: Spare) -> None:
        """Adopt ``child``, a :class:`Spare` that has already been sent ``spec``."""
        self.spec = spec
        self.started = time.monotonic()
        limits = spec["limits"]
        self.deadline = self.started + float(limits["timeout_s"])
        self.pid = child.pid
        self.out_r, self.err_r, self.status_r = child.out_r, child.err_r, child.status_r
        cap = limits["max_output_bytes"]
        self.captures = {self.out_r: OutputCapture(cap), self.err_r: OutputCapture(cap)}
        self.status = b""
        self.timed_out = False
        self.stopped = False
        self.wait_status: int | None = None
        self.cpu_s = 0.0
        self.max_rss_mb = 0.0
        self.exited_at: float | None = None
        self.notes: list[str] = []
        self.active: dict = {}
        self.leftovers = 0
        self.open_fds = {self.out_r, self.err_r, self.status_r}
        self.pidfd = os.pidfd_open(self.pid)
        _write_pid(spec["run_dir"], "child.pid", self.pid)

    def feed(self, fd: int) -> bool:
        """Read once from one of our pipes; False (and the fd closed) at EOF."""
        data = os.read(fd, _READ_CHUNK)
        if not data:
            os.close(fd)
            self.open_fds.discard(fd)
            return False
        if fd == self.status_r:
            self.status += data
        else:
            self.captures[fd].feed(data)
        return True

    def kill(self) -> None:
        """Wall clock exceeded: SIGKILL the child (with a pid namespace, everything it spawned dies too)."""
        self.timed_out = True
        _kill_quietly(self.pid)

    def stop(self) -> None:
        """The host asked (the job folder went over its quota): end the run as the clock would, not as a timeout."""
        self.stopped = True
        _kill_quietly(self.pid)

    def on_control(self, fd: int) -> bool:
        """Read the host's control channel once: a message stops the run, EOF (the host gave up) kills it.

        Returns:
            False at EOF (stop watching the channel).
        """
        try:
            data = os.read(fd, 64)
        except OSError:
            data = b""
        if self.exited_at is None:
            if data:
                self.stop()
            else:
                self.kill()  # nobody will collect the result: do not leave the script running
        return bool(data)

    def reap(self) -> None:
        """Collect the exit status and CPU usage from the kernel (the child's word is not needed)."""
        _pid, self.wait_status, usage = os.wait4(self.pid, 0)
        self.cpu_s = round(usage.ru_utime + usage.ru_stime, 3)
        self.max_rss_mb = round(usage.ru_maxrss / 1024, 1)
        self.exited_at = time.monotonic()
        os.close(self.pidfd)

    def close(self) -> None:
        for fd in list(self.open_fds):
            os.close(fd)
        self.open_fds.clear()

    def result(self) -> dict:
        self.close()
        try:
            self.notes.extend(json.loads(self.status.decode() or "[]"))
        except ValueError:
            self.notes.append("child did not report its confinement")
        return {
            "exit_code": os.waitstatus_to_exitcode(self.wait_status) if self.wait_status is not None else None,
            "timed_out": self.timed_out,
            "stopped": self.stopped,
            "cpu_s": self.cpu_s,
            "max_rss_mb": self.max_rss_mb,
            "duration_s": round((self.exited_at or time.monotonic()) - self.started, 4),
            "stdout": self.captures[self.out_r].as_dict(),
            "stderr": self.captures[self.err_r].as_dict(),
            "leftovers_killed": self.leftovers,
            "confined": bool(self.status),
            "active": self.active,
            "notes": self.notes,
        }


class Spare:
    """A child forked ahead of time that waits for its spec on a pipe.

    The warm server keeps one ready so that the fork and the job-independent setup (session, descriptors, signal
    dispositions, random seeds, network namespace) happen while nobody waits. The spare holds no descriptor but
    its own pipes, so it can never keep another job's connection open.

    Args:
        network: Enter a fresh network namespace (no network) before waiting.
    """

    def __init__(self, *, network: bool) -> None:
        self.network = network
        self.out_r, out_w = os.pipe()
        self.err_r, err_w = os.pipe()
        self.status_r, status_w = os.pipe()
        spec_r, self.spec_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            _spare_entry(spec_r, out_w, err_w, status_w, network=network)
        for fd in (out_w, err_w, status_w, spec_r):
            os.close(fd)

    def fits(self, spec: dict) -> bool:
        return bool(spec["isolate"].get("network", True)) == self.network

    def start(self, spec: dict) -> bool:
        """Send the spec; False when the spare is gone (then discard it)."""
        try:
            data = json.dumps(spec).encode()
            while data:
                data = data[os.write(self.spec_w, data) :]
            os.close(self.spec_w)
            self.spec_w = -1
            return True
        except OSError:
            return False

    def parent_fds(self) -> list[int]:
        return [fd for fd in (self.out_r, self.err_r, self.status_r, self.spec_w) if fd >= 0]

    def discard(self) -> None:
        """Kill an unused spare and release its descriptors."""
        _kill_quietly(self.pid)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        for fd in self.parent_fds():
            with contextlib.suppress(OSError):
                os.close(fd)


def _spare_entry(spec_r: int, out_w: int, err_w: int, status_w: int, *, network: bool) -> None:
    """First code of the forked child: generic setup, wait for the spec, run it; never returns."""
    code = 70
    try:
        notes = prepare_generic(out_w, err_w, status_w, spec_r, network=network)
        spec = read_spec()
        code = run_prepared(spec, notes) if spec else 0  # no spec: the server went away first
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def _write_pid(run_dir: str, name: str, pid: int) -> None:
    # The host reads these only if the supervisor stops answering, to kill what it left behind.
    with open(os.path.join(run_dir, name), "w") as fh:
        fh.write(str(pid))


def _kill_quietly(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _watch(run: Run, control: int | None = None) -> None:
    """Pump output until the child exits or its deadline passes (then kill it), or the host stops it."""
    with selectors.DefaultSelector() as sel:
        sel.register(run.pidfd, selectors.EVENT_READ, "exit")
        if control is not None:
            sel.register(control, selectors.EVENT_READ, "control")
        for fd in run.open_fds:
            sel.register(fd, selectors.EVENT_READ, "pipe")
        while True:
            remaining = run.deadline - time.monotonic()
            if remaining <= 0:
                run.kill()
                return
            events = sel.select(remaining)
            if any(key.data == "exit" for key, _mask in events):
                return
            for key, _mask in events:
                if key.data == "control":
                    if not run.on_control(key.fd):
                        sel.unregister(key.fd)
                elif not run.feed(key.fd):
                    sel.unregister(key.fd)


def drain(run: Run) -> None:
    """Read what is left in the pipes; every writer is dead by now, so EOF comes quickly."""
    end = time.monotonic() + DRAIN_LIMIT_S
    with selectors.DefaultSelector() as sel:
        for fd in run.open_fds:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map() and time.monotonic() < end:
            for key, _mask in sel.select(max(end - time.monotonic(), 0)):
                if not run.feed(key.fd):
                    sel.unregister(key.fd)


def supervise(spec: dict, control: int | None = None) -> dict:
    """Fork the child, enforce the wall clock, clean up every descendant and describe what happened.

    Must run in a process dedicated to this one run: it becomes a subreaper and enters a pid namespace.

    Args:
        spec: The run's spec.
        control: A descriptor from the host: any message on it stops the script (the job-folder quota), EOF
            kills it (the host gave up waiting).
    """
    early: list[str] = []
    if spec["isolate"].get("own_userns") and os.environ.get("INSIGHTLOOM_IN_USERNS") != "1":
        error = kernel.enter_own_user_namespace()  # inside bubblewrap: regain namespaces without host privilege
        if error:
            early.append(f"user namespace: {error}")
        os.environ["INSIGHTLOOM_IN_USERNS"] = "1"
    active, notes = _enter_namespaces(spec["isolate"])
    notes = early + notes
    _write_pid(spec["run_dir"], "supervisor.pid", os.getpid())
    child = Spare(network=bool(spec["isolate"].get("network", True)))
    if not child.start(spec):
        child.discard()
        raise OSError("the script process died before it received its spec")
    run = Run(spec, child)
    run.active, run.notes = active, notes
    _watch(run, control)
    run.reap()
    run.leftovers = kill_descendants()
    drain(run)
    return run.result()


def probe() -> dict:
    """Try each isolation feature in this (throwaway) process and report which ones work."""
    active, notes = _enter_namespaces({"pidns": True})
    error = kernel.unshare(kernel.CLONE_NEWNET)
    active["netns"] = error is None
    if error:
        notes.append(f"network namespace: {error}")
    return {"active": active, "notes": notes, "landlock_abi": kernel.landlock_abi(), "euid": os.geteuid()}


def main() -> int:
    """Cold entry point: spec JSON on stdin, result JSON on stdout."""
    if sys.argv[1:] == ["--probe"]:
        result = probe()
    else:
        spec = json.loads(sys.stdin.read())
        try:
            result = supervise(spec, spec.get("control_fd"))
        except BaseException:
            result = {"runner_error": traceback.format_exc()}
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
