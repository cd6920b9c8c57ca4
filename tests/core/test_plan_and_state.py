from pathlib import Path

from insightloom.plan import find_items, parse_plan, plan_problems
from insightloom.state import CLUES_FORMAT, RESPONSE_FORMAT, SharedState, completed_tasks, make_clue

PLAN = """# Plan
## thought
Because.
## title
Sales report
## steps
### 1. Coder: Analysis
- [ ] Compute totals
- [ ] Break down Amount by Category
### 2. Validator: Check
- [ ] Re-run every check
### 3. Reporter: Write
- [ ] Write the report
### 4. Auditor: Audit
- [ ] Audit the DOCX
"""

RESPONSE = """## Status
SUCCESS
## Completed Tasks
- Compute totals
- Break down Amount by Category
## Key Insights
- Total is {{calc:total}}
## Generated Files
- code/01.py -- script
"""


def test_formats_are_exactly_as_designed() -> None:
    assert CLUES_FORMAT == "Here is clues from {agent}:\n\n<clues>\n{text}\n</clues>\n\n"
    assert (
        RESPONSE_FORMAT
        == "Response from {agent}:\n\n<response>\n{text}\n</response>\n\n*Please execute the next step.*"
    )


def test_parse_and_filter_per_agent() -> None:
    plan = parse_plan(PLAN)
    assert plan.title == "Sales report"
    assert [s.role for s in plan.sections] == ["coder", "validator", "reporter", "auditor"]
    own = plan.section_text("coder")
    assert "- [ ] Compute totals" in own and "Re-run" not in own
    others = plan.others_one_line("coder").splitlines()
    assert len(others) == 3 and others[0].startswith("2. Validator: Check (0/1")
    assert plan.blocking_items("reporter") == [
        "Coder: Compute totals",
        "Coder: Break down Amount by Category",
        "Validator: Re-run every check",
    ]


def test_items_are_found_by_normalised_wording() -> None:
    plan = parse_plan(PLAN)
    assert [i.text for _, i in find_items(plan, "compute TOTALS.")] == ["Compute totals"]
    assert [i.text for _, i in find_items(plan, "- [ ] `Compute` totals")] == ["Compute totals"]
    assert find_items(plan, "Nope") == []


def test_plan_rules() -> None:
    assert plan_problems(PLAN) == []
    no_validator = PLAN.replace("### 2. Validator: Check\n- [ ] Re-run every check\n", "")
    assert any("Validator" in p for p in plan_problems(no_validator))
    swapped = PLAN.replace("### 1. Coder", "### 1. Reporter").replace("### 3. Reporter", "### 3. Coder")
    assert any("order" in p for p in plan_problems(swapped))
    empty = PLAN.replace("- [ ] Audit the DOCX\n", "")
    assert any("no '- [ ]' item" in p for p in plan_problems(empty))
    assert plan_problems("hello") != []


def test_shared_state_has_exactly_four_keys_and_persists(tmp_path: Path, contract) -> None:
    state = SharedState(path=tmp_path / "shared_state.json")
    state.set_plan(PLAN)
    state.record("coder", RESPONSE)
    assert completed_tasks(RESPONSE) == ["Compute totals", "Break down Amount by Category"]
    loaded = SharedState.load(tmp_path / "shared_state.json")
    assert loaded.to_dict().keys() == {"messages", "clues", "full_plan", "history"}
    assert loaded.messages == RESPONSE
    assert loaded.clues.startswith("Here is clues from coder:")
    assert loaded.history[0]["agent"] == "coder"
    contract("shared_state", loaded.to_dict())


def test_clue_keeps_status_and_files_but_is_shorter() -> None:
    long = RESPONSE.replace("- Total is {{calc:total}}", "\n".join(f"- insight {i}" for i in range(20)))
    clue = make_clue(long)
    assert "SUCCESS" in clue and "code/01.py" in clue
    assert "insight 3" in clue and "insight 10" not in clue
