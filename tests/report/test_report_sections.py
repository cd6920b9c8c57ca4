"""Issue 11, item 7b: the Reporter renders section by section, so a refusal or an audit retry resends one section,
not the whole report."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from docx import Document
from report_fixtures import build_job

from insightloom.config import Settings
from insightloom.jobs import JobFolder
from insightloom.report.audit import audit_report
from insightloom.report.summary_table import SUMMARY_HEADINGS
from insightloom.runtime import JobRuntime

PLAN = """# Plan
## thought
Because.
## title
Quarterly sales
## steps
### 1. Reporter: Report
- [ ] Write the report
"""


def _runtime(tmp_path: Path, language: str = "en") -> JobRuntime:
    """A job folder holding a validated job (report_fixtures), with its runtime."""
    built = build_job(tmp_path / "built", korean=language == "ko")
    folder = JobFolder.create(tmp_path / "artifacts")
    shutil.copytree(built, folder.root, dirs_exist_ok=True)
    return JobRuntime.create(folder, Settings(provider="offline"), "req", language)


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    runtime = _runtime(tmp_path)
    runtime.state.set_plan(PLAN)
    return runtime


def _tool(rt: JobRuntime, name: str) -> Any:
    from insightloom.tools.report_tools import make_render_report, make_render_section

    return {"render_section": make_render_section, "render_report": make_render_report}[name](rt)._tool_func


def _text(result: Any) -> str:
    return result["content"][0]["text"] if isinstance(result, dict) else str(result)


def _ok(result: Any) -> str:
    assert not isinstance(result, dict), _text(result)
    return str(result)


def _headings(rt: JobRuntime) -> list[str]:
    """Headings of the DOCX, less the summary table's own (added because these reports hold no table)."""
    doc = Document(str(rt.root / "final_report.docx"))
    added = set(SUMMARY_HEADINGS.values())
    return [
        p.text
        for p in doc.paragraphs
        if p.style is not None and p.style.name.startswith(("Heading", "Title")) and p.text not in added
    ]


