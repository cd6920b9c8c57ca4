"""Ctrl-C during the Supervisor cancels the job promptly: exit 130, job.json cancelled, files kept."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from insightloom.wide_demo_data import ATTRIBUTES, generate_wide_csv
from repo_paths import child_env

pytestmark = pytest.mark.e2e


def test_ctrl_c_mid_run_cancels_and_keeps_files(tmp_path: Path) -> None:
    job = tmp_path / "job"
    env = child_env("INSIGHTLOOM_")
    # A long plan (a breakdown per attribute of the wide sample table): the Coder is still at work when Ctrl-C lands,
    # however fast each script runs.
    data = generate_wide_csv(tmp_path / "wide.csv")
    request = "Break down revenue by " + ", ".join(f"`{name}`" for name in ATTRIBUTES)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "insightloom",
            "run",
            str(data),
            "--request",
            request,
            "--provider",
            "offline",
            "--yes",
            "--job-dir",
            str(job),
        ],  # fmt: skip
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for line in proc.stderr:  # progress lines: wait (without sleeping) until the Coder is at work
            if "coder started" in line:
                break
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr[-2000:]
    assert stdout.strip().splitlines()[-1] == str(job.resolve())
    assert json.loads((job / "job.json").read_text())["status"] == "cancelled"
    assert (job / "plan.md").exists() and (job / "cache" / "profile.json").exists()
    assert not (job / "final_report.docx").exists()
    assert "Traceback" not in stderr
