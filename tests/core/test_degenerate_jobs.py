"""No degenerate success (issue 12, item 6): a job ends ``needs_review``, naming the reason in job.json, the CLI's
last line and the report, when no measure survives intake, numeric-looking columns were kept as text, or fewer
than ``min_verified_numbers`` verified numbers are printed. Exit 0 means a report an analyst can use."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from insightloom.config import load_settings
from insightloom.errors import ConfigError
from insightloom.report.usability import degenerate_reasons

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from harness import assert_outcome, body_text, run_scenario  # the scenarios' scripted-model harness

HEALTHY = {"tables": [{"view": "sales", "columns": [{"name": "revenue", "role": "measure"}]}]}


def _citations(job: Path, verified: int) -> None:
    import json

    entries = [
        {"calculation_id": f"c{n}", "citation_id": f"[{n + 1}]", "value": n, "verification_status": "verified"}
        for n in range(verified)
    ]
    label = {"calculation_id": "label", "citation_id": "[99]", "value": "North", "verification_status": "verified"}
    entries.append(label)
    entries.append({"calculation_id": "bad", "citation_id": "[98]", "value": 1, "verification_status": "needs_review"})
    entries.append({"calculation_id": "uncited", "citation_id": None, "value": 1, "verification_status": "verified"})
    (job / "citations.json").write_text(json.dumps({"metadata": {}, "citations": entries}), encoding="utf-8")


def test_a_healthy_report_has_no_degenerate_reason(tmp_path: Path) -> None:
    _citations(tmp_path, 3)
    assert degenerate_reasons(HEALTHY, tmp_path, minimum=3) == []


def test_no_measure_in_any_table_is_a_reason(tmp_path: Path) -> None:
    _citations(tmp_path, 5)
    profile = {"tables": [{"view": "t", "columns": [{"name": "city", "role": "category"}]}]}
    [reason] = degenerate_reasons(profile, tmp_path, minimum=3)
    assert reason.kind == "no_measure" and "measure" in reason.note


def test_numeric_looking_text_columns_are_a_reason_naming_them(tmp_path: Path) -> None:
    _citations(tmp_path, 5)
    profile = {"tables": [{**HEALTHY["tables"][0], "text_numeric_columns": ["price", "qty_2020"]}]}
    [reason] = degenerate_reasons(profile, tmp_path, minimum=3)
    assert reason.kind == "text_numeric"
    assert "`price` (`sales`)" in reason.note and "`qty_2020`" in reason.note  # digits only inside labels


def test_too_few_verified_numbers_printed_is_a_reason_counting_only_cited_verified_numbers(tmp_path: Path) -> None:
    _citations(tmp_path, 2)  # the label, the failed and the uncited calculation never count
    [reason] = degenerate_reasons(HEALTHY, tmp_path, minimum=3)
    assert reason.kind == "few_verified" and "`2`" in reason.note and "`3`" in reason.note
    assert "min_verified_numbers" in reason.note
    assert degenerate_reasons(HEALTHY, tmp_path, minimum=0) == []  # 0 turns the rule off


def test_the_notes_are_korean_for_a_korean_job(tmp_path: Path) -> None:
    profile = {"tables": [{"view": "t", "columns": [], "text_numeric_columns": ["가격"]}]}
    notes = " ".join(r.note for r in degenerate_reasons(profile, tmp_path, minimum=3, language="ko"))
    assert notes.count("검토 필요") == 3 and "`가격`" in notes


def test_min_verified_numbers_is_a_setting_with_a_default_of_three(tmp_path: Path) -> None:
    assert load_settings(env={}, cwd=tmp_path).min_verified_numbers == 3
    (tmp_path / "insightloom.yaml").write_text("min_verified_numbers: 5\n", encoding="utf-8")
    assert load_settings(env={}, cwd=tmp_path).min_verified_numbers == 5
    (tmp_path / "insightloom.yaml").write_text("min_verified_numbers: -1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="min_verified_numbers"):
        load_settings(env={}, cwd=tmp_path)


# --- whole offline jobs ---------------------------------------------------------------------------------------------


def _note_in_report(job_dir: Path) -> str:
    text, _, _ = body_text(job_dir / "final_report.docx")
    return text


@pytest.mark.e2e
def test_a_job_whose_measures_are_all_gone_ends_needs_review_naming_it(tmp_path, monkeypatch) -> None:
    csv = tmp_path / "places.csv"
    rows = [f"{city},{kind},{status}" for city in ("Oslo", "Lima", "Pune") for kind in ("shop", "cafe") for status in
            ("open", "closed", "moved")]  # fmt: skip
    csv.write_text("city,kind,status\n" + "\n".join(rows * 3) + "\n", encoding="utf-8")
    run = run_scenario(tmp_path, monkeypatch, {}, csv=csv)
    assert_outcome(run, "needs_review", reason="no column of the data survived intake as a measure")
    assert run.outcome.exit_code == 3
    assert "survived intake as a measure" in run.job()["review_reason"]
    assert "survived intake as a measure" in _note_in_report(run.job_dir)


@pytest.mark.e2e
def test_a_job_whose_only_numbers_are_text_ends_needs_review_naming_the_columns(tmp_path, monkeypatch) -> None:
    csv = tmp_path / "prices.csv"
    values = [f"{10 + n * 1.5}" for n in range(27)] + ["about 20", "unknown", "see note"]
    rows = [f"{['Oslo', 'Lima', 'Pune'][n % 3]},{value}" for n, value in enumerate(values)]
    csv.write_text("city,price\n" + "\n".join(rows) + "\n", encoding="utf-8")
    run = run_scenario(tmp_path, monkeypatch, {}, csv=csv)
    assert_outcome(run, "needs_review", reason="kept as text")
    assert "`price`" in run.job()["review_reason"]
    assert "kept as text" in _note_in_report(run.job_dir)


@pytest.mark.e2e
def test_a_job_with_fewer_verified_numbers_than_the_minimum_ends_needs_review(tmp_path, monkeypatch) -> None:
    run = run_scenario(tmp_path, monkeypatch, {}, min_verified_numbers=100_000)
    assert_outcome(run, "needs_review", reason="min_verified_numbers")
    assert run.outcome.exit_code == 3


@pytest.mark.e2e
def test_a_usable_report_still_completes_with_exit_0(tmp_path, monkeypatch) -> None:
    run = run_scenario(tmp_path, monkeypatch, {})
    assert_outcome(run, "completed")
    assert run.outcome.exit_code == 0
