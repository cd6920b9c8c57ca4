"""The recorded fixture: a job made through Strands' BedrockModel against the strict endpoint
(``scripts/record_bedrock_fixture.py``) replays with the same requests and gives the same citations, as a user's
recorded bug report would become a regression test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from insightloom.config import Settings
from insightloom.models.model_io import MODEL_IO, read_model_io
from insightloom.workflow import AutoApprove, JobOptions, run_job
from small_sales import write_small_sales_csv

pytestmark = pytest.mark.e2e
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "recorded" / "bedrock_small_sales"
REQUEST = "Analyze this sales data and write a report"
REGENERATE = "a deliberate change to what a job sends? re-record: python scripts/record_bedrock_fixture.py"


def _citations(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["citations"]


def test_the_recorded_bedrock_job_replays_to_the_same_citations(tmp_path: Path) -> None:
    recorded = read_model_io(FIXTURE / MODEL_IO)
    assert len(recorded) >= 30
    assert {call["role"] for call in recorded} >= {"coordinator", "planner", "supervisor", "coder", "reporter"}
    assert any(call.get("model_id", "").startswith("us.anthropic.") for call in recorded)
    data = write_small_sales_csv(tmp_path / "sales.csv", rows=90, seed=3)
    settings = Settings(replay_from=str(FIXTURE / MODEL_IO)).with_provider("replay")
    outcome = run_job(JobOptions([data], REQUEST, settings, job_dir=tmp_path / "job", cwd=tmp_path), AutoApprove())
    assert outcome.status == "completed", f"{outcome.error}\n{REGENERATE}"
    assert _citations(tmp_path / "job" / "citations.json") == _citations(FIXTURE / "citations.json"), REGENERATE
