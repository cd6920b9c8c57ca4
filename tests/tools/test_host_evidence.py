"""Issue 11 follow-up (items 3, 5): the Validator's, Reporter's and Auditor's items are ticked on what the host saw
its own tools do, never on files a script could write; those items are never "not possible"; job.json stays valid;
and the Tracker is shown the section of the agent that worked, whatever that agent's text names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from insightloom.plan import parse_plan
from insightloom.runtime import JobRuntime
from insightloom.tools.report_tools import make_audit_report, make_render_report, make_validate_calculations
from plan_tool_kit import call_update_plan, result_text, runtime_with_plan

PLAN = """# Plan
## thought
Because.
## title
Sales
## steps
### 1. Coder: Analysis
- [x] Compute totals
### 2. Validator: Verification
- [ ] Re-run every check
### 3. Reporter: Report
- [ ] Write the report
### 4. Auditor: Audit
- [ ] Audit the DOCX
"""
VALIDATE, REPORT, AUDIT = "Re-run every check", "Write the report", "Audit the DOCX"


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    runtime = runtime_with_plan(tmp_path, PLAN)
    (runtime.root / "calculation_metadata.json").write_text(
        json.dumps({"generated_at": "2025-01-01T00:00:00Z", "calculations": []}), encoding="utf-8"
    )
    return runtime


def _plant_outputs(rt: JobRuntime) -> None:
    """What a script in the job folder can write without any host tool running."""
    (rt.root / "citations.json").write_text('{"metadata": {}, "citations": []}', encoding="utf-8")
    (rt.root / "final_report.docx").write_bytes(b"PK\x03\x04")
    (rt.root / "audit_findings.json").write_text('{"verdict": "pass"}', encoding="utf-8")


def _open(rt: JobRuntime) -> list[str]:
    return parse_plan(rt.state.full_plan).open_items()


def test_files_a_script_wrote_are_no_evidence(rt: JobRuntime) -> None:
    _plant_outputs(rt)
    result = call_update_plan(rt, items=[VALIDATE, REPORT, AUDIT])
    assert isinstance(result, dict) and result["status"] == "error"
    text = result_text(result)
    for tool, file in [
        ("validate_calculations()", "citations.json"),
        ("render_report()", "final_report.docx"),
        ("audit_report()", "audit_findings.json"),
    ]:
        assert f"{tool} has not run successfully in this job, so {file}" in text and "Fix:" in text
    assert _open(rt) == [f"Validator: {VALIDATE}", f"Reporter: {REPORT}", f"Auditor: {AUDIT}"]


def test_items_are_ticked_once_the_host_tools_ran(rt: JobRuntime, contract: Any) -> None:
    assert "0 calculations" in make_validate_calculations(rt)._tool_func()
    assert "Ticked 1 item(s)" in result_text(call_update_plan(rt, items=[VALIDATE]))
    assert "Rendered final_report.docx" in make_render_report(rt)._tool_func(markdown="# Sales\n\n## Summary\n\nOk.\n")
    assert "Verdict: pass" in make_audit_report(rt)._tool_func()
    assert "Ticked 2 item(s)" in result_text(call_update_plan(rt, items=[REPORT, AUDIT]))
    assert parse_plan(rt.state.full_plan).complete
    job = json.loads((rt.root / "job.json").read_text(encoding="utf-8"))
    assert job["evidence"] == {"validated": 1, "rendered": 1, "audited": 1}
    contract("job", job)


def test_the_tool_must_have_run_and_its_file_must_be_there(rt: JobRuntime) -> None:
    rt.note_evidence("rendered")  # rendered once, then a script deleted the report
    refused = result_text(call_update_plan(rt, items=[REPORT]))
    assert "final_report.docx does not exist yet" in refused and REPORT in " ".join(_open(rt))


def test_a_resumed_job_keeps_what_its_tools_did(rt: JobRuntime) -> None:
    from insightloom.runtime import evidence_counts

    rt.note_evidence("validated")
    recorded = json.loads((rt.root / "job.json").read_text(encoding="utf-8"))["evidence"]
    assert evidence_counts(recorded) == {"validated": 1, "rendered": 0, "audited": 0}
    assert evidence_counts({"validated": "9", "rendered": True, "audited": -1}) == dict.fromkeys(
        ("validated", "rendered", "audited"), 0
    )


@pytest.mark.parametrize(("item", "role"), [(REPORT, "Reporter"), (AUDIT, "Auditor"), (VALIDATE, "Validator")])
def test_mandatory_items_cannot_be_declared_not_possible(rt: JobRuntime, item: str, role: str) -> None:
    result = call_update_plan(rt, not_possible=[f"{item} — not possible: no time left"])
    assert isinstance(result, dict) and result["status"] == "error"
    assert f"the {role}'s items cannot be marked not possible" in result_text(result)
    assert f"{role}: {item}" in _open(rt)


def test_a_not_possible_record_never_has_an_empty_reason(rt: JobRuntime, contract: Any) -> None:
    from insightloom.tools.completion import not_possible_records

    records = not_possible_records(PLAN.replace("- [x] Compute totals", "- [~] Compute totals"))
    assert records == [{"item": "Compute totals", "reason": "no reason was given", "role": "coder"}]
    rt.job.update(not_possible=records)
    contract("job", rt.job.status())


# --- the Tracker's section ------------------------------------------------------------------------------------------

CODER_SAYS = "## Status\nSUCCESS\n## Completed Tasks\n- Compute totals\n## Key Insights\n- Ready for the validator.\n"


def _tracker_section(rt: JobRuntime, task: str) -> str:
    from insightloom.agents.tool_agents import tool_agent_prompt

    prompt = tool_agent_prompt("tracker", rt, task)
    return prompt[prompt.rindex("<plan_section>") : prompt.rindex("</plan_section>")]


def test_a_role_named_in_the_agents_text_does_not_pick_the_tracked_section(rt: JobRuntime) -> None:
    rt.state.record("coder", CODER_SAYS)
    assert "### 1. Coder: Analysis" in _tracker_section(rt, f"Tick the items of this response:\n{CODER_SAYS}")
    assert "### 1. Coder: Analysis" in _tracker_section(rt, "Tick what is ready for the validator.")


def test_a_leading_response_header_names_the_tracked_agent(rt: JobRuntime) -> None:
    rt.state.record("coder", CODER_SAYS)
    section = _tracker_section(rt, "Response from validator:\n\n<response>\n## Status\nSUCCESS\n</response>")
    assert "### 2. Validator: Verification" in section and "Compute totals" not in section
