"""``bash_tool``: a few read-only inspection commands, run without a shell, inside the job folder.

Model-written text never reaches a shell: the command is split with shlex, the program must be on an allow-list,
it runs in the scripts' kind of sandbox (the job folder read-only, nothing else of the host) where bwrap works,
every path-like argument must resolve inside the job folder, options that read file names from a file or follow
every symlink are refused, and the output is read as a stream and cut while it arrives, so a huge file never fills
the host's memory. File names are the scripts' (any byte but ``/`` and NUL): ``ls`` prints them quoted, and the
output comes back with control characters escaped and inside a fence, so no name can forge a line of the result.
"""

from __future__ import annotations

import os
import selectors
import shlex
import signal
import subprocess
import time
from pathlib import Path

from strands import tool
from strands.types.tools import AgentTool

from ..errors import BadInputError
from ..execution._sandbox import OutputCapture
from ..execution.bwrap import SandboxSpec, bwrap_works, sandbox_argv
from ..printable import fenced, printable_text
from ..runtime import JobRuntime
from .job_paths import inside_job
from .tool_results import tool_error

# Read-only programs whose options cannot run other programs or write files (so no find -exec, no sort -o).
ALLOWED = frozenset({"ls", "head", "tail", "wc", "cat", "grep", "uniq", "cut", "du", "file", "stat", "pwd"})
# No credentials from the host; ls quotes a name with a newline or ESC as a terminal shows it ('a'$'\n''b'), never
# as it is (the default when its output is a pipe).
_SAFE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C.UTF-8", "QUOTING_STYLE": "shell-escape"}
MAX_OUTPUT = 4_000
MAX_TIMEOUT = 60
_READ_CHUNK = 65_536
#: Options that make a program read a list of file names from a file (unchecked paths) or follow every symlink.
REFUSED_OPTIONS: dict[str, tuple[str, ...]] = {
    "wc": ("--files0-from",),
    "du": ("--files0-from", "-L", "--dereference"),
    "file": ("-f", "--files-from"),
    "grep": ("-R", "--dereference-recursive"),
    "ls": ("-L", "--dereference"),
    "stat": ("-L", "--dereference"),
}


def _refused_option(program: str, args: list[str]) -> str | None:
    for arg in args:
        for option in REFUSED_OPTIONS.get(program, ()):
            long_match = option.startswith("--") and (arg == option or arg.startswith(option + "="))
            short_match = not option.startswith("--") and arg.startswith("-") and not arg.startswith("--")
            if long_match or (short_match and option[1] in arg[1:]):
                return option
    return None


def _capped_text(capture: OutputCapture) -> str:
    part = capture.as_dict()
    if part["cut_bytes"]:
        return f"{part['head']}\n[... {part['cut_bytes']:,} bytes cut ...]\n{part['tail']}"
    return part["head"] + part["tail"]


def _sandboxed(args: list[str], job_root: str) -> list[str]:
    """``args`` inside the same kind of sandbox as scripts, with the job folder read-only (where bwrap works)."""
    if not bwrap_works()[0]:
        return args
    spec = SandboxSpec(writable=(), readonly=(Path(job_root),), cwd=Path(job_root), env=_SAFE_ENV)
    return sandbox_argv(spec, args)


def _run_streamed(args: list[str], cwd: str, timeout: float) -> tuple[int | None, str]:
    """Run ``args`` with stdout and stderr merged, reading as it comes; (exit code or None on timeout, output)."""
    proc = subprocess.Popen(
        _sandboxed(args, cwd),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=_SAFE_ENV,
        start_new_session=True,
    )
    assert proc.stdout is not None
    output = OutputCapture(MAX_OUTPUT)
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                proc.stdout.close()
                return None, _capped_text(output)
            if not sel.select(min(remaining, 1.0)):
                continue
            chunk = os.read(proc.stdout.fileno(), _READ_CHUNK)
            if not chunk:
                break
            output.feed(chunk)
    proc.stdout.close()
    return proc.wait(), _capped_text(output)


def _paths_in(arg: str) -> list[str]:
    """Every path an argument may name: the argument itself, or the value glued to an option (``-f/x``, ``--a=/x``).

    Each is checked against the job folder, so no option can point a program at a file outside it.
    """
    if not arg.startswith("-"):
        return [arg]
    value = arg.split("=", 1)[1] if "=" in arg else arg.lstrip("-")[1:]
    return [value] if value and ("/" in value or value.startswith(".")) else []


def make_bash_tool(rt: JobRuntime) -> AgentTool:
    @tool(name="bash_tool")
    def bash_tool(command: str, timeout: int = 30) -> str | dict:
        """Run a short inspection command in the job folder (ls, head, tail, wc, cat, grep, uniq, cut, du).

        Args:
            command: The command line, e.g. "head -n 20 all_results.txt". No pipes or redirections.
            timeout: Seconds before the command is killed (at most 60).
        """
        try:
            args = shlex.split(command)
        except ValueError as exc:
            return tool_error(f"Cannot parse the command: {exc}. Fix: quote arguments properly.")
        limit = max(1, min(int(timeout), MAX_TIMEOUT))
        if not args or args[0] not in ALLOWED:
            return tool_error(f"Command {args[0] if args else ''!r} is not allowed. Fix: use one of {sorted(ALLOWED)}.")
        if any(token in {"|", ">", ">>", "<", "&&", ";", "||"} for token in args):
            return tool_error("Pipes, redirections and command chains are not supported. Fix: run one command.")
        refused = _refused_option(args[0], args[1:])
        if refused:
            return tool_error(
                f"{args[0]} {refused} is not allowed: it reads file names from a file or follows every link. "
                "Fix: name the files on the command line (grep: use -r)."
            )
        try:
            for arg in args[1:]:
                for path in _paths_in(arg):
                    inside_job(rt.root, path)
        except BadInputError as exc:
            return tool_error(str(exc))
        code, output = _run_streamed(args, str(rt.root), limit)
        shown = fenced(printable_text(output.strip()))
        if code is None:
            return tool_error(f"Killed after {limit} s timeout.\n{shown}")
        result = f"exit status {code}\n{shown}"
        return result if code == 0 else tool_error(result)

    return bash_tool
