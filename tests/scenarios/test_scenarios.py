"""Each scenario replays one deviation a real model shows, in one role, while the other roles behave.

Every scenario asserts its outcome class (``harness.assert_outcome``): ``completed`` with every printed number
verified and cited, or ``needs_review`` / ``failed`` with a reason that names the cause. The numbers in the names
are the issue's numbered problems (#1 … #9); the rest are the extra behaviours it lists.
"""

from __future__ import annotations

import json
import re

from harness import ScenarioRun, assert_outcome, body_text
from llm_like import CutOff, RawCall, at_calls, on_tool_calls, standard_response

from insightloom.models.offline.conversation import Conversation, Reply

WRONG_VIEW = """\
from coder_analysis_utils import load_df, track_calculation
df = load_df()
track_calculation("probe_revenue", int(df["revenue"].sum()), "Total revenue (probe)", "sum of revenue",
                  "sales.csv", ["revenue"], "low", check="SELECT SUM(revenue) FROM {view}", unit="count")
print("tracked")
"""
FRACTION_AS_PERCENT = """\
from coder_analysis_utils import load_df, track_calculation
df = load_df()
share = float((df["channel"] == "Web").mean()){scale}
track_calculation("probe_web_share", share, "Share of Web rows", "rows with channel Web / all rows", "sales.csv",
                  ["channel"], "low", unit="%",
                  check="SELECT 100.0 * AVG(CASE WHEN channel = 'Web' THEN 1 ELSE 0 END) FROM sales")
print(share)
"""
FSTRING_SLIP = """\
from coder_analysis_utils import append_result, load_df, track_calculation
df = load_df()
cid = "probe_units"
track_calculation(cid, int(df["units"].sum()), "Total units (probe)", "sum of units", "sales.csv", ["units"], "low",
                  check="SELECT SUM(units) FROM sales", unit="count")
append_result("Probe", findings=[f"Units sold: {{calc:{cid}}}"], plan_item="Probe")
"""
UNKNOWN_ID = """\
from coder_analysis_utils import append_result
append_result("Probe", findings=["Revenue is {{calc:revenue_totl}}"], plan_item="Probe")
"""


def failing_script(text: str = "raise RuntimeError('the column is missing')\n") -> Reply:
    return Reply.call("write_and_execute_tool", file_path="00_probe.py", content=text, timeout=60)


def swap_in_render(old: str, new: str, times: int = 1):
    """The Reporter's render call with ``old`` written as ``new``."""

    def change(tool_input: dict) -> dict | None:
        markdown = tool_input.get("markdown") or ""
        return {**tool_input, "markdown": markdown.replace(old, new, 1)} if old in markdown else None

    return on_tool_calls("render_report", change, times)


def ends_with_text(conv: Conversation, brain: Reply) -> bool:
    return bool(brain.text) and not brain.tool_calls


def assert_refused(run: ScenarioRun, role: str, tool: str, *needles: str) -> str:
    """One of the role's calls of ``tool`` got a tool error holding every needle; returns it."""
    errors = run.errors(role, tool)
    found = [e for e in errors if all(n in e for n in needles)]
    assert found, (needles, errors)
    return found[0]


# --- 1. typed numbers -----------------------------------------------------------------------------------------------


def test_1_reporter_types_a_number_once_is_refused_then_cites(scenario) -> None:
    run = scenario({"reporter": swap_in_render("{{calc:revenue_total}}", "12,345")})
    error = assert_refused(run, "reporter", "render_report", "12,345")
    assert "{{calc:" in error  # the fix is named: cite it
    assert_outcome(run, "completed")


def test_1_reporter_that_always_types_numbers_is_refused_and_the_patch_tool_leaves_the_number_out(scenario) -> None:
    run = scenario({"reporter": swap_in_render("{{calc:revenue_total}}", "12,345", times=1000)}, max_model_calls=120)
    assert_refused(run, "reporter", "render_report", "12,345")
    assert run.results("reporter", "patch_report"), "the Reporter never repaired its draft with patch_report"
    assert_outcome(run, "completed")  # every printed number verified and cited: the typed one is gone
    assert "12,345" not in body_text(run.job_dir / "final_report.docx")[0]


# --- 2. near-miss references ----------------------------------------------------------------------------------------


def test_2_coder_fstring_slip_in_append_result_fails_the_script_with_the_correction(scenario) -> None:
    run = scenario({"coder": at_calls({1: failing_script(FSTRING_SLIP)})})
    error = assert_refused(run, "coder", "write_and_execute_tool", "{calc:probe_units}")
    assert "{{calc:probe_units}}" in error
    assert_outcome(run, "completed")


