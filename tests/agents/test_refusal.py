"""A refused turn is read from its words (English, Korean), its stop reason or its emptiness; work is not."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from insightloom.agents.refusal import refusal_of


def _result(text: str, stop: str = "end_turn") -> SimpleNamespace:
    return SimpleNamespace(stop_reason=stop, message={"role": "assistant", "content": [{"text": text}]})


@pytest.mark.parametrize(
    "text",
    ["I'm sorry, but I can't help with that.", "I cannot assist with this request.", "I must decline to do this.",
     "죄송하지만 이 요청은 도와드릴 수 없습니다.", "요청하신 분석을 수행할 수 없습니다."],
)  # fmt: skip
def test_refusals_are_read_in_english_and_korean(text: str) -> None:
    found = refusal_of(_result(text))
    assert found is not None and found.first_words == text[:80]


def test_a_blocked_stop_reason_and_an_empty_turn_are_refusals_but_work_is_not() -> None:
    assert refusal_of(_result("Here is the plan.", "guardrail_intervened")) is not None
    empty = refusal_of(_result("   "))
    assert empty is not None and empty.why == "its turn was empty"
    assert refusal_of(_result("The Coder finished the monthly trend; calling the Tracker next.")) is None
    assert refusal_of(_result("Revenue by Region is done. " + "x " * 400 + "I can't help noticing a dip.")) is None
