"""track_claim writes a checked claim record; the Validator re-computes it with SciPy; tampering is caught."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claim_job import BREAKDOWN_SQL, TREND_SQL, make_job
from typer.testing import CliRunner

from insightloom.analysis_utils import ChecksFailed, flush_checks, load_calculations, track_claim
from insightloom.analysis_utils.module import generate_utils_module
from insightloom.validation import record_llm_verification, validate_job
from insightloom.validation.tiers import select_for_llm


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_job(tmp_path / "job", monkeypatch)


def _track_all() -> list[str]:
    return [
        track_claim("trend", "claim_trend_revenue", "data", TREND_SQL,
                    {"measure": "Revenue", "by": "Date", "period": "month", "agg": "sum"},
                    description="Trend of monthly Revenue", columns=["Date", "Revenue"]),
        track_claim("driver", "claim_driver_channel", "sales", BREAKDOWN_SQL, {"measure": "Revenue", "by": "Channel"},
                    description="Channel as a driver of Revenue", columns=["Channel", "Revenue"]),
        track_claim("driver", "claim_driver_region", "sales", BREAKDOWN_SQL, {"measure": "Revenue", "by": "Region"},
                    description="Region as a driver of Revenue", columns=["Region", "Revenue"]),
        track_claim("concentration", "claim_conc_region", "sales",
                    "SELECT Region, SUM(Revenue) FROM sales GROUP BY Region", {"measure": "Revenue", "by": "Region"},
                    description="Revenue by Region", columns=["Region", "Revenue"]),
        track_claim("correlation", "claim_corr_ads_leads", "sales",
                    "SELECT Ads, Leads FROM sales WHERE Ads IS NOT NULL AND Leads IS NOT NULL",
                    {"x": "Ads", "y": "Leads"}, description="Ads vs Leads", columns=["Ads", "Leads"]),
        track_claim("outlier", "claim_outlier_revenue", "sales", "SELECT Revenue FROM sales", {"measure": "Revenue"},
                    description="Extreme Revenue values", columns=["Revenue"]),
        track_claim("sentinel", "claim_sentinel_units", "sales", "SELECT Units FROM sales", {"measure": "Units"},
                    description="Codes in Units", columns=["Units"]),
        track_claim("comparison", "claim_web_vs_store", "sales", "SELECT Channel, Revenue FROM sales",
                    {"measure": "Revenue", "by": "Channel", "a": "Web", "b": "Store"},
                    description="Web vs Store average Revenue", columns=["Channel", "Revenue"]),
    ]  # fmt: skip


def test_track_claim_writes_the_record_and_returns_its_reference(job: Path) -> None:
    refs = _track_all()
    assert refs[0] == "{{claim:claim_trend_revenue}}"
    records = {r["id"]: r for r in load_calculations(job)}
    trend = records["claim_trend_revenue"]
    assert trend["kind"] == "claim" and trend["claim_kind"] == "trend" and trend["check"] == "stat:trend"
    assert trend["test"]["sql"] == TREND_SQL and trend["test"]["params"]["period"] == "month"
    assert trend["source_file"] == "sales.csv" and trend["test"]["params"]["unit"] == "USD"
    assert trend["evidence"]["n"] == 16 and trend["sentence"].startswith(("rising", "falling", "no clear trend"))
    assert records["claim_driver_channel"]["value"] == "main"
    assert records["claim_driver_region"]["value"] == "weak"
    assert records["claim_corr_ads_leads"]["value"] == "driven_by_extremes"
    assert records["claim_web_vs_store"]["value"] == "higher"
    assert flush_checks() == 8  # every claim re-computed from its SQL with SciPy at script end


def test_validator_verifies_claims_with_scipy_and_never_sends_them_to_sql_or_llm(job: Path) -> None:
    _track_all()
    flush_checks()
    summary = validate_job(job)
    assert summary.ok and len(summary.verified) == 8 and summary.queries == 0
    assert select_for_llm(load_calculations(job)) == []
    citations = json.loads((job / "citations.json").read_text(encoding="utf-8"))["citations"]
    entry = next(c for c in citations if c["calculation_id"] == "claim_driver_channel")
    assert entry["verification_method"] == "stat" and entry["check_value"] == "main"


def _tamper(job: Path, claim_id: str, **changes: object) -> None:
    path = job / "calculation_metadata.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for record in data["calculations"]:
        if record["id"] == claim_id:
            for key, value in changes.items():
                if key.startswith("evidence."):
                    record["evidence"][key.split(".", 1)[1]] = value
                else:
                    record[key] = value
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_tampered_verdict_needs_review_and_verify_exits_3(job: Path) -> None:
    from insightloom.cli import app

    _track_all()
    flush_checks()
    _tamper(job, "claim_driver_region", value="main")
    summary = validate_job(job)
    assert summary.needs_review == ["claim_driver_region"]
    assert summary.reasons["claim_driver_region"].startswith(
        "claim mismatch: verdict 'main' but the re-computation gives 'weak'"
    )
    result = CliRunner().invoke(app, ["verify", str(job)])
    assert result.exit_code == 3, result.stdout


def test_tampered_evidence_needs_review(job: Path) -> None:
    _track_all()
    flush_checks()
    _tamper(job, "claim_conc_region", **{"evidence.top_share": 61.0})
    summary = validate_job(job)
    assert summary.needs_review == ["claim_conc_region"]
    assert "top_share 61.0 but the re-computation gives" in summary.reasons["claim_conc_region"]


def test_a_claim_without_its_test_needs_review_with_the_fix(job: Path) -> None:
    _track_all()
    flush_checks()
    _tamper(job, "claim_outlier_revenue", test=None)
    summary = validate_job(job)
    assert "claim_outlier_revenue" in summary.needs_review
    assert "track_claim" in summary.reasons["claim_outlier_revenue"]


@pytest.mark.parametrize("check", ["SELECT 'weak' FROM sales LIMIT 1", None])
def test_a_claim_checked_by_sql_or_by_nothing_is_never_verified(job: Path, check: str | None) -> None:
    # a verdict word the SQL repeats, or an id for the Validator's own LLM pass, would print unchecked evidence
    _track_all()
    flush_checks()
    _tamper(job, "claim_driver_region", check=check)
    summary = validate_job(job)
    assert summary.needs_review == ["claim_driver_region"]
    assert "statistical test" in summary.reasons["claim_driver_region"]
    assert "claim_driver_region" not in select_for_llm(load_calculations(job))
    recorded = record_llm_verification(job, {"claim_driver_region": "weak"})
    assert "claim_driver_region" in recorded.rejected and "claim_driver_region" in recorded.needs_review


def test_evidence_the_test_does_not_give_is_a_mismatch(job: Path) -> None:
    # an extra "a"/"b" in the evidence would override the params in the printed sentence
    _track_all()
    flush_checks()
    _tamper(job, "claim_web_vs_store", **{"evidence.a": "Store", "evidence.b": "Web"})
    summary = validate_job(job)
    assert summary.needs_review == ["claim_web_vs_store"]
    assert "evidence 'a', 'b' is not the test's" in summary.reasons["claim_web_vs_store"]


def test_a_claim_sql_that_reads_no_table_is_refused_with_the_views(job: Path) -> None:
    with pytest.raises(ValueError, match="reads no table.*sales"):
        track_claim("trend", "claim_const", "sales", "SELECT unnest([1, 2, 3, 4, 5, 6]) AS v", {},
                    description="A trend of constants")  # fmt: skip


def test_rows_that_disagree_with_the_sql_fail_the_script_with_the_fix(job: Path) -> None:
    rising = [(float(v),) for v in range(1, 13)]  # the pandas rows say "rising"; the SQL's months do not
    track_claim("trend", "claim_trend_wrong", "sales", TREND_SQL, {"measure": "Revenue"}, rows=rising,
                description="A trend tested on other rows")  # fmt: skip
    with pytest.raises(ChecksFailed, match="claim_trend_wrong.*claim mismatch.*rows= exactly what the claim's SQL"):
        flush_checks()


def test_sql_that_does_not_run_names_the_views(job: Path) -> None:
    with pytest.raises(ValueError, match="sales"):
        track_claim("outlier", "claim_bad", "sales", "SELECT Revenue FROM nowhere", {}, description="bad")


def test_a_bad_id_is_refused_like_a_number(job: Path) -> None:
    with pytest.raises(ValueError, match="id 'bad id' is invalid"):
        track_claim("outlier", "bad id", "sales", "SELECT Revenue FROM sales", {}, description="x")


def test_generated_utils_module_exports_track_claim() -> None:
    source = generate_utils_module()
    assert "    track_claim,\n" in source and '"track_claim"' in source


def test_script_end_runs_number_checks_as_sql_and_claims_with_scipy_in_one_batch(job: Path) -> None:
    from insightloom.analysis_utils import track_calculation

    track_calculation("rows", 240, "Rows", "len(df)", "sales.csv", [], "low", check="SELECT COUNT(*) FROM sales")
    track_claim("outlier", "claim_outlier_revenue", "sales", "SELECT Revenue FROM sales", {"measure": "Revenue"},
                description="Extreme Revenue values")  # fmt: skip
    track_calculation("wrong", 1, "Wrong", "x", "sales.csv", [], "low", check="SELECT COUNT(*) FROM sales")
    with pytest.raises(ChecksFailed) as failed:
        flush_checks()
    assert "2 of 3" not in str(failed.value) and "1 of 3 tracked check(s)" in str(failed.value)
    assert "- wrong:" in str(failed.value) and "claim_outlier_revenue" not in str(failed.value)
