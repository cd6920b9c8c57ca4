"""Each per-job ceiling stops a runaway Supervisor cleanly: the job fails naming the ceiling and keeps its files."""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path

import pandas as pd
import pytest

from insightloom.agents import factory, guards
from insightloom.config import Settings, load_settings
from insightloom.errors import ConfigError
from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import Reply
from insightloom.workflow import AutoApprove, JobOptions, run_job

pytestmark = pytest.mark.e2e


def runaway(conv) -> Reply:
    """A Supervisor that never finishes: it asks the Tracker again and again."""
    return Reply.call("tracker", input="Tick whatever is done, then I will ask again.")


def run_runaway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **ceilings: float):
    frame = pd.DataFrame({"region": ["North", "South", "East"] * 20, "revenue": range(60)})
    frame.to_csv(tmp_path / "sales.csv", index=False)

    def make_model(spec, role, settings):
        brain = runaway if role == "supervisor" else None
        return OfflineModel(role=role, max_tokens=spec.max_tokens, cache=spec.cache, brain=brain)

    monkeypatch.setattr(factory, "make_model", make_model)
    settings = Settings(provider="offline", **ceilings).with_provider("offline")
    opts = JobOptions(
        inputs=[tmp_path / "sales.csv"],
        request="Analyze this sales data and write a report",
        settings=settings,
        job_dir=tmp_path / "job",
        cwd=tmp_path,
    )
    outcome = run_job(opts, AutoApprove())
    usage = json.loads((outcome.job_dir / "usage.json").read_text(encoding="utf-8"))
    return outcome, usage


def assert_stopped_cleanly(outcome, setting: str) -> None:
    assert outcome.status == "failed" and outcome.exit_code == 1
    assert setting in outcome.error and "raise" in outcome.error
    job = json.loads((outcome.job_dir / "job.json").read_text(encoding="utf-8"))
    assert job["status"] == "failed" and setting in job["error"] and job["stage"] == "supervise"
    events = (outcome.job_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(events[-1])["kind"] == "failed"
    for kept in ("plan.md", "shared_state.json", "usage.json", "transcripts/tracker.json"):
        assert (outcome.job_dir / kept).exists(), kept


def test_model_call_ceiling(tmp_path, monkeypatch) -> None:
    outcome, usage = run_runaway(tmp_path, monkeypatch, max_model_calls=25)
    assert_stopped_cleanly(outcome, "max_model_calls")
    assert usage["total"]["calls"] == 25  # checked before every call: never one more
    assert usage["agents"]["tracker"]["calls"] > 6  # the runaway loop really ran


def test_token_ceiling(tmp_path, monkeypatch) -> None:
    outcome, usage = run_runaway(tmp_path, monkeypatch, max_total_tokens=40_000)
    assert_stopped_cleanly(outcome, "max_total_tokens")
    total = usage["total"]
    spent = sum(total[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
    largest_call = max(
        c["input_tokens"] + c["cache_read_tokens"] + c["cache_write_tokens"] + c["output_tokens"]
        for c in usage["model_calls"]
    )
    assert 40_000 <= spent < 40_000 + largest_call


def test_cost_ceiling(tmp_path, monkeypatch) -> None:
    outcome, usage = run_runaway(tmp_path, monkeypatch, max_cost_usd=0.03)
    assert_stopped_cleanly(outcome, "max_cost_usd")
    largest_call = max(c["cost_usd"] for c in usage["model_calls"])
    assert 0.03 <= usage["total"]["cost_usd"] < 0.03 + largest_call


def test_wall_time_ceiling(tmp_path, monkeypatch) -> None:
    ticks = count()
    monkeypatch.setattr(guards, "clock", lambda: next(ticks) * 5.0)  # every reading is 5 s later: no sleeping
    outcome, usage = run_runaway(tmp_path, monkeypatch, max_wall_seconds=120)
    assert_stopped_cleanly(outcome, "max_wall_seconds")
    assert usage["agents"]["tracker"]["calls"] > 2


def test_ceilings_come_from_the_config_file_and_bad_values_are_refused(tmp_path) -> None:
    config = tmp_path / "insightloom.yaml"
    config.write_text("max_model_calls: 40\nmax_cost_usd: 1.5\nclue_budget_tokens: 500\n", encoding="utf-8")
    settings = load_settings(config, env={})
    assert (settings.max_model_calls, settings.max_cost_usd, settings.clue_budget_tokens) == (40, 1.5, 500)
    config.write_text("max_wall_seconds: -5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="max_wall_seconds"):
        load_settings(config, env={})
