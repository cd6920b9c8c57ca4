"""Issue 11 follow-up (items 3, 5, 6): plan parsing never crashes, a new plan arrives unsettled, items that differ
by an operator stay two items, more heading variants and code blocks are understood, and the plan helpers live in
one place."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from insightloom import plan as plan_module
from insightloom.config import Settings
from insightloom.jobs import JobFolder
from insightloom.plan import find_items, normalise_plan, parse_plan, plan_problems
from insightloom.runtime import JobRuntime
from plan_tool_kit import CANONICAL_PLAN as CANONICAL

# --- 1. no crash on any text ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("heading", ["### 4. AUDİTOR: Audit", "### 2. valıdator: Check", "### 2. VALİDATOR"])
def test_a_role_name_that_folds_to_no_role_is_an_unparsed_heading_not_a_crash(heading: str) -> None:
    broken = CANONICAL + f"{heading}\n- [ ] Audit again\n"
    problems = plan_problems(broken)
    assert any(heading in p and "is not part of the plan format" in p for p in problems), problems


def test_a_section_number_of_thousands_of_digits_is_an_unparsed_heading() -> None:
    heading = f"### {'1' * 5000}. Auditor: Audit"
    assert any("is not part of the plan format" in p for p in plan_problems(CANONICAL + heading + "\n- [ ] Again\n"))


_LINE_STARTS = ["# Plan", "## ", "### ", "#### ", "- [ ] ", "- [x] ", "- [~] ", "* [ ] ", "```", "~~~", "1. ", ""]
_WORDS = ["Coder", "AUDİTOR", "valıdator", "Validator:", "코더", "생각", "title", "— not possible:", "1.", "**", ":"]
_LINE = st.builds(
    lambda start, words, tail: start + " ".join(words) + tail,
    st.sampled_from(_LINE_STARTS),
    st.lists(st.sampled_from(_WORDS) | st.text(max_size=8), max_size=4),
    st.text(max_size=6),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text() | st.lists(_LINE, max_size=12).map("\n".join))
def test_plan_functions_never_raise_on_any_text(text: str) -> None:
    assert isinstance(plan_problems(text), list)
    assert isinstance(parse_plan(normalise_plan(text)).blocking_items("auditor"), list)


# --- 2. a new plan has only open items ------------------------------------------------------------------------------


def test_a_plan_that_arrives_with_settled_items_is_refused_naming_each_line() -> None:
    settled = CANONICAL.replace("- [ ] Compute totals", "- [x] Compute totals").replace(
        "- [ ] Re-run every check", "- [~] Re-run every check"
    )
    problems = plan_problems(settled)
    assert any("line 8 '- [x] Compute totals'" in p and "'- [ ] Compute totals'" in p for p in problems), problems
    assert any("line 11 '- [~] Re-run every check'" in p and "'- [ ] Re-run every check'" in p for p in problems)
    assert plan_problems(CANONICAL) == []


def test_a_planner_that_presettles_an_item_is_asked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from insightloom.workflow import stages

    asks: list[str] = []
    answers = [CANONICAL.replace("- [ ] Re-run every check", "- [~] Re-run every check"), CANONICAL]

    def planner(ask: str) -> str:
        asks.append(ask)
        return answers.pop(0)

    monkeypatch.setattr(stages, "build_agent", lambda *args, **kwargs: planner)
    rt = JobRuntime.create(JobFolder.create(tmp_path / "artifacts"), Settings(provider="offline"), "r", "en")
    assert stages._ask_planner(rt, "planner") == CANONICAL
    assert len(asks) == 2 and "'- [ ] Re-run every check'" in asks[1]


def test_a_not_possible_line_without_a_reason_gets_one() -> None:
    from insightloom.plan import not_possible_items

    marked = CANONICAL.replace("- [ ] Compute totals", "- [~] Compute totals")
    for text in (marked, marked.replace("[~] Compute totals", "[~] Compute totals — not possible:")):
        [(item, reason)] = not_possible_items(text)
        assert item == "Compute totals" and reason == "no reason was given"


# --- 4. operators and digits are part of an item's wording ----------------------------------------------------------


def test_items_that_differ_by_an_operator_are_two_items() -> None:
    items = ["Count orders with `Amount` > 100", "Count orders with `Amount` < 100", "Share of `Amount` >= 1000"]
    plan_text = CANONICAL.replace("- [ ] Compute totals", "\n".join(f"- [ ] {item}" for item in items))
    assert plan_problems(plan_text) == []
    plan = parse_plan(plan_text)
    assert [i.text for _, i in find_items(plan, "Count orders with Amount < 100.")] == [
        "Count orders with `Amount` < 100"
    ]
    assert find_items(plan, "Share of Amount >= 100") == []  # "100" is not "1000"


def test_a_sign_or_a_decimal_at_the_start_is_no_bullet() -> None:
    from insightloom.plan import item_key

    assert item_key("-5% change in `Revenue`") != item_key("5% change in `Revenue`")
    assert item_key("10.5% margin") == "10.5% margin"
    assert (
        item_key("- [ ] compute headline KPIs   for `Revenue` : Totals.") == "compute headline kpis for revenue: totals"
    )


# --- 5. more leniency -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["##", "####"])
def test_level_two_and_four_role_headings_are_sections(level: str) -> None:
    lenient = CANONICAL.replace("### 1. Coder: Analysis", f"{level} 1. Coder: Analysis")
    assert plan_problems(lenient) == []
    assert normalise_plan(lenient) == CANONICAL


def test_korean_meta_headings_are_understood_and_normalised() -> None:
    korean = CANONICAL.replace("## thought", "## 생각").replace("## title", "## 제목").replace("## steps", "## 단계")
    assert plan_problems(korean) == []
    assert parse_plan(korean).title == "Sales report"
    assert normalise_plan(korean) == CANONICAL


CODE_BLOCK = "```python\n# revenue per region\ndf.groupby('Region')\n```\n"


def test_a_code_block_inside_a_fenced_plan_does_not_cut_the_plan_short() -> None:
    with_code = CANONICAL.replace("Because.\n", "Because.\n" + CODE_BLOCK)
    wrapped = f"Here is the plan:\n\n```markdown\n{with_code}```\n\nLet me know.\n"
    plan = parse_plan(wrapped)
    assert [s.role for s in plan.sections] == ["coder", "validator", "reporter", "auditor"]
    assert plan_problems(wrapped) == []
    assert normalise_plan(wrapped) == with_code  # the code block is kept, the outer fence and the talk are not


def test_a_bare_fenced_block_inside_a_fenced_plan_is_a_code_block_too() -> None:
    with_code = CANONICAL.replace("Because.\n", "Because.\n```\n# not a heading\n```\n")
    assert plan_problems(f"```\n{with_code}```\n") == []
    assert [s.role for s in parse_plan(f"```\n{with_code}```\n").sections][-1] == "auditor"


def test_a_comment_inside_a_code_block_is_no_stray_heading() -> None:
    with_code = CANONICAL.replace("- [ ] Write the report\n", "- [ ] Write the report\n" + CODE_BLOCK)
    assert plan_problems(with_code) == []
    assert plan_problems(with_code.replace("```python\n", "")) != []  # outside a block it is a heading again


# --- 6. one implementation ------------------------------------------------------------------------------------------


def test_the_open_items_live_on_the_plan() -> None:
    text = CANONICAL.replace("- [ ] Compute totals", "- [x] Compute totals") + "### 5. Tracker: Track\n- [ ] Tick\n"
    plan = parse_plan(text)
    assert plan.open_items() == [
        "Coder: Break down `Amount` by `Category`",
        "Validator: Re-run every check",
        "Reporter: Write the report",
        "Auditor: Audit the DOCX",
    ]
    assert plan.blocking_items("reporter") == plan.open_items()[:2]


def test_the_evidence_free_tick_helper_is_gone() -> None:
    assert not hasattr(plan_module, "check_items")  # update_plan's settle_items is the only way to tick an item
