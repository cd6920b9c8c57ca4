"""The forked child's side of a run: confine, set limits, run the script as ``__main__``.

Stdlib only (the cold runner executes ``_sandbox.py`` as a plain file, which imports this module as a sibling).
Order matters: output is redirected and inherited descriptors closed first, then cwd/env/sys.path are set, then
confinement (network namespace, Landlock) and rlimits, and only then does script code run.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import sys
import traceback

try:
    from . import _kernel as kernel
except ImportError:  # executed via the cold runner's file entry point: siblings are on sys.path[0]
    import _kernel as kernel  # type: ignore[no-redef, import-not-found]

_EXEC_DIR = os.path.dirname(os.path.abspath(__file__))
CPU_LIMIT_EXIT = 152


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
    os._exit(CPU_LIMIT_EXIT)


def _set_rlimits(limits: dict) -> None:
    import resource

    mb = 1024 * 1024
    cpu = max(int(limits["cpu_s"]), 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["file_size_mb"] * mb),) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (int(limits["memory_mb"] * mb),) * 2)


STATUS_FD = 3
SPEC_FD = 4


def _redirect_stdio(out_w: int, err_w: int, status_w: int, spec_r: int) -> None:
    """0 = /dev/null, 1/2 = our pipes, 3 = status pipe, 4 = spec pipe; close everything else we inherited."""
    wanted = {0: os.open(os.devnull, os.O_RDONLY), 1: out_w, 2: err_w, STATUS_FD: status_w, SPEC_FD: spec_r}
    # Park the sources above the targets first so that no dup2 clobbers a source still to be moved.
    parked = {target: fcntl.fcntl(src, fcntl.F_DUPFD, 16) for target, src in wanted.items()}
    for target, src in parked.items():
        os.dup2(src, target)
    os.closerange(SPEC_FD + 1, 65536)  # listening socket, server stdin, other runs' pipes and sockets, logs
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the process
    # Line-buffered so that what a script printed before being killed at its timeout still reaches the model.
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)  # noqa: SIM115


def _prepare_environment(spec: dict) -> None:
    """cwd, environment and sys.path exactly as documented for analysis scripts."""
    job_dir, code_dir, run_dir = spec["job_dir"], spec["code_dir"], spec["run_dir"]
    tmp_dir = os.path.join(run_dir, "tmp")
    mpl_dir = os.path.join(run_dir, "mpl")
    os.makedirs(tmp_dir, exist_ok=True)
    os.makedirs(mpl_dir, exist_ok=True)
    os.chdir(job_dir)
    # Like `python code/x.py`: the script's folder first (it is code/ unless the model used a subfolder).
    extra = list(dict.fromkeys([os.path.dirname(spec["script"]), code_dir, *spec.get("extra_sys_path", [])]))
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


def prepare_generic(out_w: int, err_w: int, status_w: int, spec_r: int, *, network: bool) -> list[str]:
    """Everything that does not depend on the job, done by a spare child before a request arrives.

    Returns:
        Notes about isolation that could not be had.
    """
    kernel.kill_me_with_parent(signal.SIGKILL)  # no supervisor, no clock: never run unsupervised
    os.setsid()
    _redirect_stdio(out_w, err_w, status_w, spec_r)
    _reset_signals()
    signal.signal(signal.SIGXCPU, _on_cpu_limit)
    _reset_inherited_state()
    _prefault()
    notes = []
    if network:
        error = kernel.unshare(kernel.CLONE_NEWNET)  # only a down loopback: no network at all
        if error:
            notes.append(f"network namespace: {error}")
    # After the last step that needs privilege: the uid switch still can, since this keeps the effective set.
    error = kernel.drop_bounding_set()
    if error:
        notes.append(f"capability bounding set: {error}")
    return notes


def read_spec() -> dict | None:
    """Block until the supervisor sends this child its spec (None: it went away instead)."""
    chunks = []
    while chunk := os.read(SPEC_FD, 65536):
        chunks.append(chunk)
    os.close(SPEC_FD)
    return json.loads(b"".join(chunks)) if chunks else None


def _prefault() -> None:
    """Touch what a typical analysis script touches, while the spare still waits for work.

    After a fork every write to an inherited page (reference counts included) copies it. Doing one small pandas
    round-trip here moves most of those copies off the caller's critical path; it leaves no visible state.
    """
    pandas = sys.modules.get("pandas")
    if pandas is None:
        return
    with contextlib.suppress(Exception):
        frame = pandas.DataFrame({"k": [1, 2, 1, 3], "v": [1.0, 2.0, 3.0, 4.0]})
        str(frame.groupby("k")["v"].sum().max())


def _confine(spec: dict) -> list[str]:
    """Landlock: writes only in the job and run folders, no TCP, signals scoped; return what is missing."""
    isolate = spec["isolate"]
    if not (isolate.get("filesystem", True) or isolate.get("network", True)):
        return []
    writable = [spec["job_dir"], spec["run_dir"]] if isolate.get("filesystem", True) else ["/"]
    readable = spec.get("readable") if isolate.get("filesystem", True) and not isolate.get("in_sandbox") else None
    _features, error = kernel.landlock_confine(
        writable, deny_tcp=isolate.get("network", True), scope=True, readable=readable
    )
    return [f"landlock: {error}"] if error else []


def _drop_user(spec: dict) -> None:
    """In a job's sandbox, become the unprivileged sandbox uid and hold no capability before any script code runs.

    The server and the supervisor set up namespaces and Landlock with the sandbox's root; the script itself must
    never hold it, so a failed switch stops the run instead of running the script as root. The bounding set was
    emptied earlier (``prepare_generic``), so no program the script starts can regain a capability either.
    """
    uid = spec["isolate"].get("run_as_uid")
    if uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise OSError(f"could not switch to the sandbox uid {uid}")
    error = kernel.clear_capabilities()  # what the switch left (inheritable), or a user namespace's whole set
    if error:
        raise OSError(f"could not drop the script's capabilities: {error}")


def run_prepared(spec: dict, notes: list[str]) -> int:
    """Job-specific setup, then the script as ``__main__``; return its exit code."""
    _prepare_environment(spec)
    notes = notes + _confine(spec)
    _set_rlimits(spec["limits"])
    _drop_user(spec)
    # Report confinement before any script code runs, then close the channel so the script cannot use it.
    os.write(STATUS_FD, json.dumps(notes).encode())
    os.close(STATUS_FD)
    import runpy

    try:
        runpy.run_path(spec["script"], run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException as exc:
        _print_script_traceback(exc)
        code = 1
    _finish_threads()
    return _run_tracked_checks(code)


def _run_tracked_checks(code: int) -> int:
    """Run the checks the script tracked, as ``atexit`` would outside the runner; a failing check fails the run.

    Only when the helpers were imported and hold checks that have not run, so other scripts pay nothing.
    """
    module = sys.modules.get("insightloom.analysis_utils.exit_checks")
    if module is None or not module.has_pending():
        return code
    try:
        passed = module.run_at_script_end()
    except BaseException as exc:
        _print_script_traceback(exc)
        passed = False
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    return code if passed or code else 1


def _print_script_traceback(exc: BaseException) -> None:
    """Print the traceback without the runner's own frames (they are noise in the model's context)."""
    tb = exc.__traceback__
    while tb is not None and (
        tb.tb_frame.f_code.co_filename in (__file__, "<frozen runpy>")
        or tb.tb_frame.f_code.co_filename.endswith("runpy.py")
    ):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


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
    except Exception:
        pass
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
