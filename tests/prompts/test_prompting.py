"""Tests for the prompt templates and their loader."""

from __future__ import annotations

import importlib.resources
import re
from pathlib import Path

import pytest

from insightloom import prompting
from insightloom.errors import ConfigError

TOOL_AGENT_BASE = {"plan_section", "other_sections", "clues", "max_tokens"}

# The exact placeholders of every shipped prompt (the agent factory and the offline model rely on these names).
EXPECTED_PLACEHOLDERS: dict[str, set[str]] = {
    "coordinator": {"request", "data_summary", "max_tokens"},
    "planner": {"request", "data_profile", "language", "max_tokens", "suggested_analyses"},
    "planner_revise": {
        "request",
        "data_profile",
        "previous_plan",
        "feedback",
        "revision",
        "max_tokens",
        "revision_requests",
    },
    "supervisor": {"full_plan", "max_reporter_retries", "max_tokens"},
    "coder": TOOL_AGENT_BASE | {"data_profile", "skills_catalog", "language"},
    "validator": TOOL_AGENT_BASE,
    "reporter": TOOL_AGENT_BASE | {"language"},
    "tracker": TOOL_AGENT_BASE,
    "auditor": TOOL_AGENT_BASE,
    "summarization": {"max_tokens"},
}

# Tags the offline model parses: placeholder -> (opening, closing) written around it.
TAGGED = {
    "plan_section": ("<plan_section>", "</plan_section>"),
    "other_sections": ("<other_sections>", "</other_sections>"),
    "clues": ("<clues>", "</clues>"),
    "full_plan": ("<full_plan>", "</full_plan>"),
    "previous_plan": ("<previous_plan>", "</previous_plan>"),
    "feedback": ("<feedback>", "</feedback>"),
    "skills_catalog": ("<skills>", "</skills>"),
    "suggested_analyses": ("<suggested_analyses>", "</suggested_analyses>"),
    "revision_requests": ("<revision_requests>", "</revision_requests>"),
}

STANDARD_FORMAT = [
    "## Status",
    "SUCCESS | PARTIAL_SUCCESS | ERROR",
    "## Completed Tasks",
    "## Key Insights",
    "## Generated Files",
]


def _values(name: str) -> dict[str, str]:
    return {key: f"VALUE_OF_{key.upper()}" for key in EXPECTED_PLACEHOLDERS[name]}


def test_prompt_names_cover_every_agent() -> None:
    assert set(prompting.PROMPT_NAMES) == set(EXPECTED_PLACEHOLDERS)


@pytest.mark.parametrize("name", sorted(EXPECTED_PLACEHOLDERS))
def test_prompt_ships_as_package_resource(name: str) -> None:
    resource = importlib.resources.files("insightloom") / "prompts" / f"{name}.md"
    assert resource.is_file()
    assert prompting.load_prompt(name) == resource.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(EXPECTED_PLACEHOLDERS))
def test_prompt_has_exactly_the_expected_placeholders(name: str) -> None:
    assert prompting.placeholders(prompting.load_prompt(name)) == EXPECTED_PLACEHOLDERS[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_PLACEHOLDERS))
def test_prompt_renders_every_placeholder(name: str) -> None:
    values = _values(name)
    text = prompting.render_prompt(name, **values)
    assert "${" not in text
    for value in values.values():
        assert value in text
    for key, (opening, closing) in TAGGED.items():
        if key in values:
            assert f"{opening}{values[key]}{closing}" in text


@pytest.mark.parametrize("name", sorted(EXPECTED_PLACEHOLDERS))
def test_no_per_call_placeholder_before_the_dynamic_marker(name: str) -> None:
    template = prompting.load_prompt(name)
    assert re.search(r"^<!-- dynamic -->$", template, re.MULTILINE), "every prompt needs the marker line"
    static, dynamic = prompting.split_static(template)
    assert prompting.placeholders(static) <= prompting.PER_CONFIG_PLACEHOLDERS
    assert prompting.placeholders(dynamic) == EXPECTED_PLACEHOLDERS[name] - prompting.PER_CONFIG_PLACEHOLDERS
    assert len(static) > 500, "the static prefix holds the role and rules"


@pytest.mark.parametrize("name", sorted(EXPECTED_PLACEHOLDERS))
def test_static_prefix_is_identical_across_calls(name: str) -> None:
    first = _values(name)
    second = {k: (v if k in prompting.PER_CONFIG_PLACEHOLDERS else v + "_other") for k, v in first.items()}
    static_a, dynamic_a = prompting.split_static(prompting.render_prompt(name, **first))
    static_b, dynamic_b = prompting.split_static(prompting.render_prompt(name, **second))
    assert static_a == static_b
    if EXPECTED_PLACEHOLDERS[name] - prompting.PER_CONFIG_PLACEHOLDERS:
        assert dynamic_a != dynamic_b


