"""Issue 11 follow-up, item 9: a refusal lists one problem a line in a fixed form, documented in the Reporter's
prompt, which ``report.problems.read_problems`` reads back; the offline Reporter recovers through that same parser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from insightloom.errors import RenderRefused
from insightloom.models.offline.conversation import Conversation
from insightloom.models.offline.reporter_writer import reporter
from insightloom.prompting import load_prompt
from insightloom.report.problems import KINDS, ProblemLine, describe_problem, read_problems
from insightloom.report.render import render_report


def _refusal(job: Path, markdown: str) -> str:
    with pytest.raises(RenderRefused) as info:
        render_report(markdown, job)
    return "\n".join(f"- {describe_problem(p)}" for p in info.value.problems)  # type: ignore[attr-defined]


def test_every_problem_is_one_line_that_reads_back(job: Path) -> None:
    (job / "charts" / "revenue.json").write_text(json.dumps({"caption": "North has 61.3%"}), encoding="utf-8")
    markdown = (
        "# Sales\n\n## Summary\nRevenue grew 12.5% to {{calc:total_revenu}} and {{calc:tampered}}.\n\n"
        "## Detail\n| K | V |\n|---|---|\n| A | {calc:roas} |\n\n![Revenue](charts/revenue.png)\n"
    )
    text = _refusal(job, markdown)
    assert read_problems(text) == [
        ProblemLine("unknown reference", "{{calc:total_revenu}}", "Summary", "paragraph 1"),
        ProblemLine("unverified reference", "{{calc:tampered}}", "Summary", "paragraph 1"),
        ProblemLine("near-miss reference", "{calc:roas}", "Detail", "table 1 row 2 col 2"),
        ProblemLine("typed number", "12.5", "Summary", "paragraph 1"),
        ProblemLine("typed number", "61.3", "Detail", "caption of charts/revenue.png"),
    ]
    assert len(text.splitlines()) == 5 and all(" — fix: " in line for line in text.splitlines())
    assert read_problems(text)[-1].chart == "charts/revenue.png"


def test_the_reporter_prompt_documents_the_line_form() -> None:
    prompt = load_prompt("reporter")
    assert "`- <kind> '<subject>' in section '<section>', <where>: \"<passage>\" — fix: <what to do>`" in prompt
    assert all(f"`{kind}`" in prompt for kind in KINDS)


def _exchange(n: int, name: str, tool_input: dict[str, Any], result: str, status: str) -> list[dict[str, Any]]:
    use = {"toolUse": {"toolUseId": f"t{n}", "name": name, "input": tool_input}}
    done = {"toolResult": {"toolUseId": f"t{n}", "status": status, "content": [{"text": result}]}}
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [done]}]


RESULTS = """## Revenue by region
- plan_item: Revenue by region
- script: code/a.py
- calculations: total_revenue
- charts: charts/revenue.png
### findings
- Total revenue is {{calc:total_revenue}}.
"""


def test_the_offline_reporter_leaves_out_a_chart_whose_caption_was_refused(job: Path) -> None:
    (job / "charts" / "revenue.json").write_text(json.dumps({"caption": "North has 61.3%"}), encoding="utf-8")
    citations = (job / "citations.json").read_text(encoding="utf-8")
    first = reporter(Conversation("", [{"role": "user", "content": [{"text": "Write the report"}]}]))
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "Write the report"}]}]
    messages += _exchange(1, "file_read", {"path": "all_results.txt"}, RESULTS, "success")
    messages += _exchange(2, "file_read", {"path": "citations.json"}, citations, "success")
    draft = reporter(Conversation("", messages)).tool_calls[0].input["markdown"]
    assert first.tool_calls[0].name == "file_read" and "](charts/revenue.png)" in draft
    refusal = "Render refused. Rewrite these passages and call again:\n" + _refusal(job, draft)
    messages += _exchange(3, "render_report", {"markdown": draft}, refusal, "error")
    again = reporter(Conversation("", messages)).tool_calls[0].input["markdown"]
    assert "charts/revenue.png" not in again and "{{calc:total_revenue}}" in again
    render_report(again, job)