def test_2_coder_cites_an_unknown_id_and_hears_the_close_one(scenario) -> None:
    run = scenario({"coder": at_calls({1: failing_script(UNKNOWN_ID)})})
    assert_refused(run, "coder", "write_and_execute_tool", "revenue_totl")
    assert_outcome(run, "completed")


def test_2_reporter_single_brace_reference_is_refused(scenario) -> None:
    run = scenario({"reporter": swap_in_render("{{calc:revenue_mean}}", "{calc:revenue_mean}")})
    assert_refused(run, "reporter", "render_report", "{calc:revenue_mean}", "{{calc:revenue_mean}}")
    assert_outcome(run, "completed")


def test_2_reporter_wrong_case_reference_is_refused(scenario) -> None:
    run = scenario({"reporter": swap_in_render("{{calc:revenue_mean}}", "{{Calc:REVENUE_MEAN}}")})
    assert_refused(run, "reporter", "render_report", "{{Calc:REVENUE_MEAN}}")
    assert_outcome(run, "completed")


# --- 3. an item the Coder cannot do ---------------------------------------------------------------------------------


def add_coder_item(conv: Conversation, brain: Reply) -> Reply:
    lines = brain.text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("### 1. Coder"))
    lines.insert(at + 1, "- [ ] Forecast next year's revenue per customer segment with a neural network")
    return Reply(text="\n".join(lines))


def test_3_an_item_the_coder_cannot_do_is_settled_as_not_possible_and_the_job_reports(scenario) -> None:
    run = scenario({"planner": at_calls({1: add_coder_item})})
    assert_outcome(run, "completed")
    plan = (run.job_dir / "plan.md").read_text(encoding="utf-8")
    assert re.search(r"^- \[~\] Forecast next year's revenue.*not possible: .+", plan, re.M), plan
    settled = run.job()["not_possible"]
    assert [entry["item"] for entry in settled] == [
        "Forecast next year's revenue per customer segment with a neural network"
    ]
    text, _, _ = body_text(run.job_dir / "final_report.docx")
    limitations = text.split("Limitations", 1)[1]  # listed in the report's limitations
    assert "Forecast next year's revenue per customer segment with a neural network — not possible:" in limitations


# --- 4. a wrong check -----------------------------------------------------------------------------------------------


def test_4_a_check_on_a_wrong_view_fails_the_script_naming_the_views_and_the_coder_fixes_it(scenario) -> None:
    wrong = failing_script(WRONG_VIEW.format(view="sales_data"))
    fixed = failing_script(WRONG_VIEW.format(view="sales"))
    run = scenario({"coder": at_calls({1: wrong, 2: fixed})})
    error = assert_refused(run, "coder", "write_and_execute_tool", "probe_revenue", "sales_data")
    assert "sales" in error.split("sales_data", 1)[1]  # the available views are listed after the bad one
    assert_outcome(run, "completed")
    statuses = {c["calculation_id"]: c["verification_status"] for c in citations(run)}
    assert statuses["probe_revenue"] == "verified"


def test_4_a_coder_that_tracks_a_percent_as_a_fraction_hears_percent_vs_fraction(scenario) -> None:
    fraction = failing_script(FRACTION_AS_PERCENT.format(scale=""))
    percent = failing_script(FRACTION_AS_PERCENT.format(scale=" * 100"))
    run = scenario({"coder": at_calls({1: fraction, 2: percent})})
    error = assert_refused(run, "coder", "write_and_execute_tool", "probe_web_share")
    assert "percent" in error.lower() and "fraction" in error.lower()
    assert_outcome(run, "completed")


def test_4_an_uncited_number_that_needs_review_does_not_block_the_job(scenario) -> None:
    run = scenario({"coder": at_calls({1: failing_script(WRONG_VIEW.format(view="sales_data"))})})
    assert_outcome(run, "completed")
    entry = next(c for c in citations(run) if c["calculation_id"] == "probe_revenue")
    assert entry["verification_status"] == "needs_review" and entry["citation_id"] is None


def citations(run: ScenarioRun) -> list[dict]:
    return json.loads((run.job_dir / "citations.json").read_text(encoding="utf-8"))["citations"]


# --- 5. completion is checked ---------------------------------------------------------------------------------------


def claim_all_done(conv: Conversation, brain: Reply) -> Reply:
    items = re.findall(r"^\s*-\s*\[ \]\s+(.*)$", conv.tag("plan_section") or "", re.M)
    return Reply(text=standard_response("SUCCESS", items, ["All analyses done."], ["all_results.txt"]))


