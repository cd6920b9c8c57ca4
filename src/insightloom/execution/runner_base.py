"""Host-side plumbing shared by the warm and the cold runner: environment, spec, result classification.

Both runners hold no job state: every call names its script and job folder, so one warm server serves many jobs
running in threads of one host process. The host never changes its own cwd or matplotlib state; all of that
happens in child processes (see ``_sandbox``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import tempfile
import threading
from pathlib import Path
from typing import Protocol

import insightloom
from insightloom.execution.cgroups import CapEvents, SandboxCgroup
from insightloom.execution.limits import Limits, RunResult, human_mb, human_seconds
from insightloom.execution.quota import QuotaWatch

logger = logging.getLogger(__name__)

#: Extra seconds the host waits beyond the timeout before it kills a supervisor that stopped answering.
HOST_GRACE_S = 15.0
_SIGXCPU_EXIT = 152
# Pin thread pools before the heavy imports: forking a process with live BLAS/jemalloc threads is unsafe, and
# many concurrent jobs on a small machine are better served by one thread per script.
_THREAD_PINS = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
    "MPLBACKEND": "Agg",
    "PYTHONDONTWRITEBYTECODE": "1",
}
#: The only host variables a runner process (and so a script) may see: an allowlist, because a denylist of secret
#: names always misses one (INSIGHTLOOM_TOKENS_FILE, a provider's new key name, ...).
ALLOWED_ENV = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM", "PYTHONHASHSEED", "PYTHONIOENCODING",
        "PYTHONUTF8", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "MPLCONFIGDIR", "XDG_CACHE_HOME", "SOURCE_DATE_EPOCH",
    }
)  # fmt: skip
_warned: set[str] = set()
_warn_lock = threading.Lock()


class ScriptRunner(Protocol):
    """Anything that can run one script for one job under limits."""

    def run(self, script: Path, job_dir: Path, limits: Limits) -> RunResult: ...

    def prestart(self, job_dir: Path) -> None:
        """Get ready for the job's scripts in the background (a warm server), or do nothing."""

    def release(self, job_dir: Path) -> None:
        """Free what the job's scripts held (its warm server), or do nothing."""


def warn_once(message: str) -> None:
    """Log an isolation gap or a fallback once per process, not once per script."""
    with _warn_lock:
        if message in _warned:
            return
        _warned.add(message)
    logger.warning(message)


def src_dir() -> str:
    """The folder that holds the ``insightloom`` package, so children can import it even when not installed."""
    return str(Path(insightloom.__file__).resolve().parent.parent)


def child_env() -> dict[str, str]:
    """Environment for runner processes: the allowlisted host variables (``ALLOWED_ENV``, ``LC_*``), thread pins and
    PYTHONPATH. Credentials, tokens and the service's settings never reach a script."""
    env = {k: v for k, v in os.environ.items() if k in ALLOWED_ENV or k.startswith("LC_")}
    env.update(_THREAD_PINS)
    paths = [src_dir()] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def default_isolation() -> dict[str, bool]:
    return {"network": True, "filesystem": True, "pidns": True}


def _scratch_base() -> str | None:
    # Prefer tmpfs (/dev/shm): creating and deleting on a disk with online discard costs milliseconds per script.
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def make_run_dir(root: str | None = None) -> str:
    """A private scratch folder per run (pid files, TMPDIR, MPLCONFIGDIR), removed after the run.

    Args:
        root: The sandbox's runs folder (bound into it); None for a folder of its own on tmpfs.
    """
    path = tempfile.mkdtemp(prefix="insightloom-run-", dir=root or _scratch_base())
    if root is not None:
        from insightloom.execution.bwrap import give_to_sandbox

        give_to_sandbox(Path(path))
    return path


#: Scratch folders older than this belong to processes that died without removing them (no job runs this long).
STALE_SCRATCH_S = 12 * 3600
_SCRATCH_PREFIXES = ("insightloom-job-runs-", "insightloom-run-", "insightloom-warm-")
_scratch_swept = False


def sweep_stale_scratch(now: float | None = None) -> int:
    """Remove the runner's scratch folders (tmpfs and /tmp) that dead processes left behind; return how many."""
    import shutil
    import time

    clock = now if now is not None else time.time()
    removed = 0
    for base in {_scratch_base() or tempfile.gettempdir(), tempfile.gettempdir()}:
        with contextlib.suppress(OSError):
            for entry in os.scandir(base):
                if not entry.name.startswith(_SCRATCH_PREFIXES) or not entry.is_dir(follow_symlinks=False):
                    continue
                with contextlib.suppress(OSError):
                    if clock - entry.stat(follow_symlinks=False).st_mtime > STALE_SCRATCH_S:
                        shutil.rmtree(entry.path, ignore_errors=True)
                        removed += 1
    return removed


