"""Helpers for tests of the Tracker's ``update_plan`` tool: a job runtime holding a plan, and calling the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from insightloom.config import Settings
from insightloom.jobs import JobFolder
from insightloom.runtime import JobRuntime
from insightloom.tools import make_update_plan


def runtime_with_plan(tmp_path: Path, plan: str) -> JobRuntime:
    runtime = JobRuntime.create(JobFolder.create(tmp_path / "artifacts"), Settings(provider="offline"), "req", "en")
    runtime.state.set_plan(plan)
    return runtime


def call_update_plan(rt: JobRuntime, **kwargs: Any) -> Any:
    return make_update_plan(rt)._tool_func(**kwargs)


def result_text(result: Any) -> str:
    return result["content"][0]["text"] if isinstance(result, dict) else str(result)
