"""The Reporter's patch_report tool (issue 12, item 5): any model repairs a refused render or the last audit's
findings in place, the report is rendered again, and the answer says what changed and what is left."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from report_fixtures import build_job

from insightloom.config import Settings
from insightloom.jobs import JobFolder
from insightloom.runtime import JobRuntime
from insightloom.tools.report_tools import (
    ReportMemory,
    make_audit_report,
    make_patch_report,
    make_render_report,
    make_render_section,
    make_summary_table,
)

TABLE = "| Metric | Value |\n|---|---|\n| Orders | {{calc:order_count}} |\n"
GOOD = (
    "# Sales\n\n## Summary\nTotal revenue was {{calc:total_revenue}}. North took {{calc:top_share}} of it.\n\n"
    + TABLE
    + "\n## Conclusions\n- North leads.\n"
)


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    job = JobFolder.create(tmp_path / "artifacts")
    shutil.copytree(build_job(tmp_path / "built"), job.root, dirs_exist_ok=True)  # a validated job with a chart
    return JobRuntime.create(job, Settings(provider="offline"), "req", "en")


def _call(tool, **kwargs):
    return tool._tool_func(**kwargs)


def _text(answer: str | dict) -> str:
    return answer if isinstance(answer, str) else answer["content"][0]["text"]


def _tools(rt: JobRuntime):
    memory = ReportMemory()
    return make_render_report(rt, memory), make_render_section(rt, memory), make_patch_report(rt, memory)


def test_patch_after_a_refused_render_drops_the_typed_sentence_and_renders(rt: JobRuntime) -> None:
    render, _, patch = _tools(rt)
    draft = GOOD.replace("North took {{calc:top_share}} of it.", "North took 61.3% of it.")
    refused = _call(render, markdown=draft)
    assert isinstance(refused, dict) and "61.3" in _text(refused)
    answer = _call(patch)
    assert isinstance(answer, str), answer
    assert answer.startswith("Rendered final_report.docx")
    assert "dropped" in answer or "changed" in answer
    assert "61.3" in answer  # the change names the passage it took out
    report = (rt.root / "report.md").read_text(encoding="utf-8")
    assert "61.3" not in report and "Total revenue was {{calc:total_revenue}}." in report  # the rest kept
    assert rt.evidence["rendered"] == 1


def test_patch_repairs_a_refusal_from_render_section_problem_lines_passed_in(rt: JobRuntime) -> None:
    render, section, patch = _tools(rt)
    assert isinstance(_call(render, markdown=GOOD), str)
    refusal = _call(section, heading="Summary", markdown="Revenue {{calc:tampered}} grew.")
    assert isinstance(refusal, dict)
    # A fresh patch tool (another Reporter call) gets the refusal's lines as its argument.
    (rt.root / "report.md").write_text(GOOD.replace("{{calc:top_share}}", "{{calc:tampered}}"), encoding="utf-8")
    from insightloom.report.sections import split_sections, store_sections

    store_sections(rt.root, split_sections((rt.root / "report.md").read_text(encoding="utf-8")), replace_all=True)
    answer = _call(make_patch_report(rt), problems=_text(refusal))
    assert isinstance(answer, str), answer
    assert "tampered" not in (rt.root / "report.md").read_text(encoding="utf-8")


def test_patch_after_a_failing_audit_repairs_the_flagged_marker_and_the_audit_then_passes(rt: JobRuntime) -> None:
    render, _, patch = _tools(rt)
    stray = GOOD.replace("{{calc:total_revenue}}.", "{{calc:total_revenue}} [99].")
    assert isinstance(_call(render, markdown=stray), str)
    audit = make_audit_report(rt)
    first = _text(_call(audit))
    assert "Verdict: retry" in first
    findings = json.loads((rt.root / "audit_findings.json").read_text(encoding="utf-8"))
    assert any(f["type"] == "C" for f in findings["findings"])
    answer = _call(make_patch_report(rt))  # a new Reporter call: no refusal in memory, so the audit's findings
    assert isinstance(answer, str), answer
    assert "the last audit" in answer and "Left:" in answer
    assert "[99]" not in (rt.root / "report.md").read_text(encoding="utf-8")
    assert "Verdict: pass" in _text(_call(audit))
    del render, patch


def test_a_report_without_a_table_is_rendered_with_the_summary_table_added(rt: JobRuntime) -> None:
    render, _, _ = _tools(rt)
    answer = _call(render, markdown=GOOD.replace(TABLE, ""))
    assert isinstance(answer, str), answer
    assert "summary table" in answer and "added" in answer
    report = (rt.root / "report.md").read_text(encoding="utf-8")
    assert "### Key figures" in report and "| Measure | Value |" in report
    assert (rt.root / "final_report.docx").exists()


def test_patch_with_nothing_to_repair_from_names_the_fix(rt: JobRuntime) -> None:
    patch = make_patch_report(rt)
    assert "render it first" in _text(_call(patch))
    (rt.root / "report.md").write_text(GOOD, encoding="utf-8")
    answer = _text(_call(patch))
    assert "Nothing to repair" in answer and "patch_report(problems)" in answer


def test_patch_takes_a_typed_number_out_of_the_title_and_keeps_the_sections(rt: JobRuntime) -> None:
    render, _, patch = _tools(rt)
    assert isinstance(_call(render, markdown="# Sales in 12 regions\n\n## Summary\n" + TABLE), dict)
    answer = _call(patch)
    assert isinstance(answer, str), answer
    report = (rt.root / "report.md").read_text(encoding="utf-8")
    assert "12 regions" not in report and "| Orders | {{calc:order_count}} |" in report


def test_patch_leaves_out_a_chart_whose_sidecar_caption_was_refused(rt: JobRuntime) -> None:
    (rt.root / "charts" / "revenue.json").write_text(json.dumps({"caption": "North has 61.3%"}), encoding="utf-8")
    render, _, patch = _tools(rt)
    refused = _call(render, markdown=GOOD + "\n![Revenue by region](charts/revenue.png)\n")
    assert isinstance(refused, dict) and "61.3" in _text(refused)
    answer = _call(patch)
    assert isinstance(answer, str), answer
    report = (rt.root / "report.md").read_text(encoding="utf-8")
    assert "charts/revenue.png" not in report and "{{calc:total_revenue}}" in report


def test_summary_table_tool_returns_a_table_the_renderer_accepts(rt: JobRuntime) -> None:
    table = _call(make_summary_table(rt))
    assert isinstance(table, str) and table.startswith("| Measure | Value |")
    answer = _call(make_render_report(rt), markdown="# Sales\n\n## Summary\nThe key figures:\n\n" + table)
    assert isinstance(answer, str) and "1 tables" in answer


def test_the_reporter_is_given_the_patch_summary_and_conclusion_tools(rt: JobRuntime) -> None:
    from insightloom.agents.tool_agents import tools_for

    names = {tool.tool_name for tool in tools_for("reporter", rt)[0]}
    assert {"patch_report", "summary_table", "draft_conclusions", "render_report", "render_section"} <= names


# --- a whole job with an LLM-like Reporter --------------------------------------------------------------------------


def _llm_like_reporter():
    """A Reporter that slips a stray citation marker into its first render (the audit finds it, the render does
    not), then, on the Auditor's retry, calls patch_report() at once instead of rewriting the report."""
    import re

    from insightloom.models.offline.conversation import Reply

    first_ref = re.compile(r"\{\{calc:[a-z0-9_]+\}\}")
    state = {"slipped": False}

    def deviate(n, conv, brain):
        calls = [c for c in brain.tool_calls if c.name == "render_report" and c.input.get("markdown")]
        if calls and not state["slipped"]:
            state["slipped"] = True
            markdown = first_ref.sub(lambda m: m.group(0) + " [999]", calls[0].input["markdown"], count=1)
            return Reply.call("render_report", markdown=markdown)
        if "audit_findings.json" in conv.user_text and not conv.exchanges():
            return Reply.call("patch_report")
        return None

    deviate.hide = False  # the model sees its own calls and their results, as a hosted model does
    return deviate


@pytest.mark.e2e
def test_an_llm_like_reporter_that_patches_after_a_failing_audit_ends_completed(tmp_path, monkeypatch) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
    from harness import assert_outcome, run_scenario

    run = run_scenario(tmp_path, monkeypatch, {"reporter": _llm_like_reporter()})
    patches = run.results("reporter", "patch_report")
    assert patches and patches[-1].status == "success", [p.result[:300] for p in patches]
    assert "the last audit" in patches[-1].result and "[999]" in patches[-1].result
    assert run.job()["audits"] >= 2  # the first audit failed, the patched report passed the next
    assert_outcome(run, "completed")
