"""Issue 20: claims are cited like numbers. ``{{claim:ID}}`` prints the claim's sentence and its marker; a claim that
is not verified, a claim word written as free text, and two claims that contradict are refused at render, naming
the passage and the fix; the repair takes out exactly those passages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claim_fixtures import build_claims_job, printed
from docx import Document

from insightloom.calc_refs import find_near_misses
from insightloom.errors import RenderRefused
from insightloom.report.problems import read_problems
from insightloom.report.render import check_markdown, render_report
from insightloom.report.repair import repair_refused


@pytest.fixture
def job(tmp_path: Path) -> Path:
    return build_claims_job(tmp_path / "job", {"claim_trend_units": "needs_review"})


def _body(docx: Path) -> str:
    doc = Document(str(docx))
    cells = [cell.text for table in doc.tables for row in table.rows for cell in row.cells]
    return "\n".join([p.text for p in doc.paragraphs] + cells)


def _refusal(markdown: str, job: Path) -> RenderRefused:
    with pytest.raises(RenderRefused) as info:
        render_report(markdown, job)
    return info.value


# --- {{claim:ID}} prints the claim's sentence and a marker numbered with the numbers ------------------------------


def test_a_claim_reference_prints_its_sentence_and_a_marker_numbered_with_the_numbers(job: Path) -> None:
    markdown = (
        "# Sales\n\n## Summary\nTotal revenue was {{calc:total_revenue}}.\n\n"
        "Over the months the series shows {{claim:claim_trend_amount}}.\n\nOrders: {{calc:order_count}}.\n"
    )
    result = render_report(markdown, job)
    assert result.markers == {"total_revenue": "[1]", "claim_trend_amount": "[2]", "order_count": "[3]"}
    assert result.claims == ["claim_trend_amount"]
    body = _body(result.docx_path)
    assert f"the series shows {printed('claim_trend_amount')} [2]." in body
    assert "volatile" not in body  # the verdict word is never printed raw
    citations = json.loads((job / "citations.json").read_text(encoding="utf-8"))["citations"]
    assert {c["calculation_id"]: c["citation_id"] for c in citations}["claim_trend_amount"] == "[2]"


def test_a_korean_report_prints_the_korean_sentence(tmp_path: Path) -> None:
    job = build_claims_job(tmp_path / "job", korean=True)
    result = render_report("# 매출\n\n## 요약\n월별 추이: {{claim:claim_trend_amount}}.\n", job)
    assert f"{printed('claim_trend_amount', 'ko')} [1]" in _body(result.docx_path)


def test_a_claim_in_a_table_cell_is_filled_in(job: Path) -> None:
    markdown = "# Sales\n\n## Detail\n| Claim | Verdict |\n|---|---|\n| Trend | {{claim:claim_trend_amount}} |\n"
    body = _body(render_report(markdown, job).docx_path)
    assert f"{printed('claim_trend_amount')} [1]" in body


# --- refused references --------------------------------------------------------------------------------------------


def test_a_claim_that_is_not_verified_is_refused_naming_it_and_the_paragraph(job: Path) -> None:
    refusal = _refusal("# Sales\n\n## Trend\nUnits: {{claim:claim_trend_units}}.\n", job)
    (line,) = read_problems(str(refusal))
    assert (line.kind, line.subject, line.section, line.where) == (
        "unverified reference",
        "{{claim:claim_trend_units}}",
        "Trend",
        "paragraph 1",
    )
    assert "has status 'needs_review' and cannot be printed" in str(refusal)
    assert not (job / "final_report.docx").exists()


@pytest.mark.parametrize("change", [{"evidence": {"largest_swing": 5.0}}, {"params": {"measure": "profit"}}])
def test_a_claim_changed_after_its_validation_is_refused_until_verified_again(job: Path, change: dict) -> None:
    # a script re-tracking the claim after validation would print new figures under a verified marker
    meta_path = job / "calculation_metadata.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    record = next(c for c in meta["calculations"] if c["id"] == "claim_trend_amount")
    if "evidence" in change:
        record["evidence"] = {**record["evidence"], **change["evidence"]}
    else:
        record["test"]["params"] = {**record["test"]["params"], **change["params"]}
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    citations_path = job / "citations.json"
    citations = json.loads(citations_path.read_text(encoding="utf-8"))
    for entry in citations["citations"]:  # the entry keeps the params the Validator saw, as validation writes it
        if entry["calculation_id"] == "claim_trend_amount":
            entry["params"] = {"measure": "amount", "by": "date", "period": "month"}
    citations_path.write_text(json.dumps(citations), encoding="utf-8")
    refusal = _refusal("# Sales\n\n## Trend\nAmounts: {{claim:claim_trend_amount}}.\n", job)
    assert "changed in calculation_metadata.json after it was verified" in str(refusal)


def test_an_unknown_claim_names_the_closest_tracked_claims(job: Path) -> None:
    refusal = _refusal("# Sales\n\n## Trend\nThe trend: {{claim:claim_trend_amont}}.\n", job)
    assert "unknown reference '{{claim:claim_trend_amont}}'" in str(refusal)
    assert "closest tracked ids: claim_trend_amount" in str(refusal)


def test_a_claim_cited_as_a_number_and_a_number_cited_as_a_claim_are_refused_and_repaired(job: Path) -> None:
    markdown = "# Sales\n\n## Summary\nThe trend: {{calc:claim_trend_amount}}. Revenue was {{claim:total_revenue}}.\n"
    refusal = _refusal(markdown, job)
    kinds = [(p.kind, p.subject) for p in read_problems(str(refusal))]
    assert kinds == [
        ("wrong-kind reference", "{{calc:claim_trend_amount}}"),
        ("wrong-kind reference", "{{claim:total_revenue}}"),
    ]
    assert "write {{claim:claim_trend_amount}} instead of {{calc:claim_trend_amount}}" in str(refusal)
    repaired = repair_refused(markdown, str(refusal))
    assert "{{claim:claim_trend_amount}}" in repaired and "{{calc:total_revenue}}" in repaired
    assert render_report(repaired, job).markers == {"claim_trend_amount": "[1]", "total_revenue": "[2]"}


@pytest.mark.parametrize(
    ("written", "fix"),
    [
        ("{claim:claim_trend_amount}", "write {{claim:claim_trend_amount}} instead of {claim:claim_trend_amount}"),
        ("{{Claim:claim_trend_amount}}", "write {{claim:claim_trend_amount}} instead of {{Claim:claim_trend_amount}}"),
        ("{{claim_trend_amount}}", "write {{claim:claim_trend_amount}} instead of {{claim_trend_amount}}"),
        ("{{claim:}}", "it names no claim"),
    ],
)
def test_claim_near_misses_are_refused_with_the_claim_correction(job: Path, written: str, fix: str) -> None:
    refusal = _refusal(f"# Sales\n\n## Trend\nThe months show {written}.\n", job)
    assert [p.kind for p in read_problems(str(refusal))] == ["near-miss reference"]
    assert fix in str(refusal)


def test_an_exact_claim_reference_is_no_near_miss() -> None:
    assert find_near_misses("Shows {{claim:claim_trend_amount}} and {{ claim : x }}.", ["claim_trend_amount"]) == []
    assert [m.written for m in find_near_misses("Shows [[claim:claim_x]] and <claim:y>.")] == [
        "claim:claim_x",
        "claim:y",
    ]


# --- free-text claim words -----------------------------------------------------------------------------------------


def test_a_free_text_claim_word_is_refused_with_the_phrase_the_paragraph_and_the_fix(job: Path) -> None:
    refusal = _refusal("# Sales\n\n## Summary\nTotal revenue was {{calc:total_revenue}}.\n\nRevenue is rising.\n", job)
    (line,) = read_problems(str(refusal))
    assert (line.kind, line.subject, line.section, line.where) == (
        "unsupported claim",
        "is rising",
        "Summary",
        "paragraph 2",
    )
    text = str(refusal)
    assert "state it with {{claim:ID}} in the same sentence" in text and "or drop the word" in text
    assert "claim_trend_amount (trend: volatile)" in text  # the tracked claim to cite, the trend ones first
    assert "claim_trend_units" not in text  # not verified: never offered


def test_a_claim_word_in_the_sentence_of_a_claim_reference_is_allowed(job: Path) -> None:
    render_report("# Sales\n\n## Summary\nRevenue is not rising steadily: {{claim:claim_trend_amount}}.\n", job)


@pytest.mark.parametrize(
    ("markdown", "where"),
    [
        ("# Sales\n\n## Revenue is rising\nSee {{calc:total_revenue}}.\n", "heading"),
        ("# Revenue dominates\n\n## Summary\nSee {{calc:total_revenue}}.\n", "title"),
        ("# Sales\n\n## Summary\n- North is the main driver.\n", "paragraph 1"),
        ("# Sales\n\n## Detail\n| Region | Note |\n|---|---|\n| North | spread evenly |\n", "table 1 row 2 col 2"),
        ("# Sales\n\n## Chart\n![Revenue is falling](charts/revenue.png)\n", "alt text of charts/revenue.png"),
        ("# Sales\n\n## Korean\n매출은 증가 추세입니다.\n", "paragraph 1"),
    ],
)
def test_claim_words_are_refused_everywhere_they_are_printed(job: Path, markdown: str, where: str) -> None:
    problems = [p for p in check_markdown(markdown, job) if p["kind"] == "unsupported_claim"]
    assert [p["where"] for p in problems] == [where]


@pytest.mark.parametrize("key", ["caption", "title"])
def test_a_claim_word_in_a_charts_sidecar_is_refused_and_the_repair_leaves_the_chart_out(job: Path, key: str) -> None:
    sidecar = job / "charts" / "revenue.json"
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    meta[key] = "North dominates revenue"
    sidecar.write_text(json.dumps(meta), encoding="utf-8")
    markdown = "# Sales\n\n## Chart\nRevenue was {{calc:total_revenue}}.\n\n![Revenue by region](charts/revenue.png)\n"
    refusal = _refusal(markdown, job)
    (line,) = read_problems(str(refusal))
    assert (line.kind, line.subject, line.chart) == ("unsupported claim", "dominates", "charts/revenue.png")
    assert "save the chart again with save_chart" in str(refusal)
    repaired = repair_refused(markdown, str(refusal))
    assert "charts/revenue.png" not in repaired and "{{calc:total_revenue}}" in repaired
    render_report(repaired, job)


def _with_category(job: Path, name: str, values: list[str]) -> None:
    path = job / "cache" / "profile.json"
    profile = json.loads(path.read_text(encoding="utf-8"))
    profile["tables"][0].setdefault("columns", []).append({"name": name, "role": "category", "dtype": "object",
                                           "top_values": [{"value": v, "count": 3} for v in values]})  # fmt: skip
    path.write_text(json.dumps(profile), encoding="utf-8")


def test_a_claim_word_in_backticks_is_a_name_from_the_data(job: Path) -> None:
    _with_category(job, "campaign", ["Main Driver", "Spring"])
    assert check_markdown("# Sales\n\n## Summary\nThe `Main Driver` campaign ran all year.\n", job) == []


def test_claim_words_in_backticks_that_name_nothing_in_the_data_are_still_refused(job: Path) -> None:
    """A model that wraps its verdict in backticks does not escape the check: only a real label is skipped."""
    problems = check_markdown("# Sales\n\n## Summary\nOverall, `revenue is rising` over the year.\n", job)
    assert [(p["kind"], p["phrase"]) for p in problems] == [("unsupported_claim", "is rising")]


def test_the_repair_drops_only_the_sentences_with_free_claim_words(job: Path) -> None:
    markdown = (
        "# Sales\n\n## Summary\nTotal revenue was {{calc:total_revenue}}. Revenue is rising.\n\n"
        "The trend: {{claim:claim_trend_amount}}.\n\n| Region | Note |\n|---|---|\n| North | spread evenly |\n"
    )
    repaired = repair_refused(markdown, str(_refusal(markdown, job)))
    assert "Total revenue was {{calc:total_revenue}}." in repaired and "is rising" not in repaired
    assert "The trend: {{claim:claim_trend_amount}}." in repaired
    assert "| North | - |" in repaired
    body = _body(render_report(repaired, job).docx_path)
    assert printed("claim_trend_amount") in body


# --- contradictions ------------------------------------------------------------------------------------------------


def test_two_contradicting_claims_are_refused_naming_both_and_the_repair_keeps_the_first(job: Path) -> None:
    markdown = (
        "# Sales\n\n## Drivers\nBy region: {{claim:claim_driver_region}}.\n\n"
        "## Concentration\nBy group totals: {{claim:claim_concentration_region}}.\n"
    )
    refusal = _refusal(markdown, job)
    (line,) = read_problems(str(refusal))
    assert (line.kind, line.subject, line.section) == (
        "contradicting claim",
        "{{claim:claim_concentration_region}}",
        "Concentration",
    )
    assert "contradicts {{claim:claim_driver_region}}" in str(refusal)
    assert "cannot be the main driver while the measure is spread evenly" in str(refusal)
    repaired = repair_refused(markdown, str(refusal))
    assert "{{claim:claim_driver_region}}" in repaired and "claim_concentration_region" not in repaired
    assert render_report(repaired, job).claims == ["claim_driver_region"]


def test_each_claim_alone_renders(job: Path) -> None:
    for claim_id in ("claim_driver_region", "claim_concentration_region"):
        render_report(f"# Sales\n\n## Summary\nBy region: {{{{claim:{claim_id}}}}}.\n", job)


# --- append_result: the Coder's notes cite claims the same way ----------------------------------------------------


def test_append_result_accepts_a_claim_reference_and_lists_it(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from insightloom.analysis_utils.jobdir import JOB_DIR_ENV
    from insightloom.analysis_utils.result_notes import append_result, read_results

    monkeypatch.setenv(JOB_DIR_ENV, str(job))
    append_result("Trend", findings=["Over the months: {{claim:claim_trend_amount}}."], script="code/x.py")
    (section,) = read_results(job / "all_results.txt")
    assert section.calculations == ["claim_trend_amount"]


@pytest.mark.parametrize(
    ("finding", "fix"),
    [
        ("Trend: {{claim:claim_trend_amont}}.", "'claim_trend_amont' is not a tracked claim (closest tracked ids: "),
        (
            "Trend: {{calc:claim_trend_amount}}.",
            "write {{claim:claim_trend_amount}} instead of {{calc:claim_trend_amount}}",
        ),
        ("Revenue: {{claim:total_revenue}}.", "write {{calc:total_revenue}} instead of {{claim:total_revenue}}"),
        (
            "Trend: {claim:claim_trend_amount}.",
            "write {{claim:claim_trend_amount}} instead of {claim:claim_trend_amount}",
        ),
    ],
)
def test_append_result_refuses_a_wrong_claim_reference_with_the_fix(
    job: Path, monkeypatch: pytest.MonkeyPatch, finding: str, fix: str
) -> None:
    from insightloom.analysis_utils.jobdir import JOB_DIR_ENV
    from insightloom.analysis_utils.result_notes import append_result

    monkeypatch.setenv(JOB_DIR_ENV, str(job))
    with pytest.raises(ValueError) as info:
        append_result("Trend", findings=[finding], script="code/x.py")
    assert fix in str(info.value)
    assert str(info.value).count("not a tracked") <= 1  # one problem named once


def test_the_plans_words_quoted_in_the_limitations_are_no_claim_even_with_claim_words(job: Path) -> None:
    from insightloom.report.labels import Labels
    from insightloom.report.render import _claim_phrase_problems, _Filler, _Place

    text = "Not done: `Test whether Region is the main driver of revenue`."
    fill = _Filler({}, {}, "en")
    quoted = _Place("Limitations", "bullet 1", text, quoted=True)
    assert _claim_phrase_problems([quoted], fill, Labels()) == []
    prose = _Place("Limitations", "bullet 1", text)
    assert [p["phrase"] for p in _claim_phrase_problems([prose], fill, Labels())] == ["main driver"]
