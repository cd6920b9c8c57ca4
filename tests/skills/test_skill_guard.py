"""``skill_tool`` and the ``allowed-tools`` guard, driven through a real Strands Agent and a scripted model."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import pytest
from strands import Agent, tool
from strands.models import Model

from insightloom.skills import SkillCatalog, discover_skills, make_skill_tool


class ScriptedModel(Model):
    """A model that replays a fixed list of turns: ``("tool", name, input)`` or ``("text", text)``."""

    def __init__(self, turns: list[tuple[Any, ...]]) -> None:
        self.turns = list(turns)
        self.calls = 0

    def update_config(self, **model_config: Any) -> None:
        """No configuration."""

    def get_config(self) -> dict[str, Any]:
        return {}

    def structured_output(
        self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        raise NotImplementedError

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        turn = self.turns.pop(0) if self.turns else ("text", "done")
        self.calls += 1
        for event in _events(turn, self.calls):
            yield event


def _events(turn: tuple[Any, ...], n: int) -> Iterator[dict[str, Any]]:
    yield {"messageStart": {"role": "assistant"}}
    if turn[0] == "tool":
        _, name, tool_input = turn
        yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"t{n}", "name": name}}}}
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(tool_input)}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}
    else:
        yield {"contentBlockDelta": {"delta": {"text": turn[1]}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


@pytest.fixture
def catalog(tmp_path: Path) -> SkillCatalog:
    root = tmp_path / "skills"
    for name, extra in [("sql-only", "allowed-tools: write_and_execute_tool\n"), ("free-skill", "")]:
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: test skill {name}\n{extra}---\nINSTRUCTIONS OF {name}\n",
            encoding="utf-8",
        )
    return discover_skills(cwd=tmp_path)


def _agent(catalog: SkillCatalog, turns: list[tuple[Any, ...]], executed: list[str]) -> Agent:
    @tool
    def bash_tool(command: str) -> str:
        """Run a shell command (test double)."""
        executed.append(f"bash:{command}")
        return "ok"

    @tool
    def write_and_execute_tool(file_path: str, content: str) -> str:
        """Write and run a script (test double)."""
        executed.append(f"write:{file_path}")
        return "ran"

    skill_tool, guard = make_skill_tool(catalog)
    return Agent(
        model=ScriptedModel(turns),
        tools=[skill_tool, bash_tool, write_and_execute_tool],
        hooks=[guard],
        callback_handler=None,
        system_prompt="test",
    )


def _tool_results(agent: Agent) -> dict[str, dict[str, Any]]:
    """Map toolUseId -> toolResult from the agent's history."""
    results = {}
    for message in agent.messages:
        for block in message["content"]:
            if "toolResult" in block:
                results[block["toolResult"]["toolUseId"]] = block["toolResult"]
    return results


def _text(result: dict[str, Any]) -> str:
    return " ".join(part.get("text", "") for part in result["content"])


def test_skill_tool_returns_the_body(catalog: SkillCatalog) -> None:
    skill_tool, _ = make_skill_tool(catalog)
    assert skill_tool.tool_name == "skill_tool"
    text = skill_tool(skill_name="sql-only")
    assert "INSTRUCTIONS OF sql-only" in text and "write_and_execute_tool" in text


def test_allowed_tools_enforced_through_a_real_agent(catalog: SkillCatalog) -> None:
    executed: list[str] = []
    agent = _agent(
        catalog,
        [
            ("tool", "bash_tool", {"command": "before"}),  # no skill loaded yet: allowed
            ("tool", "skill_tool", {"skill_name": "sql-only"}),
            ("tool", "bash_tool", {"command": "after"}),  # not in allowed-tools: cancelled
            ("tool", "write_and_execute_tool", {"file_path": "a.py", "content": "print(1)"}),  # allowed
            ("tool", "skill_tool", {"skill_name": "free-skill"}),  # skill_tool is always allowed
            ("text", "finished"),
        ],
        executed,
    )
    agent("go")
    assert executed == ["bash:before", "write:a.py"]
    results = _tool_results(agent)
    assert results["t2"]["status"] == "success" and "INSTRUCTIONS OF sql-only" in _text(results["t2"])
    assert results["t3"]["status"] == "error"
    assert "bash_tool" in _text(results["t3"]) and "sql-only" in _text(results["t3"])
    assert "write_and_execute_tool" in _text(results["t3"])
    assert results["t5"]["status"] == "success"


def test_unknown_skill_is_an_error_result_and_restricts_nothing(catalog: SkillCatalog) -> None:
    executed: list[str] = []
    agent = _agent(
        catalog,
        [
            ("tool", "skill_tool", {"skill_name": "../sql-only"}),
            ("tool", "bash_tool", {"command": "x"}),
            ("text", "finished"),
        ],
        executed,
    )
    agent("go")
    results = _tool_results(agent)
    assert results["t1"]["status"] == "error"
    assert "sql-only" in _text(results["t1"]) and "free-skill" in _text(results["t1"])  # lists available skills
    assert executed == ["bash:x"]


def test_restriction_lasts_within_a_history_and_clears_with_a_fresh_one(catalog: SkillCatalog) -> None:
    executed: list[str] = []
    agent = _agent(
        catalog,
        [
            ("tool", "skill_tool", {"skill_name": "sql-only"}),
            ("text", "loaded"),
            ("tool", "bash_tool", {"command": "same-history"}),
            ("text", "blocked"),
            ("tool", "bash_tool", {"command": "fresh-history"}),
            ("text", "allowed"),
        ],
        executed,
    )
    agent("first")
    agent("second")  # history kept: the skill is still in context, so its restriction holds
    assert executed == []
    agent.messages.clear()
    agent("third")  # fresh history: no skill in context any more
    assert executed == ["bash:fresh-history"]
