"""``write_and_execute_tool``: write a script into the job's ``code/`` and run it in a fresh, bounded process.

Only a short summary goes back to the model, never the script: the code lives in the file, not in the context.
"""

from __future__ import annotations

import logging

from strands import tool
from strands.types.tools import AgentTool

from ..errors import BadInputError, ExecutionError
from ..execution import Limits, get_runner, resolve_script_path
from ..fileio import write_text_atomic
from ..runtime import JobRuntime
from .job_quota import quota_problem
from .tool_results import tool_error

logger = logging.getLogger(__name__)


def make_write_and_execute(rt: JobRuntime) -> AgentTool:
    runner = get_runner(rt.settings.runner)

    @tool(name="write_and_execute_tool")
    def write_and_execute_tool(file_path: str, content: str, timeout: int = 120) -> str | dict:
        """Write a self-contained Python script into the job's code/ folder and run it in a fresh process.

        Args:
            file_path: Script path relative to code/, e.g. "02_kpis.py".
            content: The whole script. It must import what it uses and load data with load_df().
            timeout: Seconds before the script and everything it started are killed.
        """
        try:
            script = resolve_script_path(rt.root, file_path)
            write_text_atomic(script, content, beneath=rt.root)  # never through a code/ link a script planted
        except BadInputError as exc:
            return tool_error(str(exc))
        limits = Limits(
            timeout_s=max(1, min(int(timeout), rt.settings.script_timeout_s * 5)),
            max_job_mb=rt.settings.max_job_mb,  # watched while the script runs, not only after it
            max_job_files=rt.settings.max_job_files,
        )
        try:
            result = runner.run(script, rt.root, limits)
        except ExecutionError as exc:
            return tool_error(f"The script could not be started: {exc}")
        seconds = round(result.duration_s, 3)
        rt.scripts.append({"script": script.name, "seconds": seconds, "exit_code": result.exit_code})
        summary = result.summary(lines_written=content.count("\n") + 1, script=script.relative_to(rt.root).as_posix())
        if result.status != "quota":  # else the runner's watcher stopped it, and the summary says so
            over = quota_problem(rt.root, rt.settings.max_job_mb, rt.settings.max_job_files)
            if over:
                return tool_error(f"{summary}\n{over}")
        return summary if result.ok else tool_error(summary)  # a cap that killed a child is not ok, exit 0 or not

    return write_and_execute_tool
