"""Real LLMs misbehave: a scripted model shows the orchestration recovers and the job still completes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from scripted import ScriptedModel

from insightloom.agents import factory
from insightloom.config import Settings
from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import Reply
from insightloom.workflow import AutoApprove, JobOptions, run_job
from small_sales import write_small_sales_csv

pytestmark = pytest.mark.e2e


@pytest.fixture
def small_csv(tmp_path: Path) -> Path:
    return write_small_sales_csv(tmp_path / "sales.csv", rows=90, seed=3)


def run_with(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, csv: Path, role: str, script: list) -> tuple:
    scripted = ScriptedModel(role, script)

    def fake_make_model(spec, agent_role, settings):
        return scripted if agent_role == role else OfflineModel(role=agent_role, max_tokens=spec.max_tokens)

    monkeypatch.setattr(factory, "make_model", fake_make_model)
    settings = Settings(provider="offline").with_provider("offline")
    opts = JobOptions(
        inputs=[csv],
        request="Analyze this sales data and write a report",
        settings=settings,
        job_dir=tmp_path / "job",
        cwd=tmp_path,
    )
    outcome = run_job(opts, AutoApprove())
    return outcome, scripted


def test_failing_script_traceback_reaches_the_model_and_the_fix_runs(monkeypatch, tmp_path, small_csv) -> None:
    broken = Reply.call(
        "write_and_execute_tool",
        file_path="00_probe.py",
        content="from coder_analysis_utils import load_df\ndf = load_df()\nprint(df['no_such_column'].sum())\n",
    )
    fixed = Reply.call(
        "write_and_execute_tool",
        file_path="00_probe.py",
        content="from coder_analysis_utils import load_df\ndf = load_df()\nprint(df['revenue'].sum())\n",
    )
    outcome, model = run_with(monkeypatch, tmp_path, small_csv, "coder", [broken, fixed])
    assert outcome.status == "completed", outcome.error
    failed = model.seen[1].last()
    assert failed.status == "error" and "KeyError" in failed.result and "no_such_column" in failed.result
    assert failed.result.startswith("Wrote code/00_probe.py (4 lines)")  # a summary, never the script
    assert "from coder_analysis_utils import load_df" not in failed.result
    repaired = model.seen[2].last()
    assert repaired.status == "success"
    assert str(int(pd.read_csv(small_csv)["revenue"].sum())) in repaired.result


def test_malformed_input_and_unknown_tool_get_clear_errors(monkeypatch, tmp_path, small_csv) -> None:
    script = [Reply.call("write_and_execute_tool", file_path="x.py"), Reply.call("do_magic", spell="now")]
    outcome, model = run_with(monkeypatch, tmp_path, small_csv, "coder", script)
    assert outcome.status == "completed", outcome.error
    malformed = model.seen[1].last()
    assert malformed.status == "error" and "content" in malformed.result
    unknown = model.seen[2].last()
    assert unknown.status == "error" and "do_magic" in unknown.result


def test_reporter_before_coder_is_refused_naming_unchecked_items(monkeypatch, tmp_path, small_csv) -> None:
    script = [Reply.call("reporter", input="Write the report now.")]
    outcome, model = run_with(monkeypatch, tmp_path, small_csv, "supervisor", script)
    assert outcome.status == "completed", outcome.error
    refusal = model.seen[1].last()
    assert refusal.name == "reporter" and refusal.status == "error"
    plan = (tmp_path / "job" / "plan.md").read_text()
    first_coder_item = next(line for line in plan.splitlines() if line.startswith("- [x]")).removeprefix("- [x] ")
    assert "Refused" in refusal.result and first_coder_item in refusal.result
    history = json.loads((tmp_path / "job" / "shared_state.json").read_text())["history"]
    assert history[0]["agent"] == "coder"  # the refused call never ran the Reporter