def test_5_a_coder_that_claims_success_after_a_script_that_printed_nothing_gets_no_tick(scenario) -> None:
    silent = failing_script("x = 1\n")
    run = scenario({"coder": at_calls({1: silent, 2: claim_all_done})})
    assert_refused(run, "tracker", "update_plan", "all_results.txt")
    assert_outcome(run, "completed")


def test_5_completed_tasks_without_backticks_and_with_a_period_still_match(scenario) -> None:
    def sloppy(n: int, conv: Conversation, brain: Reply) -> Reply | None:
        if not ends_with_text(conv, brain) or "## Completed Tasks" not in brain.text:
            return None
        head, _, rest = brain.text.partition("## Key Insights")
        done = re.sub(r"^(- .*)$", lambda m: m.group(1).replace("`", "") + ".", head, flags=re.M)
        return Reply(text=done.replace("## Status.", "## Status") + "## Key Insights" + rest)

    run = scenario({"coder": sloppy})
    assert run.models["coder"].deviated, "the Coder never answered with completed tasks"
    assert_outcome(run, "completed")
    assert not run.errors("tracker", "update_plan")


def test_5_a_second_tracker_call_in_a_row_still_sees_the_coder_section(scenario) -> None:
    again = Reply.call("tracker", input="Tick the items that coder completed, by their exact wording.")
    run = scenario({"supervisor": at_calls({3: again})})
    assert_outcome(run, "completed")
    second = run.models["tracker"].seen
    prompts = [c.tag("plan_section") or "" for c in second if c.user_text.startswith("Tick the items that coder")]
    assert len(prompts) >= 2 and all("Coder" in p and "- [" in p for p in prompts), prompts


def test_5_a_validator_that_claims_success_without_validating_gets_no_tick(scenario) -> None:
    run = scenario({"validator": at_calls({1: claim_all_done})})
    assert_refused(run, "tracker", "update_plan", "citations.json")
    assert_outcome(run, "completed")


def test_5_a_reporter_that_claims_success_without_rendering_gets_no_tick(scenario) -> None:
    run = scenario({"reporter": at_calls({1: claim_all_done})})
    assert_refused(run, "tracker", "update_plan", "final_report.docx")
    assert_outcome(run, "completed")


# --- 6. plans: lenient in, strict out -------------------------------------------------------------------------------


def rewrite_plan(change):
    return at_calls({1: lambda conv, brain: Reply(text=change(brain.text))})


def test_6_a_fenced_plan_with_a_preamble_is_accepted_first_time(scenario) -> None:
    run = scenario(
        {"planner": rewrite_plan(lambda plan: f"Here is the plan you asked for.\n\n```markdown\n{plan}\n```")}
    )
    assert_outcome(run, "completed")
    assert run.models["planner"].calls == 1
    assert (run.job_dir / "plan.md").read_text(encoding="utf-8").startswith("# Plan")


def test_6_a_plan_with_korean_role_headings_is_accepted(scenario) -> None:
    names = {"Coder": "코더", "Validator": "검증", "Reporter": "리포터", "Auditor": "감사"}

    def korean(plan: str) -> str:
        for english, korean_name in names.items():
            plan = re.sub(rf"^(### \d+\. ){english}:", rf"\g<1>{korean_name}:", plan, flags=re.M)
        return plan

    run = scenario({"planner": rewrite_plan(korean)})
    assert_outcome(run, "completed")
    assert run.models["planner"].calls == 1  # accepted as written, not only after a retry in English
    assert "### 1. Coder:" in (run.job_dir / "plan.md").read_text(encoding="utf-8")  # stored in the one format


def test_6_a_dashed_heading_is_its_own_section(scenario) -> None:
    run = scenario({"planner": rewrite_plan(lambda plan: plan.replace("### 3. Reporter: ", "### 3. Reporter – "))})
    assert_outcome(run, "completed")
    assert run.models["planner"].calls == 1
    assert "### 3. Reporter: Report" in (run.job_dir / "plan.md").read_text(encoding="utf-8")


def drop_coder_section(plan: str) -> str:
    return re.sub(r"^### 1\. Coder:.*?(?=^### )", "", plan, flags=re.M | re.S)


def test_6_a_plan_without_a_coder_section_is_refused_and_the_retry_sees_it(scenario) -> None:
    run = scenario({"planner": rewrite_plan(drop_coder_section)})
    assert_outcome(run, "completed")
    retry = run.models["planner"].seen[1]
    sent = json.dumps(retry.messages, ensure_ascii=False)
    assert "### 2. Validator:" in sent and "Coder" in sent  # its rejected plan and the problem
    assert "### 1. Coder:" in (run.job_dir / "plan.md").read_text(encoding="utf-8")


