"""Guards on one agent's turn: a call that keeps failing is refused then stopped; a loop is capped."""

from __future__ import annotations

from pathlib import Path

import pytest
from strands import tool

from insightloom.agents import build_agent
from insightloom.config import Settings
from insightloom.errors import BudgetExceeded, RepeatedCall
from insightloom.jobs import JobFolder
from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import Conversation, Reply
from insightloom.runtime import JobRuntime


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    return JobRuntime.create(JobFolder.create(tmp_path / "artifacts"), Settings(provider="offline"), "r", "en")


def raised(call, kind: type[Exception]) -> Exception:  # type: ignore[no-untyped-def]
    """The ``kind`` error inside whatever Strands wrapped it in."""
    with pytest.raises(Exception) as info:
        call()
    error: BaseException | None = info.value
    while error is not None and not isinstance(error, kind):
        error = error.__cause__ or error.__context__
    assert isinstance(error, kind), info.value
    return error


def looping_agent(rt: JobRuntime, tool_fn, reply: Reply):  # type: ignore[no-untyped-def]
    model = OfflineModel(role="coder", brain=lambda conv: reply)
    return build_agent("coder", rt, "rules\n<!-- dynamic -->\nnow\n", [tool_fn], model=model)


def test_an_identical_failing_call_runs_twice_is_refused_twice_then_the_turn_stops(rt: JobRuntime) -> None:
    runs: list[str] = []

    @tool
    def probe(x: str) -> str:
        """Fails every time.

        Args:
            x: Anything.
        """
        runs.append(x)
        raise ValueError("column 'nope' is missing")

    agent = looping_agent(rt, probe, Reply.call("probe", x="same"))
    error = raised(lambda: agent("go"), RepeatedCall)
    assert runs == ["same", "same"]  # the third and fourth identical calls were refused without running
    results = [
        block["toolResult"]["content"][0]["text"]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block
    ]
    assert sum("Refused without running" in r and "column 'nope' is missing" in r for r in results) == 2
    assert "kept sending the same failing probe call" in str(error)


def test_a_turn_that_never_ends_is_stopped_at_the_tool_call_cap(rt: JobRuntime) -> None:
    rt.settings.max_tool_calls_per_turn = 5
    counter = iter(range(1000))

    @tool
    def step(n: int) -> str:
        """Always succeeds.

        Args:
            n: A number.
        """
        return "ok"

    def brain(conv: Conversation) -> Reply:
        return Reply.call("step", n=next(counter))  # a new input each time: not a repeat, just a loop

    agent = build_agent("coder", rt, "rules", [step], model=OfflineModel(role="coder", brain=brain))
    assert "max_tool_calls_per_turn" in str(raised(lambda: agent("go"), BudgetExceeded))
    assert sum("toolResult" in b for m in agent.messages for b in m["content"]) == 5
