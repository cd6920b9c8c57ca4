"""A job run in a child process that dies like ``kill -9`` when the Supervisor first calls the Validator.

At that point the Coder's section is done and ticked and nothing after it is: the state a resume must continue from.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_SCRIPT = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from insightloom.agents import tool_agents
    from insightloom.config import Settings
    from insightloom.workflow import AutoApprove, JobOptions, create_job, drive, start

    real = tool_agents.run_tool_agent
    def crash_on_validator(role, rt, task):
        if role == "validator":
            os._exit(9)
        return real(role, rt, task)
    tool_agents.run_tool_agent = crash_on_validator
    data, artifacts, job_dir, owner = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    opts = JobOptions(inputs=[data / "moon-market-fresh-food-sales.csv"], columns_file=data / "column_definitions.json",
                      request="Analyze this data and write a DOCX report",
                      settings=Settings(artifacts=artifacts).with_provider("offline"),
                      job_dir=Path(job_dir) if job_dir else None)
    rt = create_job(opts)
    if owner:  # as the service records it: beside the jobs, and in job.json for display
        from insightloom.fileio import write_text_atomic
        write_text_atomic(artifacts / ".owners" / rt.job.id, owner + "\\n")
        rt.job.update(owner=owner, auto_approve=True)
    drive(rt, start(rt, opts.inputs, opts.columns_file), AutoApprove())
    """
)


def run_crashing_job(
    data_dir: Path, *, artifacts: Path, job_dir: Path | None = None, owner: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the moon-market job in ``data_dir`` until it dies at the Validator (exit code 9)."""
    args = [sys.executable, "-c", _SCRIPT, str(data_dir), str(artifacts), str(job_dir or ""), owner or ""]
    return subprocess.run(args, capture_output=True, text=True, timeout=600, check=False)
