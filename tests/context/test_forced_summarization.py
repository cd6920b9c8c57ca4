"""The summarizing safety net really triggers (proactively, on the real token count) and the job still completes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from insightloom.agents import factory
from insightloom.config import Settings
from insightloom.models.offline import OfflineModel
from insightloom.plan import parse_plan
from insightloom.workflow import AutoApprove, JobOptions, run_job

pytestmark = pytest.mark.e2e
TINY_WINDOW = 2_600  # the Supervisor's first request alone is over half of it


class WatchedModel(OfflineModel):
    """The offline model, noting each summarization request it answers."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.summaries: list[str] = []

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):  # type: ignore[override]
        async for event in super().stream(messages, tool_specs, system_prompt, **kwargs):
            if "contentBlockDelta" in event and (system_prompt or "").startswith("You summarize"):
                self.summaries.append(event["contentBlockDelta"]["delta"].get("text", ""))
            yield event


def test_tiny_context_window_forces_summaries_and_the_job_completes(tmp_path: Path, monkeypatch) -> None:
    frame = pd.DataFrame(
        {"region": ["North", "South", "East", "West"] * 25, "units": range(100), "revenue": range(100, 300, 2)}
    )
    frame.to_csv(tmp_path / "sales.csv", index=False)
    watched: dict[str, WatchedModel] = {}

    def make_model(spec, role, settings):
        model = WatchedModel(role=role, max_tokens=spec.max_tokens, cache=spec.cache)
        if role == "supervisor":
            model.update_config(context_window_limit=TINY_WINDOW)
        watched[role] = model
        return model

    monkeypatch.setattr(factory, "make_model", make_model)
    opts = JobOptions(
        inputs=[tmp_path / "sales.csv"],
        request="Analyze this sales data and write a report",
        settings=Settings(provider="offline").with_provider("offline"),
        job_dir=tmp_path / "job",
        cwd=tmp_path,
    )
    outcome = run_job(opts, AutoApprove())
    assert outcome.status == "completed", outcome.error
    summaries = watched["supervisor"].summaries
    assert summaries, "proactive compression never called the summarizer"
    assert all(s.startswith("Summary of earlier work:") and "## Plan and tracking" in s for s in summaries)
    transcript = json.loads((outcome.job_dir / "transcripts" / "supervisor.json").read_text(encoding="utf-8"))
    first = transcript["invocations"][-1]["messages"][0]
    assert first["role"] == "user" and first["content"][0]["text"].startswith("Summary of earlier work:")
    plan = parse_plan((outcome.job_dir / "plan.md").read_text(encoding="utf-8"))
    assert plan.complete  # every item ticked: the Supervisor kept its place through the summaries
    audit = json.loads((outcome.job_dir / "audit_findings.json").read_text(encoding="utf-8"))
    assert audit["verdict"] == "pass"