def test_6_a_plan_with_an_unparsed_checkbox_is_refused_naming_the_line(scenario) -> None:
    odd = rewrite_plan(lambda plan: plan.replace("- [ ] Profile the data", "- [?] Profile the data"))
    run = scenario({"planner": odd})
    assert_outcome(run, "completed")
    retry = json.dumps(run.models["planner"].seen[1].messages, ensure_ascii=False)
    assert "- [?] Profile the data" in retry and "not part of the plan format" in retry


# --- 7. output room -------------------------------------------------------------------------------------------------


def test_7_a_reporter_that_runs_out_of_output_room_is_told_to_render_by_section(scenario) -> None:
    run = scenario({"reporter": at_calls({1: CutOff("# Sales Analysis Report\n\n## Executive summary\n\nThe data")})})
    refusal = assert_refused(run, "supervisor", "reporter", "render_section")
    assert "output" in refusal.lower()
    assert_outcome(run, "completed")


def render_by_sections():
    """A Reporter that sends its report one section per call, then assembles it."""
    queue: list[Reply] = []

    def deviate(n: int, conv: Conversation, brain: Reply) -> Reply | None:
        if not queue:
            calls = [c for c in brain.tool_calls if c.name == "render_report" and c.input.get("markdown")]
            if not calls or any(e.name == "render_section" for e in conv.exchanges()):
                return None
            parts = re.split(r"(?m)^(?=## )", calls[0].input["markdown"])
            title, sections = parts[0], parts[1:]
            for section in sections:
                heading, _, body = section.partition("\n")
                queue.append(Reply.call("render_section", heading=heading.removeprefix("## ").strip(), markdown=body))
            queue.append(Reply.call("render_report"))
            assert title.startswith("# ")
        return queue.pop(0)

    return deviate


def test_7_a_reporter_can_render_section_by_section(scenario) -> None:
    run = scenario({"reporter": render_by_sections()})
    assert len(run.models["reporter"].deviated) >= 4
    assert not run.errors("reporter")
    assert_outcome(run, "completed")


# --- 8. the supervising loop ----------------------------------------------------------------------------------------


def test_8_a_supervisor_that_ends_its_turn_early_is_called_again(scenario) -> None:
    run = scenario({"supervisor": at_calls({3: Reply(text="I have started the analysis; the rest will follow.")})})
    assert_outcome(run, "completed")
    tasks = [c.user_text for c in run.models["supervisor"].seen]
    assert any("open item(s)" in json.dumps(c.messages) for c in run.models["supervisor"].seen), tasks[:1]


def test_8_a_supervisor_that_gives_up_at_once_fails_naming_the_open_items(scenario) -> None:
    run = scenario({"supervisor": lambda n, conv, brain: Reply(text="Done.")})
    assert_outcome(run, "failed", reason="Profile the data")


def test_8_a_supervisor_that_refuses_once_is_asked_again_with_the_open_items_and_completes(scenario) -> None:
    run = scenario({"supervisor": at_calls({1: Reply(text="I'm sorry, but I can't help with that request.")})})
    assert_outcome(run, "completed")
    second = run.models["supervisor"].seen[1]
    assert "open item(s)" in json.dumps(second.messages) and "Profile the data" in json.dumps(second.messages)


def test_8_a_supervisor_that_refuses_twice_fails_saying_the_model_refused(scenario) -> None:
    refusal = "I'm sorry, but I can't help with analysing this data set for you today."
    run = scenario({"supervisor": lambda n, conv, brain: Reply(text=refusal)})
    assert_outcome(run, "failed", reason="The Supervisor model refused the task twice")
    assert refusal[:60] in (run.outcome.error or "") and "Profile the data" in (run.outcome.error or "")
    assert len(run.models["supervisor"].seen) == 2  # asked once more, then stopped


def test_8_an_empty_first_supervisor_turn_is_asked_again(scenario) -> None:
    run = scenario({"supervisor": at_calls({1: Reply(text="")})})
    assert_outcome(run, "completed")


# --- 9. smaller slips -----------------------------------------------------------------------------------------------


def test_9_shortened_supervisor_results_name_the_open_items(scenario) -> None:
    run = scenario({})
    assert_outcome(run, "completed")
    transcript = (run.job_dir / "transcripts" / "supervisor.json").read_text(encoding="utf-8")
    stubs = re.findall(r"\[reduced\][^\"]*", transcript)
    assert stubs and all("plan checkboxes" not in s for s in stubs)
    assert any("Open plan items when this result was shortened" in s for s in stubs)