def make_runs_root() -> str:
    """The folder a job's sandbox keeps its run folders in (bound read-write into the sandbox)."""
    global _scratch_swept
    if not _scratch_swept:
        _scratch_swept = True
        sweep_stale_scratch()
    return tempfile.mkdtemp(prefix="insightloom-job-runs-", dir=_scratch_base())


def sandboxed_isolation() -> dict[str, object]:
    """The isolation flags of a runner process inside a job's sandbox.

    A root host starts the sandbox with bwrap's root, which can still give each script its own pid and network
    namespace; each script then drops to the sandbox uid before its code runs (``run_as_uid``). An unprivileged
    host has no capabilities in the sandbox, so its server first makes a user namespace of its own.
    """
    from insightloom.execution.bwrap import SANDBOX_UID

    if os.geteuid() == 0:
        return {"in_sandbox": True, "run_as_uid": SANDBOX_UID}
    return {"in_sandbox": True, "own_userns": True}


def sandbox_env(extra: dict[str, str]) -> dict[str, str]:
    """The whole environment of a sandboxed runner process: allowlisted variables, pins and ``extra``."""
    env = child_env()
    env.pop("MPLCONFIGDIR", None)  # the host's folder is not in the sandbox; each run gets its own
    env.update(extra)
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    return env


def snapshot(job_dir: Path) -> set[str]:
    """Relative paths of the files in the job folder (bytecode caches excluded)."""
    found: set[str] = set()
    for root, dirs, files in os.walk(job_dir):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel_root = Path(root).relative_to(job_dir)
        found.update((rel_root / name).as_posix() for name in files)
    return found


#: What a script may read besides its job and run folders when there is no sandbox (Landlock read rules).
SYSTEM_READABLE = (
    "/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc/localtime", "/etc/timezone", "/etc/ld.so.cache",
    "/etc/ssl/certs", "/etc/mime.types", "/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat",
    "/sys/devices/system/cpu", "/sys/fs/cgroup",
)  # fmt: skip


@functools.cache
def readable_paths() -> tuple[str, ...]:
    """The runtime (interpreter prefixes, site-packages, the package) and the system files Python needs."""
    from insightloom.execution.bwrap import runtime_paths

    return (*SYSTEM_READABLE, *(str(p) for p in runtime_paths()))


def build_spec(script: Path, job_dir: Path, limits: Limits, run_dir: str, isolate: dict, **extra: object) -> dict:
    job = Path(job_dir).resolve()
    return {
        "readable": list(readable_paths()),
        "script": str(script),
        "job_dir": str(job),
        "code_dir": str(job / "code"),
        "run_dir": run_dir,
        "limits": limits.as_spec(),
        "extra_sys_path": [src_dir()],
        "isolate": dict(isolate),
        **extra,
    }


def kill_leftovers(run_dir: str) -> None:
    """Host-side last resort: kill the supervisor and the script by the pids they recorded."""
    for name in ("child.pid", "supervisor.pid"):
        try:
            pid = int(Path(run_dir, name).read_text())
        except (OSError, ValueError):
            continue
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(pid, signal.SIGKILL)


def _stream_text(part: dict) -> str:
    if part["cut_bytes"]:
        return f"{part['head']}\n... [{part['cut_bytes']:,} bytes cut by the runner] ...\n{part['tail']}"
    return part["head"] + part["tail"]


def note_run_limits(raw: dict, cgroup: SandboxCgroup | None, before: CapEvents, watch: QuotaWatch) -> None:
    """Add to the supervisor's report what the host saw of the run's limits: a quota stop, and what the sandbox's
    caps did to the script's processes (read from the cgroup, never from anything the script could write)."""
    if watch.problem is not None:
        raw["quota"] = watch.problem
    if cgroup is None:
        return
    hit = cgroup.events().since(before)
    if hit.oom_kills > 0 or hit.forks_refused > 0:
        raw["cap_events"] = {
            "oom_kills": hit.oom_kills,
            "forks_refused": hit.forks_refused,
            "memory_cap_mb": cgroup.memory_mb,
            "max_pids": cgroup.max_pids,
        }


