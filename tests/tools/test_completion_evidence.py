"""Issue 11, item 5: completion is checked against the job files, matched leniently but never ambiguously, and the
Tracker sees the section of the agent it tracks even on a second call in a row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from insightloom.plan import parse_plan
from insightloom.runtime import JobRuntime
from plan_tool_kit import call_update_plan, result_text, runtime_with_plan

PLAN = """# Plan
## thought
Because.
## title
Sales
## steps
### 1. Coder: Analysis
- [ ] Compute headline KPIs for `Revenue`: totals
- [ ] Break down `Revenue` by `Region`: group totals and bar chart
- [ ] Break down `Revenue` by `Channel`: group totals and bar chart
### 2. Validator: Verification
- [ ] Re-run every check
### 3. Reporter: Report
- [ ] Write the report
### 4. Auditor: Audit
- [ ] Audit the DOCX
"""
KPI = "Compute headline KPIs for `Revenue`: totals"
REGION = "Break down `Revenue` by `Region`: group totals and bar chart"
CHANNEL = "Break down `Revenue` by `Channel`: group totals and bar chart"


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    return runtime_with_plan(tmp_path, PLAN)


_call, _text = call_update_plan, result_text


def _track(rt: JobRuntime, *ids: str) -> None:
    calcs = [
        {
            "id": calc_id,
            "value": 1,
            "description": calc_id,
            "formula": "SUM(x)",
            "source_file": "s.csv",
            "source_columns": ["x"],
            "importance": "high",
        }
        for calc_id in ids
    ]
    (rt.root / "calculation_metadata.json").write_text(
        json.dumps({"generated_at": "2025-01-01T00:00:00Z", "calculations": calcs}), encoding="utf-8"
    )


def _result(rt: JobRuntime, plan_item: str, calculations: str = "", charts: str = "") -> None:
    section = (
        f"## A section\n- plan_item: {plan_item}\n- script: code/01.py\n- calculations: {calculations}\n"
        f"- charts: {charts}\n### findings\n- Total was {{{{calc:x}}}}.\n\n"
    )
    with open(rt.root / "all_results.txt", "a", encoding="utf-8") as handle:
        handle.write(section)


def _open_items(rt: JobRuntime) -> list[str]:
    return parse_plan(rt.state.full_plan).section("coder").unchecked()


def test_a_coder_item_without_a_results_section_is_not_ticked(rt: JobRuntime) -> None:
    result = _call(rt, items=[KPI])
    assert isinstance(result, dict) and result["status"] == "error"
    text = _text(result)
    assert "all_results.txt has no section" in text and "append_result(..., plan_item=<exact item>)" in text
    assert "not possible with a reason" in text  # the other honest way out is named too
    assert KPI in _open_items(rt)


def test_a_results_section_needs_a_tracked_calculation_or_a_saved_chart(rt: JobRuntime) -> None:
    _track(rt, "revenue_total")
    _result(rt, KPI, calculations="typed_by_hand")  # an id nobody tracked
    _result(rt, REGION, charts="charts/region.png")  # a chart that was never saved
    refused = _text(_call(rt, items=[KPI, REGION]))
    assert "no calculation tracked in calculation_metadata.json" in refused and "typed_by_hand" in refused
    assert _open_items(rt)[:2] == [KPI, REGION]

    _result(rt, KPI, calculations="revenue_total")
    (rt.root / "charts" / "region.png").write_bytes(b"\x89PNG")
    (rt.root / "charts" / "region.json").write_text('{"title": "t", "alt": "a", "caption": "c"}', encoding="utf-8")
    ticked = _text(_call(rt, items=[KPI, REGION]))
    assert "Ticked 2 item(s)" in ticked and "- Coder: 2/3 (open)" in ticked
    assert f"- [x] {KPI}" in (rt.root / "plan.md").read_text(encoding="utf-8")


def test_a_planted_chart_link_is_no_evidence(rt: JobRuntime, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.png"
    outside.write_bytes(b"\x89PNG")
    (rt.root / "charts" / "region.png").symlink_to(outside)
    (rt.root / "charts" / "region.json").write_text("{}", encoding="utf-8")
    _result(rt, REGION, charts="charts/region.png")
    assert _call(rt, items=[REGION])["status"] == "error"
    assert REGION in _open_items(rt)


@pytest.mark.parametrize(
    "wording",
    [
        "Compute headline KPIs for Revenue: totals",  # backticks dropped
        "Compute headline KPIs for `Revenue`: totals.",  # a trailing period
        "- [ ] compute headline KPIs   for `Revenue` : Totals",  # checkbox prefix, case and spacing
    ],
)
def test_wording_is_matched_leniently(rt: JobRuntime, wording: str) -> None:
    _track(rt, "revenue_total")
    _result(rt, KPI.replace("`", ""), calculations="revenue_total")  # the section's plan_item is normalised too
    assert "Ticked 1 item(s)" in _text(_call(rt, items=[wording]))
    assert _open_items(rt) == [REGION, CHANNEL]


def test_an_ambiguous_wording_is_refused_listing_the_candidates(rt: JobRuntime) -> None:
    _track(rt, "a", "b")
    _result(rt, REGION, calculations="a")
    _result(rt, CHANNEL, calculations="b")
    result = _call(rt, items=["Break down `Revenue`"])
    assert isinstance(result, dict) and result["status"] == "error"
    text = _text(result)
    assert "matches several open items" in text and REGION in text and CHANNEL in text
    assert _open_items(rt) == [KPI, REGION, CHANNEL]


def test_other_roles_need_their_tool_run_and_their_files(rt: JobRuntime) -> None:
    rt.state.set_plan(PLAN.replace("- [ ] Compute", "- [x] Compute").replace("- [ ] Break", "- [x] Break"))
    rt.evidence.update(validated=1, rendered=1, audited=1)  # the tools ran (tests/tools/test_host_evidence.py)
    for item, missing, make in [
        ("Re-run every check", "citations.json", lambda: '{"metadata": {}, "citations": []}'),
        ("Audit the DOCX", "audit_findings.json", lambda: '{"verdict": "pass"}'),
    ]:
        refused = _text(_call(rt, items=[item]))
        assert f"{missing} does not exist yet" in refused and "Fix:" in refused
        (rt.root / missing).write_text(make(), encoding="utf-8")
        assert "Ticked 1 item(s)" in _text(_call(rt, items=[item]))
    assert "final_report.docx does not exist" in _text(_call(rt, items=["Write the report"]))
    (rt.root / "final_report.docx").write_bytes(b"PK")
    assert "Ticked 1 item(s)" in _text(_call(rt, items=["Write the report"]))
    assert parse_plan(rt.state.full_plan).complete


def test_a_planted_fifo_is_no_chart(rt: JobRuntime) -> None:
    import os

    os.mkfifo(rt.root / "charts" / "region.png")  # opening it must neither block nor count
    (rt.root / "charts" / "region.json").write_text("{}", encoding="utf-8")
    _result(rt, REGION, charts="charts/region.png")
    assert "no calculation tracked" in _text(_call(rt, items=[REGION]))


def test_a_second_tracker_call_still_sees_the_tracked_section(rt: JobRuntime) -> None:
    from insightloom.agents.tool_agents import tool_agent_prompt

    rt.state.record("coder", "## Status\nSUCCESS\n## Completed Tasks\n- none\n")
    rt.state.record("tracker", "## Status\nSUCCESS\n## Completed Tasks\n- none\n")
    prompt = tool_agent_prompt("tracker", rt)
    section = prompt[prompt.rindex("<plan_section>") : prompt.rindex("</plan_section>")]
    assert "### 1. Coder: Analysis" in section and KPI in section
    assert "Re-run every check" not in section


def test_the_tracker_sees_the_agent_of_a_leading_response_header(rt: JobRuntime) -> None:
    from insightloom.agents.tool_agents import tool_agent_prompt

    rt.state.record("coder", "## Status\nSUCCESS\n")
    prompt = tool_agent_prompt("tracker", rt, "Response from validator:\n\n<response>\n## Status\nSUCCESS\n</response>")
    section = prompt[prompt.rindex("<plan_section>") : prompt.rindex("</plan_section>")]
    assert "### 2. Validator: Verification" in section and KPI not in section
