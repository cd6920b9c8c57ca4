"""``bash_tool``: a few read-only inspection commands, run without a shell, inside the job folder.

Model-written text never reaches a shell: the command is split with shlex, the program must be on an allow-list,
and every path-like argument must resolve inside the job folder.
"""

from __future__ import annotations

import shlex
import subprocess

from strands import tool
from strands.types.tools import AgentTool

from ..errors import BadInputError
from ..runtime import JobRuntime
from .job_paths import inside_job
from .tool_results import tool_error

# Read-only programs whose options cannot run other programs or write files (so no find -exec, no sort -o).
ALLOWED = frozenset({"ls", "head", "tail", "wc", "cat", "grep", "uniq", "cut", "du", "file", "stat", "pwd"})
_SAFE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C.UTF-8"}  # no credentials from the host
MAX_OUTPUT = 4_000
MAX_TIMEOUT = 60


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
        try:
            for arg in args[1:]:
                for path in _paths_in(arg):
                    inside_job(rt.root, path)
        except BadInputError as exc:
            return tool_error(str(exc))
        try:
            done = subprocess.run(
                args,
                cwd=rt.root,
                capture_output=True,
                text=True,
                timeout=limit,
                errors="replace",
                env=_SAFE_ENV,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return tool_error(f"Killed after {limit} s timeout.")
        output = (done.stdout + done.stderr).strip()
        if len(output) > MAX_OUTPUT:
            cut = len(output) - MAX_OUTPUT
            output = output[: MAX_OUTPUT // 2] + f"\n[... {cut} characters cut ...]\n" + output[-MAX_OUTPUT // 2 :]
        result = f"exit status {done.returncode}\n{output}"
        return result if done.returncode == 0 else tool_error(result)

    return bash_tool