def _cap_reason(caps: dict, code: int | None) -> tuple[str, str] | None:
    """The status and reason when a whole-sandbox cap killed or refused processes of the script, else None."""
    if caps.get("oom_kills", 0) > 0:
        itself = " (the script itself among them)" if code == -signal.SIGKILL else ""
        return "memory", (
            f"the memory cap ({human_mb(caps['memory_cap_mb'])} for all of this job's processes together) killed "
            f"{caps['oom_kills']} process(es) of this script{itself}. Fix: hold less in memory at once: fewer "
            "processes in parallel, only the columns needed, or the data in chunks"
        )
    if caps.get("forks_refused", 0) > 0:
        return "processes", (
            f"the process cap ({caps['max_pids']} processes and threads for all of this job's processes together) "
            f"refused {caps['forks_refused']} new process(es) or thread(s) of this script. Fix: start fewer "
            "processes or threads at once and wait for each batch to end"
        )
    return None


def classify(raw: dict, limits: Limits) -> tuple[str, str | None]:
    """Turn what the supervisor and the host saw into a status and a short human reason."""
    if raw.get("runner_error"):
        last = raw["runner_error"].strip().splitlines()[-1:] or ["unknown error"]
        return "runner_error", f"the script runner failed: {last[0]}"
    code = raw["exit_code"]
    err = raw["stderr"]["head"] + raw["stderr"]["tail"]
    if raw.get("quota"):
        return "quota", raw["quota"]
    if raw.get("timed_out"):
        return "timeout", f"killed after {human_seconds(limits.timeout_s)} timeout"
    if code in (_SIGXCPU_EXIT, -signal.SIGXCPU) or (code == -signal.SIGKILL and raw["cpu_s"] >= limits.cpu_s - 0.5):
        return "cpu", f"exceeded the {human_seconds(limits.cpu_s)} CPU-time limit"
    capped = _cap_reason(raw.get("cap_events") or {}, code)
    if capped is not None:
        return capped
    if code != 0 and "MemoryError" in err:
        return "memory", f"exceeded {human_mb(limits.memory_mb)} memory"
    if code != 0 and ("File too large" in err or code == -signal.SIGXFSZ):
        return "file_size", f"tried to write a file over the {human_mb(limits.file_size_mb)} file-size limit"
    if code == -signal.SIGKILL:
        return "killed", "killed by SIGKILL (possibly out of memory)"
    if code < 0:
        return "killed", f"terminated by signal {signal.Signals(-code).name}"
    if code != 0:
        return "error", None
    if raw["stdout"]["cut_bytes"] or raw["stderr"]["cut_bytes"]:
        return "output_cut", None
    return "ok", None


def to_result(raw: dict, limits: Limits, *, duration_s: float, new_files: list[str], runner: str) -> RunResult:
    """Build the public result from the supervisor's report; log isolation gaps once."""
    for note in raw.get("notes", []):
        warn_once(f"script isolation missing: {note}")
    status, reason = classify(raw, limits)
    empty = {"head": "", "tail": "", "cut_bytes": 0, "total_bytes": 0}
    out, err = raw.get("stdout", empty), raw.get("stderr", empty)
    if status == "runner_error":
        err = {**empty, "head": raw["runner_error"][-4000:]}
    return RunResult(
        exit_code=raw.get("exit_code"),
        status=status,
        duration_s=round(duration_s, 4),
        stdout=_stream_text(out),
        stderr=_stream_text(err),
        cut_chars=out["cut_bytes"] + err["cut_bytes"],
        new_files=new_files,
        killed_reason=reason,
        runner=runner,
        cpu_s=float(raw.get("cpu_s", 0.0)),
        notes=list(raw.get("notes", [])),
        output_chars=limits.output_chars,
    )


def host_killed(limits: Limits, why: str) -> dict:
    """A report written by the host itself when the supervisor did not answer (the host killed what it found)."""
    if why != "timeout":
        return {"runner_error": f"the script's supervisor died ({why}); the script was stopped"}
    empty = {"head": "", "tail": "", "cut_bytes": 0, "total_bytes": 0}
    return {
        "exit_code": -signal.SIGKILL,
        "timed_out": True,
        "cpu_s": 0.0,
        "stdout": empty,
        "stderr": {**empty, "head": "[runner] the supervisor did not answer in time; killed by the host"},
        "notes": [],
    }
