"""What each tool agent is sent: its own plan section, clues within their budget and the last message, nothing more."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from insightloom.agents import factory
from insightloom.config import TOOL_AGENT_ROLES, Settings
from insightloom.context.tokens import block_text, count_tokens
from insightloom.models.offline import OfflineModel
from insightloom.plan import parse_plan
from insightloom.workflow import AutoApprove, JobOptions, run_job
from small_sales import write_small_sales_csv

pytestmark = pytest.mark.e2e
CLUE_BUDGET = 250
HANDOFF_BUDGET = 600


class RecordingModel(OfflineModel):
    """The offline model, keeping every request it was sent."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.requests: list[tuple[str, str]] = []

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):  # type: ignore[override]
        user = "\n".join(block_text(b) for m in messages[:1] for b in m["content"])
        self.requests.append((system_prompt or "", user))
        async for event in super().stream(messages, tool_specs, system_prompt, **kwargs):
            yield event


@pytest.fixture
def recorded_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, RecordingModel]]:
    write_small_sales_csv(tmp_path / "sales.csv", rows=120, seed=5)
    models: dict[str, RecordingModel] = {}

    def make_model(spec, role, settings):
        models[role] = RecordingModel(role=role, max_tokens=spec.max_tokens, cache=spec.cache)
        return models[role]

    monkeypatch.setattr(factory, "make_model", make_model)
    settings = Settings(provider="offline", clue_budget_tokens=CLUE_BUDGET, handoff_budget_tokens=HANDOFF_BUDGET)
    opts = JobOptions(
        inputs=[tmp_path / "sales.csv"],
        request="Analyze this sales data and write a report",
        settings=settings.with_provider("offline"),
        job_dir=tmp_path / "job",
        cwd=tmp_path,
    )
    outcome = run_job(opts, AutoApprove())
    assert outcome.status == "completed", outcome.error
    return outcome.job_dir, models


def clues_of(system_prompt: str) -> str:
    start = system_prompt.index("## Clues from earlier agents\n<clues>") + len("## Clues from earlier agents\n<clues>")
    return system_prompt[start : system_prompt.rindex("</clues>")]


def test_tool_agents_see_only_their_section_budgeted_clues_and_the_last_message(recorded_job) -> None:
    job_dir, models = recorded_job
    plan = parse_plan((job_dir / "plan.md").read_text(encoding="utf-8").replace("- [x]", "- [ ]"))
    sections = {s.role: s for s in plan.sections}
    checked = 0
    saw_digest = False
    for role in TOOL_AGENT_ROLES:
        for system_prompt, message in models[role].requests:
            if "summar" in system_prompt[:400].lower():
                continue
            own_section = re.search(r"<plan_section>\s*###\s*\d+\.\s*(\w+)", system_prompt)
            own = own_section.group(1).lower() if own_section else role
            assert role == "tracker" or own == role
            sent = system_prompt + "\n" + message
            for other, section in sections.items():
                if other == own:
                    continue
                heading = plan.text.splitlines()[section.heading_line]
                assert heading not in sent, (role, other)
                items = [item.text for item in section.items]
                assert not all(item in sent for item in items), (role, other)
            clues = clues_of(system_prompt)
            assert count_tokens(clues) <= CLUE_BUDGET, role
            saw_digest |= "## Key Insights" not in clues.split("</clues>")[0] and bool(clues.strip())
            assert count_tokens(message) <= HANDOFF_BUDGET, role
            checked += 1
    assert checked >= 10
    assert saw_digest  # the budget was tight enough that the oldest clues became a digest
    state = json.loads((job_dir / "shared_state.json").read_text(encoding="utf-8"))
    assert count_tokens(state["clues"]) <= CLUE_BUDGET
