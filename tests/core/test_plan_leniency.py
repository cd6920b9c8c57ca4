"""Issue 11, item 6: plans are read leniently (fences, preambles, heading variants, Korean role names), stored in one
canonical form, refused strictly when a heading or checkbox line fits no rule, and a Planner retry sees its
rejected plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from insightloom.config import Settings
from insightloom.jobs import JobFolder
from insightloom.plan import parse_plan, plan_problems
from insightloom.runtime import JobRuntime
from plan_tool_kit import CANONICAL_PLAN as CANONICAL


def _roles(text: str) -> list[str]:
    return [s.role for s in parse_plan(text).sections]


def test_a_fenced_plan_with_a_preamble_is_accepted_and_stored_canonically() -> None:
    from insightloom.plan import normalise_plan

    wrapped = f"Here is the plan you asked for:\n\n```markdown\n{CANONICAL}```\n\nLet me know what you think.\n"
    assert plan_problems(wrapped) == []
    assert _roles(wrapped) == ["coder", "validator", "reporter", "auditor"]
    assert normalise_plan(wrapped) == CANONICAL


@pytest.mark.parametrize(
    ("heading", "role", "subtitle"),
    [
        ("### 1. Coder: Analysis", "coder", "Analysis"),
        ("### 1. **Coder**: Analysis", "coder", "Analysis"),
        ("### **Coder**: Analysis", "coder", "Analysis"),
        ("### 1) Coder - Analysis", "coder", "Analysis"),
        ("### 1. Coder – Analysis", "coder", "Analysis"),
        ("### 1. Coder — Analysis", "coder", "Analysis"),
        ("### Coder", "coder", ""),
        ("### 1. 코더: 분석", "coder", "분석"),
        ("### 1. 검증자: 검증", "validator", "검증"),
        ("### 1. 보고서 작성자: 보고서", "reporter", "보고서"),
        ("### 1. 감사: 감사", "auditor", "감사"),
    ],
)
def test_section_heading_variants_are_understood(heading: str, role: str, subtitle: str) -> None:
    sections = parse_plan(f"# Plan\n## steps\n{heading}\n- [ ] Do it\n").sections
    assert [(s.role, s.subtitle) for s in sections] == [(role, subtitle)]
    assert [i.text for i in sections[0].items] == ["Do it"]


def test_a_lenient_plan_is_normalised_to_the_design_format() -> None:
    from insightloom.plan import normalise_plan

    lenient = (
        "# Plan\n## Thought\nBecause.\n## title\nSales\n## steps\n### 1) **Coder** - Analysis\n* [ ] Compute totals\n"
        "[ ] Break down `Amount`\n### 2. 검증: 검증\n- [ ] Re-run\n### 3. Reporter – Report\n- [ ] Write\n"
        "### Auditor\n- [ ] Audit\n"
    )
    assert plan_problems(lenient) == []
    assert normalise_plan(lenient) == (
        "# Plan\n## thought\nBecause.\n## title\nSales\n## steps\n### 1. Coder: Analysis\n- [ ] Compute totals\n"
        "- [ ] Break down `Amount`\n### 2. Validator: 검증\n- [ ] Re-run\n### 3. Reporter: Report\n- [ ] Write\n"
        "### 4. Auditor: Audit\n- [ ] Audit\n"
    )


def test_a_korean_coder_heading_is_a_coder_section_not_a_silent_gap() -> None:
    korean = CANONICAL.replace("### 1. Coder: Analysis", "### 1. 코더: 데이터 분석")
    assert plan_problems(korean) == []
    assert parse_plan(korean).section("coder").subtitle == "데이터 분석"


def test_an_en_dash_heading_is_its_own_section() -> None:
    dashed = CANONICAL.replace("### 3. Reporter: Write", "### 3. Reporter – Report")
    plan = parse_plan(dashed)
    assert [i.text for i in plan.section("reporter").items] == ["Write the report"]
    assert [i.text for i in plan.section("validator").items] == ["Re-run every check"]


@pytest.mark.parametrize(
    "bad_line",
    [
        "### Notes on the data",  # an unknown heading
        "##### 1. Coder: More analysis",  # a section at a level too deep
        "### 2. Writer: Prose",  # an unknown agent
        "- [?] Compute margins",  # a checkbox with an unknown mark
        "-[] Compute margins",  # a checkbox with no space inside
    ],
)
def test_a_heading_or_checkbox_line_left_unparsed_is_refused_by_name(bad_line: str) -> None:
    broken = CANONICAL.replace("### 2. Validator: Check", f"{bad_line}\n### 2. Validator: Check")
    problems = plan_problems(broken)
    assert any(bad_line in p and "line 10" in p for p in problems), problems


def test_a_checkbox_outside_any_section_is_refused() -> None:
    broken = CANONICAL.replace("Because.", "Because.\n- [ ] A stray task")
    assert any("A stray task" in p and "section heading" in p for p in plan_problems(broken))


def test_the_coder_section_is_required() -> None:
    no_coder = CANONICAL.replace(
        "### 1. Coder: Analysis\n- [ ] Compute totals\n- [ ] Break down `Amount` by `Category`\n", ""
    )
    assert any("Coder section is required" in p for p in plan_problems(no_coder))


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    job = JobFolder.create(tmp_path / "artifacts")
    return JobRuntime.create(job, Settings(provider="offline"), "Analyze the sales", "en")


class _ScriptedPlanner:
    """Stands in for the Strands Agent: answers with the next scripted plan and remembers what it was asked."""

    def __init__(self, answers: list[str], log: list[tuple[int, str]]) -> None:
        self.answers, self.log = answers, log

    def __call__(self, ask: str) -> str:
        self.log.append((id(self), ask))
        return self.answers.pop(0)


def _scripted(monkeypatch: pytest.MonkeyPatch, answers: list[str]) -> list[tuple[int, str]]:
    from insightloom.workflow import stages

    log: list[tuple[int, str]] = []
    monkeypatch.setattr(stages, "build_agent", lambda *args, **kwargs: _ScriptedPlanner(answers, log))
    return log


def test_a_planner_retry_sees_its_rejected_plan(rt: JobRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    from insightloom.workflow import stages

    rejected = CANONICAL.replace("### 2. Validator: Check\n- [ ] Re-run every check\n", "")
    log = _scripted(monkeypatch, [rejected, CANONICAL])
    assert stages._ask_planner(rt, "planner") == CANONICAL
    assert len(log) == 2
    same_conversation = log[0][0] == log[1][0]
    assert same_conversation or "Write the report" in log[1][1]  # the rejected plan is in front of the Planner
    assert "Validator section is required" in log[1][1]


def test_a_valid_first_plan_costs_one_call_and_is_stored_canonically(
    rt: JobRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    from insightloom.workflow import stages

    log = _scripted(monkeypatch, [f"```\n{CANONICAL.replace('### 3. Reporter: Write', '### 3. Reporter – Write')}```"])
    answer: Any = stages._ask_planner(rt, "planner")
    assert len(log) == 1 and answer == CANONICAL
