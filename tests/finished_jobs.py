"""Finished jobs for the ask tests: the offline model run to completion on the shared datasets, plus stopped ones."""

from __future__ import annotations

from pathlib import Path

from insightloom.config import Settings
from insightloom.workflow import AutoApprove, JobOptions, create_job, run_job
from repo_paths import DATA

MOON_EN = DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"
MOON_KR = DATA / "moon-market-kr" / "moon-market-fresh-food-sales.csv"
REQUEST = "Analyze this data and write a DOCX report"
#: A question the offline answerer finds in any finished sales job, and one nothing in a job answers.
ANSWERABLE = "What is the total Amount?"
UNANSWERABLE = "What will the weather be in Paris tomorrow?"


def offline(artifacts: Path) -> Settings:
    return Settings(artifacts=artifacts).with_provider("offline")


def run_finished_job(artifacts: Path, data: Path = MOON_EN) -> Path:
    """A job run from start to ``completed`` under ``artifacts`` (its folder is named by its id, as the CLI does)."""
    outcome = run_job(
        JobOptions(inputs=[data], request=REQUEST, settings=offline(artifacts), cwd=artifacts), AutoApprove()
    )
    assert outcome.status == "completed", outcome.error
    return outcome.job_dir


def make_queued_job(artifacts: Path, data: Path = MOON_EN) -> Path:
    """A job created but never run (``queued``): there is nothing to ask it yet."""
    return create_job(JobOptions(inputs=[data], request=REQUEST, settings=offline(artifacts), cwd=artifacts)).root