# --- extra behaviours -----------------------------------------------------------------------------------------------


def test_a_tool_call_with_malformed_json_gets_an_error_and_the_job_goes_on(scenario) -> None:
    broken = RawCall("write_and_execute_tool", '{"file_path": "00_probe.py", "content": "print(1)"')
    run = scenario({"coder": at_calls({1: broken})})
    assert run.errors("coder"), "the malformed call got no error"
    assert_outcome(run, "completed")


def test_a_call_to_a_tool_that_does_not_exist_is_an_error_naming_it(scenario) -> None:
    run = scenario({"coder": at_calls({1: Reply.call("python_repl", code="print(1)")})})
    assert_refused(run, "coder", None, "python_repl")
    assert_outcome(run, "completed")


def test_a_supervisor_that_calls_the_reporter_first_is_refused(scenario) -> None:
    run = scenario({"supervisor": at_calls({1: Reply.call("reporter", input="Write the report now.")})})
    assert_refused(run, "supervisor", "reporter", "Refused", "Profile the data")
    assert_outcome(run, "completed")


def test_a_model_that_repeats_the_same_failing_call_five_times_runs_it_twice_then_is_stopped(scenario) -> None:
    run = scenario({"coder": at_calls(dict.fromkeys(range(1, 6), failing_script()))})
    assert_outcome(run, "completed")
    errors = [e for e in run.errors("coder", "write_and_execute_tool") if "00_probe.py" in e or "exact" in e]
    refused = [e for e in errors if "Refused without running" in e]
    assert len(errors) == 4 and len(refused) == 2, errors  # two runs, two refusals quoting the error
    assert "the column is missing" in refused[0]
    assert_refused(run, "supervisor", "coder", "kept sending the same failing write_and_execute_tool call")
    runs = json.loads((run.job_dir / "run_info.json").read_text(encoding="utf-8"))["metrics"]["scripts_run"]
    assert runs >= 2


# --- reviewer's cases: typed numbers in other shapes, a number in a caption, a job that ends needs_review ----------

FIRST_REF = re.compile(r"\{\{calc:[^}]+\}\}")


def swap_first_reference(new: str, times: int = 1):
    """The Reporter's render with its first reference typed as ``new``."""

    def change(tool_input: dict) -> dict | None:
        markdown = tool_input.get("markdown") or ""
        return {**tool_input, "markdown": FIRST_REF.sub(new, markdown, count=1)} if FIRST_REF.search(markdown) else None

    return on_tool_calls("render_report", change, times)


def test_1_a_korean_report_with_a_typed_count_is_refused(scenario) -> None:
    run = scenario(
        {"reporter": swap_first_reference("34건")}, request="이 판매 데이터를 분석하고 보고서를 작성해 주세요"
    )
    assert_refused(run, "reporter", "render_report", "34")
    assert_outcome(run, "completed")


def test_1_a_number_inside_a_quoted_phrase_is_refused(scenario) -> None:
    run = scenario({"reporter": swap_first_reference('"grew 12.5% in 34 stores"')})
    assert_refused(run, "reporter", "render_report", "12.5")
    assert_outcome(run, "completed")


CAPTION_WITH_NUMBER = """\
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from coder_analysis_utils import load_df, save_chart
df = load_df()
fig, ax = plt.subplots()
ax.bar(["a", "b"], [1, 2])
save_chart(fig, "probe", title="Revenue", alt="Revenue by region",
           caption="North leads with 61.3% of revenue in 34 stores")
"""


def test_1_a_chart_caption_with_a_typed_number_fails_the_script(scenario) -> None:
    run = scenario({"coder": at_calls({1: failing_script(CAPTION_WITH_NUMBER)})})
    assert_refused(run, "coder", "write_and_execute_tool", "61.3")
    assert_outcome(run, "completed")


def test_a_reporter_that_keeps_typing_a_citation_marker_is_repaired_by_the_patch_tool(scenario) -> None:
    def stray_marker(tool_input: dict) -> dict | None:
        markdown = tool_input.get("markdown") or ""
        return {**tool_input, "markdown": FIRST_REF.sub(lambda m: m.group(0) + " [999]", markdown, count=1)}

    run = scenario({"reporter": on_tool_calls("render_report", stray_marker, times=1000)})
    assert run.results("reporter", "patch_report"), "the audit's finding was never repaired with patch_report"
    assert_outcome(run, "completed")  # patch_report dropped the stray marker the audit found
    assert "[999]" not in body_text(run.job_dir / "final_report.docx")[0]
