"""Older tool exchanges are reduced to stubs in one batch, and the offline Supervisor decides the same with them."""

from __future__ import annotations

import copy

from insightloom.agents.factory import REDUCTION
from insightloom.context.history import STUB_PREFIX, HistoryReducer, ReductionPolicy
from insightloom.context.tokens import count_request
from insightloom.models.offline.conversation import Conversation
from insightloom.models.offline.roles.supervisor import supervisor
from insightloom.state import RESPONSE_FORMAT

ROLES = ("coder", "validator", "reporter", "auditor")
PLAN = "# Plan\n## title\nT\n## steps\n" + "".join(
    f"### {i}. {role.capitalize()}: part\n- [ ] do the {role} work\n" for i, role in enumerate(ROLES, 1)
)
SYSTEM = f"Supervisor rules.\n## Maximum Reporter retries after an Auditor `retry`: 2\n<full_plan>{PLAN}</full_plan>"
FILLER = "The numbers are in all_results.txt and every one of them carries a check. " * 12


class FakeTeam:
    """Answers the Supervisor's tool calls like the tool agents would: the first audit asks for a retry."""

    def __init__(self) -> None:
        self.done: set[str] = set()
        self.audits = 0

    def answer(self, name: str) -> str:
        if name == "tracker":
            rows = "\n".join(
                f"- {r.capitalize()}: {int(r in self.done)}/1 ({'done' if r in self.done else 'open'})" for r in ROLES
            )
            body = f"## Status\nSUCCESS\n## Completed Tasks\n- none\nTicked 1 item(s).\n## Plan Status\n{rows}"
        elif name == "auditor":
            self.audits += 1
            verdict = "retry" if self.audits == 1 else "pass"
            if verdict == "pass":
                self.done.add("auditor")
            body = f"## Status\nSUCCESS\n## Key Insights\n- Verdict: {verdict}\n- {FILLER}"
        else:
            self.done.add(name)
            body = f"## Status\nSUCCESS\n## Completed Tasks\n- do the {name} work\n## Key Insights\n- {FILLER}"
        return RESPONSE_FORMAT.format(agent=name, text=body)


def run_supervisor(reducer: HistoryReducer | None) -> tuple[list[str], list[int], list[dict]]:
    """Drive the offline Supervisor brain to its final answer; returns its calls and the tokens of each request."""
    team = FakeTeam()
    messages: list[dict] = [{"role": "user", "content": [{"text": "Execute the approved plan."}]}]
    calls: list[str] = []
    sizes: list[int] = []
    for step in range(40):
        if reducer is not None:
            reducer.reduce(messages)
        sizes.append(count_request(messages, None, SYSTEM))
        reply = supervisor(Conversation(SYSTEM, copy.deepcopy(messages), {*ROLES, "tracker"}))
        if not reply.tool_calls:
            calls.append("final:" + reply.text.splitlines()[1])
            return calls, sizes, messages
        name = reply.tool_calls[0].name
        calls.append(name)
        use = {"toolUse": {"toolUseId": f"t{step}", "name": name, "input": reply.tool_calls[0].input}}
        result = {
            "toolResult": {"toolUseId": f"t{step}", "status": "success", "content": [{"text": team.answer(name)}]}
        }
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    raise AssertionError("the Supervisor never finished")


def test_supervisor_decides_the_same_with_reduced_history_including_an_audit_retry() -> None:
    plain_calls, plain_sizes, _ = run_supervisor(None)
    reducer = HistoryReducer(REDUCTION["supervisor"])
    reduced_calls, reduced_sizes, messages = run_supervisor(reducer)
    assert reduced_calls == plain_calls
    assert plain_calls.count("reporter") == 2 and plain_calls.count("auditor") == 2  # the retry path was taken
    assert plain_calls[-1] == "final:SUCCESS"
    assert reducer.reductions >= 1
    stubs = [b for m in messages for b in m["content"] if "toolResult" in b]
    assert any(b["toolResult"]["content"][0]["text"].startswith(STUB_PREFIX) for b in stubs)
    # Bounded: the last request is far smaller than without reduction, and grows far less from the second one.
    assert reduced_sizes[-1] < plain_sizes[-1] * 0.7
    assert reduced_sizes[-1] / reduced_sizes[1] < plain_sizes[-1] / plain_sizes[1]


def test_nothing_is_reduced_below_the_threshold_and_stubs_never_change() -> None:
    policy = ReductionPolicy(keep_recent=1, threshold_tokens=10_000, input_tokens=50)
    script = "import pandas as pd\n" * 200
    messages: list[dict] = [{"role": "user", "content": [{"text": "go"}]}]
    for n in range(3):
        use = {
            "toolUse": {
                "toolUseId": f"t{n}",
                "name": "write_and_execute_tool",
                "input": {"file_path": f"0{n}.py", "content": script},
            }
        }
        result = {"toolResult": {"toolUseId": f"t{n}", "status": "success", "content": [{"text": "ok"}]}}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    reducer = HistoryReducer(policy)
    assert reducer.reduce(messages) == 0
    reducer.policy = ReductionPolicy(keep_recent=1, threshold_tokens=100, input_tokens=50)
    assert reducer.reduce(messages) > 0
    inputs = [b["toolUse"]["input"]["content"] for m in messages for b in m["content"] if "toolUse" in b]
    assert inputs[0] == f"{STUB_PREFIX} 200 lines sent earlier, saved as code/00.py."
    assert inputs[1] == f"{STUB_PREFIX} 200 lines sent earlier, saved as code/01.py."
    assert inputs[2] == script  # the newest exchange stays verbatim
    snapshot = copy.deepcopy(messages)
    assert reducer.reduce(messages) == 0 and messages == snapshot  # a stub is never rewritten
