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
from .paths import inside_job
from .results import tool_error

ALLOWED = frozenset(
    {"ls", "head", "tail", "wc", "cat", "grep", "find", "sort", "uniq", "cut", "du", "file", "stat", "pwd"}
)
MAX_OUTPUT = 4_000
MAX_TIMEOUT = 60


def make_bash_tool(rt: JobRuntime) -> AgentTool:
    @tool(name="bash_tool")
    def bash_tool(command: str, timeout: int = 30) -> str | dict:
        """Run a short inspection command in the job folder (ls, head, tail, wc, cat, grep, find, sort, uniq, cut, du).

        Args:
            command: The command line, e.g. "head -n 20 all_results.txt". No pipes or redirections.
            timeout: Seconds before the command is killed (at most 60).
        """
        try:
            args = shlex.split(command)
        except ValueError as exc:
            return tool_error(f"Cannot parse the command: {exc}. Fix: quote arguments properly.")
        if not args or args[0] not in ALLOWED:
            return tool_error(f"Command {args[0] if args else ''!r} is not allowed. Fix: use one of {sorted(ALLOWED)}.")
        if any(token in {"|", ">", ">>", "<", "&&", ";", "||"} for token in args):
            return tool_error("Pipes, redirections and command chains are not supported. Fix: run one command.")
        try:
            for arg in args[1:]:
                if not arg.startswith("-") and ("/" in arg or "." in arg):
                    inside_job(rt.root, arg)
        except BadInputError as exc:
            return tool_error(str(exc))
        try:
            done = subprocess.run(
                args,
                cwd=rt.root,
                capture_output=True,
                text=True,
                timeout=min(timeout, MAX_TIMEOUT),
                errors="replace",
                check=False,
            )
        except subprocess.TimeoutExpired:
            return tool_error(f"Killed after {min(timeout, MAX_TIMEOUT)} s timeout.")
        output = (done.stdout + done.stderr).strip()
        if len(output) > MAX_OUTPUT:
            cut = len(output) - MAX_OUTPUT
            output = output[: MAX_OUTPUT // 2] + f"\n[... {cut} characters cut ...]\n" + output[-MAX_OUTPUT // 2 :]
        result = f"exit status {done.returncode}\n{output}"
        return result if done.returncode == 0 else tool_error(result)

    return bash_tool
