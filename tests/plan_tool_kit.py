"""Helpers for tests of the Tracker's ``update_plan`` tool: a job runtime holding a plan, and calling the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from insightloom.config import Settings
from insightloom.jobs import JobFolder
from insightloom.runtime import JobRuntime
from insightloom.tools import make_update_plan

#: A valid plan in the one stored format, for the plan parsing tests.
CANONICAL_PLAN = """# Plan
## thought
Because.
## title
Sales report
## steps
### 1. Coder: Analysis
- [ ] Compute totals
- [ ] Break down `Amount` by `Category`
### 2. Validator: Check
- [ ] Re-run every check
### 3. Reporter: Write
- [ ] Write the report
### 4. Auditor: Audit
- [ ] Audit the DOCX
"""


def runtime_with_plan(tmp_path: Path, plan: str) -> JobRuntime:
    runtime = JobRuntime.create(JobFolder.create(tmp_path / "artifacts"), Settings(provider="offline"), "req", "en")
    runtime.state.set_plan(plan)
    return runtime


def call_update_plan(rt: JobRuntime, **kwargs: Any) -> Any:
    return make_update_plan(rt)._tool_func(**kwargs)


def result_text(result: Any) -> str:
    return result["content"][0]["text"] if isinstance(result, dict) else str(result)