def test_sections_are_stored_then_rendered_in_order_under_the_plan_title(rt: JobRuntime) -> None:
    section, render = _tool(rt, "render_section"), _tool(rt, "render_report")
    _ok(section(heading="Summary", markdown="Revenue was {{calc:total_revenue}}."))
    _ok(section(heading="## Breakdown", markdown="Orders: {{calc:order_count}}.\n\n### Detail\nROAS {{calc:roas}}."))
    _ok(render())
    assert _headings(rt) == ["Quarterly sales", "Summary", "Breakdown", "Detail", "References"]
    report = (rt.root / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# Quarterly sales\n") and "### Detail\n\nROAS {{calc:roas}}." in report
    assert audit_report(rt.root).verdict == "pass"


def test_the_same_heading_replaces_its_section_in_place(rt: JobRuntime) -> None:
    section, render = _tool(rt, "render_section"), _tool(rt, "render_report")
    _ok(section(heading="Summary", markdown="Revenue was {{calc:total_revenue}}."))
    _ok(section(heading="Breakdown", markdown="Orders: {{calc:order_count}}."))
    _ok(section(heading="summary", markdown="## Summary\n\nROAS was {{calc:roas}}."))  # heading repeated, any case
    _ok(render())
    report = (rt.root / "report.md").read_text(encoding="utf-8")
    assert report.index("ROAS was") < report.index("Orders:") and "Revenue was" not in report
    assert report.count("## Summary") == 1


def test_a_refused_section_names_only_its_own_problems_and_is_not_stored(rt: JobRuntime) -> None:
    section, render = _tool(rt, "render_section"), _tool(rt, "render_report")
    _ok(section(heading="Summary", markdown="Revenue was {{calc:total_revenue}}."))
    refused = section(heading="Breakdown", markdown="We sold 34 units, {calc:roas} ROAS and {{calc:tampered}}.")
    text = _text(refused)
    assert isinstance(refused, dict) and refused["status"] == "error"
    assert "typed number '34' in section 'Breakdown'" in text
    assert "write {{calc:roas}} instead of {calc:roas}" in text and "{{calc:tampered}} has status" in text
    _ok(section(heading="Breakdown", markdown="ROAS was {{calc:roas}}."))
    _ok(render())
    assert "34 units" not in (rt.root / "report.md").read_text(encoding="utf-8")


def test_a_whole_report_is_stored_by_section_so_one_section_can_be_patched(rt: JobRuntime) -> None:
    section, render = _tool(rt, "render_section"), _tool(rt, "render_report")
    whole = (
        "# Own title\n\nIntro.\n\n## Summary\nRevenue was {{calc:total_revenue}}.\n\n"
        "## Breakdown\nWe sold 34 units.\n\n## Closing\nROAS {{calc:roas}}.\n"
    )
    refused = _text(render(markdown=whole))
    assert "typed number '34'" in refused and "render_section(heading, markdown)" in refused
    _ok(section(heading="Breakdown", markdown="Orders: {{calc:order_count}}."))  # only the failing section
    _ok(render())
    assert _headings(rt) == ["Own title", "Summary", "Breakdown", "Closing", "References"]
    assert "Orders: {{calc:order_count}}." in (rt.root / "report.md").read_text(encoding="utf-8")


def test_render_report_without_sections_says_what_to_do(rt: JobRuntime) -> None:
    text = _text(_tool(rt, "render_report")())
    assert "No sections are stored" in text and "render_section(heading, markdown)" in text


def test_the_reporter_has_both_tools(rt: JobRuntime) -> None:
    from insightloom.agents.tool_agents import tools_for

    tools, _ = tools_for("reporter", rt)
    assert {"render_section", "render_report"} <= {t.tool_name for t in tools}


def test_sections_live_under_the_job_folder_without_following_links(rt: JobRuntime, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (rt.root / "report_sections").symlink_to(outside, target_is_directory=True)
    text = _text(_tool(rt, "render_section")(heading="Summary", markdown="Revenue was {{calc:total_revenue}}."))
    assert "symbolic link" in text and not list(outside.iterdir())


def test_a_korean_section_is_matched_by_its_heading(tmp_path: Path) -> None:
    rt = _runtime(tmp_path, "ko")
    section, render = _tool(rt, "render_section"), _tool(rt, "render_report")
    _ok(section(heading="# 매출 보고서", markdown=""))
    _ok(section(heading="요약", markdown="총 매출은 {{calc:total_revenue}}입니다."))
    _ok(section(heading="요약", markdown="주문은 {{calc:order_count}}건입니다."))
    _ok(render())
    assert _headings(rt) == ["매출 보고서", "요약", "참고 문헌"]


def test_a_whole_report_reassembles_to_the_same_document(rt: JobRuntime) -> None:
    render = _tool(rt, "render_report")
    whole = (
        "# Own title\n\nIntro {{calc:roas}}.\n\n## Notes\nRevenue {{calc:total_revenue}}.\n\n"
        "## Detail\n### Notes\nOrders {{calc:order_count}}.\n"  # a heading used twice stays twice
    )
    _ok(render(markdown=whole))
    first = [p.text for p in Document(str(rt.root / "final_report.docx")).paragraphs]
    _ok(render())
    assert [p.text for p in Document(str(rt.root / "final_report.docx")).paragraphs] == first


FINDINGS_AB = "Intro.\n\n### A\nOrders {{calc:order_count}}.\n\n### B\nROAS {{calc:roas}}."


def test_replacing_a_section_drops_the_sub_sections_it_no_longer_has(rt: JobRuntime) -> None:
    section, render = _tool(rt, "render_section"), _tool(rt, "render_report")
    _ok(section(heading="Summary", markdown="Revenue was {{calc:total_revenue}}."))
    _ok(section(heading="Findings", markdown=FINDINGS_AB))
    _ok(section(heading="Closing", markdown="Done."))
    _ok(section(heading="Findings", markdown="Intro again.\n\n### A\nOrders {{calc:order_count}}."))
    _ok(render())
    assert _headings(rt) == ["Quarterly sales", "Summary", "Findings", "A", "Closing", "References"]
    assert "ROAS" not in (rt.root / "report.md").read_text(encoding="utf-8")


def test_a_sub_section_alone_is_replaced_in_place(rt: JobRuntime) -> None:
    section, render = _tool(rt, "render_section"), _tool(rt, "render_report")
    _ok(section(heading="Findings", markdown=FINDINGS_AB))
    _ok(section(heading="### A", markdown="Revenue {{calc:total_revenue}}."))
    _ok(render())
    assert _headings(rt) == ["Quarterly sales", "Findings", "A", "B", "References"]
    report = (rt.root / "report.md").read_text(encoding="utf-8")
    assert report.index("Revenue") < report.index("ROAS") and "Orders" not in report


def test_an_empty_markdown_deletes_the_section_and_says_so(rt: JobRuntime) -> None:
    section, render = _tool(rt, "render_section"), _tool(rt, "render_report")
    _ok(section(heading="Summary", markdown="Revenue was {{calc:total_revenue}}."))
    _ok(section(heading="Findings", markdown="Intro.\n\n### A\nOrders {{calc:order_count}}."))
    deleted = _ok(section(heading="## Findings", markdown=""))
    assert "Deleted section 'Findings' and its sub-sections" in deleted and "in order: Summary." in deleted
    assert "nothing was deleted" in _ok(section(heading="Nowhere", markdown="  "))
    _ok(render())
    assert _headings(rt) == ["Quarterly sales", "Summary", "References"]
    from insightloom.tools.report_tools import make_render_section

    assert "empty markdown deletes" in " ".join(make_render_section(rt).tool_spec["description"].split())


def test_replacing_the_title_keeps_every_other_section(rt: JobRuntime) -> None:
    section, render = _tool(rt, "render_section"), _tool(rt, "render_report")
    whole = "# Own title\n\nIntro.\n\n## Summary\nRevenue {{calc:total_revenue}}.\n\n### Detail\nROAS {{calc:roas}}.\n"
    _ok(render(markdown=whole))
    _ok(section(heading="# Own title", markdown="Intro again."))
    _ok(render())
    assert _headings(rt) == ["Own title", "Summary", "Detail", "References"]
