"""The per-job sandbox: bubblewrap around the warm server, each cold script and each bash_tool command.

What a sandboxed process sees (nothing else exists for it):

- the Python runtime and ``/usr``, read-only (the interpreter's real prefix is bound, wherever it lives);
- its own job folder (read-write, or read-only for bash_tool) and its private run folder;
- a fresh ``/proc`` of its own pid namespace, a minimal ``/dev`` and a private ``/tmp``;
- no network, no IPC, no host hostname; an environment built from scratch (``--clearenv`` plus an allowlist).

When the host runs as root it switches to a dedicated unprivileged uid (``SANDBOX_UID``) before the command runs,
with every capability dropped and ``no_new_privs``, and hands the job folder to that uid: a root-owned file the host
keeps (a token file, another job) is unreadable even if a bind mistake ever exposed it.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from insightloom.execution.cgroups import SandboxCgroup
from insightloom.execution.runner_base import src_dir

logger = logging.getLogger(__name__)

#: The host uid sandboxed code runs as when the host is root (no user and no file of the host has it).
SANDBOX_UID = 64_555
#: Environment the bwrap process itself starts with: its own pid 1 shows this, never the host's variables.
BWRAP_ENV = {"PATH": "/usr/bin:/bin"}
_USR_LINKS = (("usr/lib", "/lib"), ("usr/lib64", "/lib64"), ("usr/bin", "/bin"), ("usr/sbin", "/sbin"))


@cache
def bwrap_path() -> str | None:
    """The bubblewrap executable, or None when it is not installed."""
    return shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


@cache
def bwrap_works() -> tuple[bool, str]:
    """Whether bubblewrap can start a sandbox here (containers may forbid its namespaces), and why not."""
    exe = bwrap_path()
    if exe is None:
        return False, "bubblewrap is not installed (apt-get install bubblewrap)"
    argv = sandbox_argv(SandboxSpec(writable=(), cwd=Path("/")), ["/usr/bin/true"])
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, env=BWRAP_ENV, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bubblewrap could not start: {exc}"
    if done.returncode != 0:
        return False, f"bubblewrap refused here: {done.stderr.decode(errors='replace').strip()[:200]}"
    return True, f"bubblewrap at {exe}"


@cache
def runtime_paths() -> tuple[Path, ...]:
    """Folders the sandbox needs read-only besides ``/usr``: the interpreter's prefixes and the package's source
    (fixed for the life of the process, so computed once)."""
    wanted = [Path(sys.base_prefix), Path(sys.prefix), Path(src_dir())]
    wanted += [Path(p) for p in sys.path if p and Path(p).is_dir() and "site-packages" in p]
    real = sorted({p.resolve() for p in wanted} | set(wanted), key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in real:
        if path.is_relative_to("/usr") or any(path.is_relative_to(k) for k in kept) or not path.is_dir():
            continue
        kept.append(path)
    return tuple(kept)


@dataclass(frozen=True)
class SandboxSpec:
    """What one sandbox binds and how its command starts.

    Attributes:
        writable: Folders bound read-write at their own path (the job folder, the run folder).
        readonly: More folders bound read-only at their own path (a job folder for bash_tool, a font cache).
        cwd: Where the command starts.
        env: The command's whole environment.
        switch_user: Run as ``SANDBOX_UID`` (only possible, and only done, when the host is root).
        die_with_parent: End the sandbox when the *thread* that started it ends (``--die-with-parent`` is a
            per-thread parent-death signal): right for a command the caller waits for, wrong for a long-lived
            server started from a short-lived thread, which watches its stdin instead.
    """

    writable: tuple[Path, ...]
    cwd: Path
    readonly: tuple[Path, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    switch_user: bool = True
    die_with_parent: bool = True


def _parents(paths: Iterable[Path]) -> list[Path]:
    """Every folder above ``paths`` that bwrap must create (with open permissions) before binding them."""
    found: set[Path] = set()
    for path in paths:
        for parent in path.parents:
            if parent != Path("/") and not parent.is_relative_to("/usr"):
                found.add(parent)
    return sorted(found, key=lambda p: (len(p.parts), str(p)))


def sandbox_argv(spec: SandboxSpec, command: Sequence[str]) -> list[str]:
    """The bwrap command line that runs ``command`` inside ``spec``'s sandbox."""
    exe = bwrap_path() or "bwrap"
    argv = [exe, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    argv += ["--die-with-parent"] if spec.die_with_parent else []
    argv += ["--new-session", "--clearenv", "--ro-bind", "/usr", "/usr"]
    for target, link in _USR_LINKS:
        if Path(link).is_symlink() or not Path(link).exists():
            argv += ["--symlink", target, link]
        else:
            argv += ["--ro-bind", link, link]
    argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    runtime = [p for p in runtime_paths() if not any(p.is_relative_to(w) for w in spec.writable)]
    binds = [*runtime, *spec.readonly, *spec.writable]
    for parent in _parents(binds):
        if not any(parent.is_relative_to(b) for b in binds):
            argv += ["--perms", "0755", "--dir", str(parent)]
    for path in [*runtime, *spec.readonly]:
        argv += ["--ro-bind", str(path), str(path)]
    for path in spec.writable:
        argv += ["--bind", str(path), str(path)]
    for key, value in sorted(spec.env.items()):
        argv += ["--setenv", key, value]
    argv += ["--chdir", str(spec.cwd)]
    if spec.switch_user and os.geteuid() == 0:
        setpriv = shutil.which("setpriv", path="/usr/bin:/bin") or "/usr/bin/setpriv"
        argv += [setpriv, f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups"]
        argv += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return argv + list(command)


def start_sandboxed(argv: list[str], cgroup: SandboxCgroup | None, **popen: Any) -> subprocess.Popen:
    """Start ``argv`` (a :func:`sandbox_argv` command line); with a cgroup, nothing runs before the cgroup holds it.

    bubblewrap waits on ``--block-fd`` until the host has moved it and everything it forked into the cgroup, so no
    process of the sandbox ever runs outside the caps.
    """
    if cgroup is None:
        return subprocess.Popen(argv, **popen)
    block_r, block_w = os.pipe()
    popen["pass_fds"] = (*popen.get("pass_fds", ()), block_r)
    try:
        proc = subprocess.Popen([argv[0], "--block-fd", str(block_r), *argv[1:]], **popen)
    finally:
        os.close(block_r)
    try:
        cgroup.adopt_tree(proc.pid)
        os.write(block_w, b"go")
    finally:
        os.close(block_w)
    return proc


def seed_mpl_cache(dest: Path) -> Path:
    """A matplotlib config folder for a sandbox, holding the host's font list so it is not rebuilt (seconds)."""
    dest.mkdir(parents=True, exist_ok=True)
    source = Path(os.environ.get("MPLCONFIGDIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"))
    source = source if os.environ.get("MPLCONFIGDIR") else source / "matplotlib"
    if source.is_dir():
        for font_list in source.glob("fontlist*.json"):
            shutil.copyfile(font_list, dest / font_list.name)
    return dest


def give_to_sandbox(root: Path) -> None:
    """Make everything in ``root`` the sandbox user's, so its scripts can write there (a no-op unless root).

    Links are changed themselves (``lchown``), never followed.
    """
    if os.geteuid() != 0:
        return
    for folder, dirs, files in os.walk(root):
        for name in [".", *dirs, *files]:
            path = os.path.join(folder, name)
            try:
                if os.lstat(path).st_uid != SANDBOX_UID:
                    os.lchown(path, SANDBOX_UID, SANDBOX_UID)
            except FileNotFoundError:
                continue
