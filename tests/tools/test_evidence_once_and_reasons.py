"""Issue 11 follow-up (second review, 1 and 2): a not-possible reason carries no numbers into the report, and one
piece of evidence ticks one item only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from insightloom.plan import parse_plan
from insightloom.runtime import JobRuntime
from plan_tool_kit import call_update_plan, result_text, runtime_with_plan

KPI = "Compute headline KPIs for revenue"
REGION = "Break down revenue by region with a bar chart"
FORECAST = "Forecast next quarter revenue with ARIMA"
PLAN = f"""# Plan
## steps
### 1. Coder: Analysis
- [ ] {KPI}
- [ ] {REGION}
- [ ] {FORECAST}
### 2. Validator: Verification
- [ ] Re-run every check
"""


@pytest.fixture
def rt(tmp_path: Path) -> JobRuntime:
    return runtime_with_plan(tmp_path, PLAN)


def _track(rt: JobRuntime, *ids: str) -> None:
    calcs = [
        {"id": calc_id, "value": 1, "description": calc_id, "formula": "SUM(x)", "source_file": "s.csv",
         "source_columns": ["x"], "importance": "high"}
        for calc_id in ids
    ]  # fmt: skip
    (rt.root / "calculation_metadata.json").write_text(
        json.dumps({"generated_at": "2025-01-01T00:00:00Z", "calculations": calcs}), encoding="utf-8"
    )


def _script_writes_sections(rt: JobRuntime, *sections: tuple[str, str, str]) -> None:
    """What a script may write straight into all_results.txt: ``(plan_item, calculations, charts)`` sections."""
    text = "".join(
        f"## s\n- plan_item: {item}\n- script: code/x.py\n- calculations: {calcs}\n- charts: {charts}\n"
        "### findings\n- x\n\n"
        for item, calcs, charts in sections
    )
    (rt.root / "all_results.txt").write_text(text, encoding="utf-8")


def _save_chart_files(rt: JobRuntime, name: str) -> None:
    (rt.root / "charts" / f"{name}.png").write_bytes(b"\x89PNG")
    (rt.root / "charts" / f"{name}.json").write_text('{"title": "t", "alt": "a", "caption": "c"}', encoding="utf-8")


def _coder_open(rt: JobRuntime) -> list[str]:
    return parse_plan(rt.state.full_plan).section("coder").unchecked()


def test_one_calculation_listed_under_three_items_ticks_only_the_first(rt: JobRuntime) -> None:
    _track(rt, "total")
    _script_writes_sections(rt, (KPI, "total", ""), (REGION, "total", ""), (FORECAST, "total", ""))
    text = result_text(call_update_plan(rt, items=[KPI, REGION, FORECAST]))
    assert "Ticked 1 item(s)" in text
    assert _coder_open(rt) == [REGION, FORECAST]
    refusal = next(line for line in text.splitlines() if line.startswith(f"- '{REGION}'"))
    assert f"total (already evidence for '{KPI}')" in refusal
    assert "Fix: track a calculation or save a chart for this item" in refusal


def test_one_chart_is_evidence_for_the_first_section_listing_it(rt: JobRuntime) -> None:
    _save_chart_files(rt, "region")
    _script_writes_sections(rt, (REGION, "", "charts/region.png"), (FORECAST, "", "region.png"))
    result = call_update_plan(rt, items=[FORECAST])
    assert isinstance(result, dict) and result["status"] == "error"
    assert f"charts/region.png (already evidence for '{REGION}')" in result_text(result)
    assert "Ticked 1 item(s)" in result_text(call_update_plan(rt, items=[REGION]))


def test_a_later_section_with_its_own_evidence_still_ticks(rt: JobRuntime) -> None:
    _track(rt, "total", "by_region")
    _script_writes_sections(rt, (KPI, "total", ""), (REGION, "total, by_region", ""))
    assert "Ticked 2 item(s)" in result_text(call_update_plan(rt, items=[KPI, REGION]))
    assert _coder_open(rt) == [FORECAST]


def test_an_item_may_list_its_own_evidence_in_two_sections(rt: JobRuntime) -> None:
    _track(rt, "total")
    _script_writes_sections(rt, ("", "total", ""), (KPI, "total", ""), (KPI, "total", ""))  # a note section first
    assert "Ticked 1 item(s)" in result_text(call_update_plan(rt, items=[KPI]))


@pytest.mark.parametrize(
    "reason, number",
    [("only 34 of 120 stores have data; revenue fell 12.5%", "34"), ("34", "34"), ("12.5%", "12.5")],
)
def test_a_not_possible_reason_holding_a_number_is_refused(rt: JobRuntime, reason: str, number: str) -> None:
    for entry in ([f"{FORECAST} — not possible: {reason}"], [{"item": FORECAST, "reason": reason}]):
        result = call_update_plan(rt, not_possible=entry)
        assert isinstance(result, dict) and result["status"] == "error"
        text = result_text(result)
        assert f"'{number}'" in text and "give the reason in words" in text
        assert "numbers reach the report only as cited calculations" in text
    assert "[~]" not in rt.state.full_plan
    assert "not_possible" not in json.loads((rt.root / "job.json").read_text(encoding="utf-8"))


def test_a_reason_in_words_is_marked_and_a_data_name_is_no_number(rt: JobRuntime) -> None:
    profile = {"tables": [{"name": "sales", "columns": [{"name": "Plan 500", "role": "measure"}]}]}
    (rt.root / "cache").mkdir(exist_ok=True)
    (rt.root / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    reason = "the Plan 500 column holds no dates to forecast from"  # "500" alone would be refused
    text = result_text(call_update_plan(rt, not_possible=[f"{FORECAST} — not possible: {reason}"]))
    assert "Marked 1 item(s) not possible" in text
    assert f"- [~] {FORECAST} — not possible: {reason}" in rt.state.full_plan
