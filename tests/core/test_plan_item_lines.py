"""Issue 11 follow-up (second review, 4): an item-like line under a section is an item or a refusal, never dropped.

Models write checklists with other bullets ("•", "·", "–", "—", "・", a "> " quote) and ballot-box glyphs ("☐",
"☑", "✅"); those are items. A plain bullet under a section ("- Break down revenue") is a task nobody could tick, so
the plan is refused naming the line and the fix.
"""

from __future__ import annotations

import pytest

from insightloom.plan import parse_plan, plan_problems

PLAN = """# Plan
## thought
Because.
## title
Sales
## steps
### 1. Coder: Analysis
- [ ] Compute headline KPIs
{line}
### 2. Validator: Verification
- [ ] Re-run every check
"""


def _coder_items(line: str) -> list[tuple[str, bool]]:
    section = parse_plan(PLAN.format(line=line)).sections[0]
    return [(item.text, item.checked) for item in section.items]


@pytest.mark.parametrize(
    "line", ["• [ ] Break down revenue", "· [ ] Break down revenue", "– [ ] Break down revenue",
             "— [ ] Break down revenue", "・[ ] Break down revenue", "> - [ ] Break down revenue",
             "☐ Break down revenue"],
)  # fmt: skip
def test_other_bullets_and_an_open_ballot_box_are_open_items(line: str) -> None:
    assert _coder_items(line) == [("Compute headline KPIs", False), ("Break down revenue", False)]
    assert plan_problems(PLAN.format(line=line)) == []


@pytest.mark.parametrize("line", ["☑ Break down revenue", "✅ Break down revenue", "• [x] Break down revenue"])
def test_a_ticked_glyph_is_a_checked_item_that_a_new_plan_refuses(line: str) -> None:
    assert _coder_items(line)[1] == ("Break down revenue", True)
    problems = plan_problems(PLAN.format(line=line))
    assert any("already checked" in p and "'- [ ] Break down revenue'" in p for p in problems)


@pytest.mark.parametrize("line", ["- Break down revenue", "* Break down revenue", "1. Break down revenue",
                                  "• Break down revenue", "  - a sub-note"])  # fmt: skip
def test_a_plain_bullet_under_a_section_is_refused_naming_the_line_and_the_fix(line: str) -> None:
    problems = plan_problems(PLAN.format(line=line))
    assert len(problems) == 1
    assert f"line 9 '{line.strip()}'" in problems[0] and "'- [ ] <task in exact words>'" in problems[0]
    assert len(_coder_items(line)) == 1


@pytest.mark.parametrize("line", ["❌ Break down revenue", "- [✓] Break down revenue"])
def test_other_box_glyphs_are_refused_as_unreadable_checkboxes(line: str) -> None:
    problems = plan_problems(PLAN.format(line=line))
    assert len(problems) == 1 and f"line 9 '{line}'" in problems[0]


@pytest.mark.parametrize("line", ["---", "-5% is the target", "> a quoted note", "Plain text under the items"])
def test_non_bullet_lines_under_a_section_stay_free_text(line: str) -> None:
    assert plan_problems(PLAN.format(line=line)) == []


def test_bullets_in_the_thought_are_notes_not_items() -> None:
    plan = PLAN.format(line="").replace("Because.", "- revenue matters\n• so do regions")
    assert plan_problems(plan) == []