@pytest.mark.parametrize("name", ["supervisor", "coder", "validator", "reporter", "tracker", "auditor"])
def test_agents_state_the_standard_response_format_and_budget(name: str) -> None:
    text = prompting.render_prompt(name, **(_values(name) | {"max_tokens": "1234"}))
    for line in STANDARD_FORMAT:
        assert line in text
    assert "Keep your final answer under 1234 tokens" in text


@pytest.mark.parametrize("name", ["coordinator", "planner", "planner_revise"])
def test_front_agents_state_their_budget(name: str) -> None:
    text = prompting.render_prompt(name, **(_values(name) | {"max_tokens": "777"}))
    assert "Keep your final answer under 777 tokens" in text


def test_planner_copies_the_plan_format() -> None:
    text = prompting.load_prompt("planner")
    for line in [
        "# Plan",
        "## thought",
        "## title",
        "## steps",
        "### 1. Coder:",
        "### 2. Validator:",
        "### 3. Reporter:",
        "### 4. Auditor:",
        "- [ ] <task in exact words>",
    ]:
        assert line in text
    revise = prompting.load_prompt("planner_revise")
    assert "# Plan (Revised)" in revise
    assert "## revision_notes" in revise
    assert "Validator section can never be removed" in revise


def test_role_specific_rules_are_present() -> None:
    coordinator = prompting.load_prompt("coordinator")
    assert "handoff_to_planner(reason)" in coordinator
    supervisor = prompting.load_prompt("supervisor")
    for tool in ("coder(input)", "validator(input)", "reporter(input)", "tracker(input)", "auditor(input)"):
        assert tool in supervisor
    assert "Never skip the Validator" in supervisor
    coder = prompting.load_prompt("coder")
    for phrase in (
        "fresh Python process",
        "load_df()",
        "track_calculation",
        "append_result",
        "save_chart",
        "{{calc:<id>}}",
        "write_and_execute_tool(file_path, content, timeout)",
        "bash_tool(command, timeout)",
        "file_read(path)",
        "skill_tool(skill_name)",
        "identifier",
        "pii",
    ):
        assert phrase in coder
    reporter = prompting.load_prompt("reporter")
    for phrase in ("render_report(markdown)", "{{calc:<id>}}", "![", "table", "verified"):
        assert phrase in reporter
    assert "validate_calculations()" in prompting.load_prompt("validator")
    assert "update_plan(items)" in prompting.load_prompt("tracker")
    assert "audit_report()" in prompting.load_prompt("auditor")
    summary = prompting.load_prompt("summarization")
    assert "VERBATIM" in summary and "calculation id" in summary


def test_missing_value_names_the_placeholder() -> None:
    values = _values("coder")
    del values["clues"]
    with pytest.raises(ConfigError, match=r"\$\{clues\}") as info:
        prompting.render_prompt("coder", **values)
    assert "coder.md" in str(info.value)
    assert info.value.fix


def test_user_folder_overrides_by_name(tmp_path: Path) -> None:
    (tmp_path / "coder.md").write_text("Custom $$5 for ${who}\n<!-- dynamic -->\n${plan_section}\n", encoding="utf-8")
    text = prompting.render_prompt("coder", tmp_path, who="me", plan_section="S")
    assert text == "Custom $5 for me\n<!-- dynamic -->\nS\n"
    # A prompt the folder lacks falls back to the built-in one.
    assert prompting.load_prompt("tracker", tmp_path) == prompting.load_prompt("tracker")


def test_missing_prompt_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nonexistent.md"):
        prompting.load_prompt("nonexistent", tmp_path)


@pytest.mark.parametrize("bad", ["../coder", "Coder", "a/b", ""])
def test_invalid_prompt_name_is_refused(bad: str) -> None:
    with pytest.raises(ConfigError):
        prompting.load_prompt(bad)


def test_stray_dollar_in_override_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "tracker.md").write_text("costs $ 5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="tracker.md"):
        prompting.render_prompt("tracker", tmp_path)


def test_split_static_cuts_at_the_marker_line_only() -> None:
    text = "role\nrules mention <!-- dynamic --> inline\n<!-- dynamic -->\nper call\n"
    assert prompting.split_static(text) == ("role\nrules mention <!-- dynamic --> inline", "per call\n")
    assert prompting.split_static("no marker") == ("no marker", "")
