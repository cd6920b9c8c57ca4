"""Issue 23's "every job visible": `insightloom jobs` run from another folder lists a job made with `--job-dir`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import child_env
from small_sales import write_small_sales_csv

pytestmark = pytest.mark.e2e


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # Wide enough that Rich prints each id and folder on one line; the registry is the test's (conftest).
    env = {**child_env("AWS_ACCESS", "AWS_SECRET", "INSIGHTLOOM_"), "COLUMNS": "400"}
    return subprocess.run(
        [sys.executable, "-m", "insightloom", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip


def test_jobs_from_another_folder_lists_a_job_made_with_job_dir(tmp_path: Path) -> None:
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    data = write_small_sales_csv(work / "sales.csv")
    job_dir = tmp_path / "jobs" / "q3"
    run = _cli("run", str(data), "-r", "Total revenue by region", "--provider", "offline", "--yes", "-q",
               "--job-dir", str(job_dir), cwd=work)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    job_id = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))["id"]

    listed = _cli("jobs", cwd=elsewhere)  # no artifacts folder here: only the registry knows the job
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if job_id in line)
    assert str(job_dir.resolve()) in row and "completed" in row
    assert not (elsewhere / "artifacts").exists()
    assert Path(os.environ["INSIGHTLOOM_JOBS_REGISTRY"]).is_file()  # the test's registry, not the user's
