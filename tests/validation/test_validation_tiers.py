"""The tier rule picks which unchecked calculations get LLM verification."""

from __future__ import annotations

from validation_fixtures import calc

from insightloom.validation.tiers import select_for_llm

_PATTERN = ("high", "medium", "medium", "low", "medium", "low", "low")


def _calcs(n: int, checked: int = 0) -> list[dict]:
    """n unchecked calcs cycling through importances, then ``checked`` calcs that carry a check."""
    calcs = [calc(f"c{i}", i, importance=_PATTERN[i % len(_PATTERN)]) for i in range(n)]
    calcs += [calc(f"k{i}", i, "SELECT 1", importance="high") for i in range(checked)]
    return calcs


def _ids(calcs: list[dict], importance: str) -> list[str]:
    return [c["id"] for c in calcs if c["importance"] == importance and "check" not in c]


def _expected(calcs: list[dict], medium: int | None, low: int) -> list[str]:
    keep = set(_ids(calcs, "high"))
    keep |= set(_ids(calcs, "medium")[:medium] if medium is not None else _ids(calcs, "medium"))
    keep |= set(_ids(calcs, "low")[:low])
    return [c["id"] for c in calcs if c["id"] in keep]


def test_twenty_selects_all_high_all_medium_and_five_low() -> None:
    calcs = _calcs(20)
    assert len(_ids(calcs, "low")) > 5
    selected = select_for_llm(calcs)
    assert selected == _expected(calcs, None, 5)
    assert "c3" in selected and "c19" not in selected  # earliest low first


def test_twenty_one_selects_all_high_and_fifteen_medium() -> None:
    calcs = _calcs(21)
    assert select_for_llm(calcs) == _expected(calcs, 15, 0)


def test_fifty_is_still_the_middle_tier() -> None:
    calcs = _calcs(50)
    selected = select_for_llm(calcs)
    assert selected == _expected(calcs, 15, 0)
    assert sum(1 for c in calcs if c["id"] in selected and c["importance"] == "medium") == 15


def test_fifty_one_selects_all_high_and_ten_medium() -> None:
    calcs = _calcs(51)
    selected = select_for_llm(calcs)
    assert selected == _expected(calcs, 10, 0)
    assert not any(c["importance"] == "low" for c in calcs if c["id"] in selected)


def test_checked_calcs_count_toward_the_total_but_are_never_selected() -> None:
    calcs = _calcs(20, checked=1)  # 21 tracked: middle tier
    selected = select_for_llm(calcs)
    assert "k0" not in selected
    assert selected == _expected(calcs, 15, 0)
