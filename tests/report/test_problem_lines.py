"""Issue 11 follow-up, item 9: a refusal lists one problem a line in a fixed form, documented in the Reporter's
prompt, which ``report.problems.read_problems`` reads back; the offline Reporter recovers through that same parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from insightloom.errors import RenderRefused
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
