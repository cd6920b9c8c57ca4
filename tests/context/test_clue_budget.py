"""Shared clues stay within their token budget; the oldest are compressed into a per-agent digest first."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from insightloom.context.tokens import count_tokens
from insightloom.state import CLUES_FORMAT, SharedState, bound_clues, make_clue, parse_clues

AGENTS = ("coder", "validator", "reporter", "tracker", "auditor")


def response(status: str, done: int, insights: list[str], files: list[str]) -> str:
    completed = "\n".join(f"- item {i} of the plan" for i in range(done)) or "- none"
    return (
        f"## Status\n{status}\n## Completed Tasks\n{completed}\n## Key Insights\n"
        + "\n".join(f"- {text}" for text in insights)
        + "\n## Generated Files\n"
        + "\n".join(f"- {path} -- output" for path in files)
    )


@st.composite
def clue_entries(draw: st.DrawFn) -> list[tuple[str, str]]:
    words = st.sampled_from(
        ["매출은 12% 증가했습니다.", "Revenue rose 12%.", "收入增长了。", "Las ventas subieron.", "x"]
    )
    entries = []
    for _ in range(draw(st.integers(0, 10))):
        insights = draw(st.lists(words, max_size=6))
        files = draw(
            st.lists(st.sampled_from(["code/01.py", "charts/a.png", "citations.json", "차트/매출.png"]), max_size=5)
        )
        status = draw(st.sampled_from(["SUCCESS", "PARTIAL_SUCCESS", "ERROR"]))
        entries.append(
            (draw(st.sampled_from(AGENTS)), make_clue(response(status, draw(st.integers(0, 9)), insights, files)))
        )
    return entries


@settings(max_examples=150, deadline=None)
@given(clue_entries(), st.integers(0, 700))
def test_clues_never_exceed_their_budget_and_stay_in_the_clues_format(entries, budget) -> None:
    text = bound_clues(entries, budget)
    assert count_tokens(text) <= budget
    blocks = parse_clues(text)
    assert "".join(CLUES_FORMAT.format(agent=a, text=t) for a, t in blocks) == text
    if count_tokens("".join(CLUES_FORMAT.format(agent=a, text=t) for a, t in entries)) <= budget:
        assert blocks == entries  # nothing is touched while everything fits


def test_oldest_clues_become_a_digest_of_status_and_files_and_the_newest_stays_whole() -> None:
    coder = make_clue(response("SUCCESS", 8, ["Total revenue is {{calc:total}}"] * 4, ["code/01.py", "charts/a.png"]))
    tracker_1 = make_clue(response("SUCCESS", 0, ["all items of the section are checked"], ["plan.md"]))
    validator = make_clue(response("PARTIAL_SUCCESS", 1, ["70 verified, 2 needs_review"], ["citations.json"]))
    tracker_2 = make_clue(response("SUCCESS", 0, ["all items of the section are checked"], ["plan.md"]))
    entries = [("coder", coder), ("tracker", tracker_1), ("validator", validator), ("tracker", tracker_2)]
    whole = "".join(CLUES_FORMAT.format(agent=a, text=t) for a, t in entries)
    text = bound_clues(entries, count_tokens(whole) - 20)
    blocks = parse_clues(text)
    assert blocks[-1] == ("tracker", tracker_2)
    digest_coder = dict(blocks)["coder"]
    assert "SUCCESS" in digest_coder and "code/01.py" in digest_coder and "charts/a.png" in digest_coder
    assert "calc:total" not in digest_coder  # insights are what the digest lets go
    tight = parse_clues(bound_clues(entries, 150))
    agents = [a for a, _ in tight]
    assert len(agents) == len(set(agents))  # one digest entry per agent
    assert "PARTIAL_SUCCESS" in dict(tight)["validator"] and "citations.json" in dict(tight)["validator"]


def test_clue_counts_completed_items_instead_of_listing_other_sections() -> None:
    clue = make_clue(response("SUCCESS", 3, ["a"], ["code/01.py"]))
    assert "item 0 of the plan" not in clue and "- 3 plan item(s)" in clue


def test_shared_state_record_keeps_clues_within_the_budget(tmp_path: Path) -> None:
    state = SharedState(path=tmp_path / "shared_state.json")
    for n in range(12):
        state.record("coder", response("SUCCESS", 2, [f"finding {n} " * 20], [f"code/{n:02d}.py"]), clue_budget=300)
        assert count_tokens(state.clues) <= 300
    assert "code/11.py" in state.clues and "finding 11" in state.clues
    assert state.to_dict().keys() == {"messages", "clues", "full_plan", "history"}
