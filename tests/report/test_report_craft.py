"""Report craft at report level (issue 12, item 7): a summary table whenever numbers exist, a render refused without
any table, and conclusions that say what the findings mean (the main driver, concentration, the trend's direction)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from report_fixtures import ENGLISH_MD

from insightloom.report.conclusions import conclusions
from insightloom.report.render import check_markdown, render_report
from insightloom.report.summary_table import has_table, summary_table, table_refusal, with_summary_table
from insightloom.validation import validate_job


def test_summary_table_lists_only_verified_numbers_most_important_first(job: Path) -> None:
    table = summary_table(job)
    lines = table.splitlines()
    assert lines[:2] == ["| Measure | Value |", "| --- | --- |"]
    assert "{{calc:total_revenue}}" in table and "{{calc:order_count}}" in table
    assert "tampered" not in table and "unchecked" not in table  # never a number that failed or skipped its check
    assert check_markdown(table, job) == []  # it renders as it is


def test_summary_table_puts_high_importance_first_and_respects_the_limit(job: Path) -> None:
    meta = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))
    for calc in meta["calculations"]:
        calc["importance"] = "high" if calc["id"] == "roas" else "low"
    (job / "calculation_metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    validate_job(job)
    rows = summary_table(job, limit=2).splitlines()[2:]
    assert len(rows) == 2 and "{{calc:roas}}" in rows[0]


def test_summary_table_in_korean_has_a_korean_header(tmp_path: Path) -> None:
    from report_fixtures import build_job

    job = build_job(tmp_path / "ko", korean=True)
    assert summary_table(job, language="ko").startswith("| 항목 | 값 |")


def test_summary_table_is_empty_before_validation(tmp_path: Path) -> None:
    assert summary_table(tmp_path) == ""


def test_a_report_with_numbers_and_no_table_is_refused_naming_the_fix() -> None:
    prose = "# R\n\n## Summary\nRevenue was {{calc:total_revenue}}.\n"
    refusal = table_refusal(prose)
    assert refusal is not None and "summary_table()" in refusal and "table" in refusal
    assert table_refusal(ENGLISH_MD) is None  # it has a table
    assert table_refusal("# R\n\n## Summary\nNo numbers here.\n") is None


def test_with_summary_table_puts_the_table_under_the_first_section(job: Path) -> None:
    prose = "# R\n\n## Summary\nRevenue was {{calc:total_revenue}}.\n\n## Conclusions\n- It is high.\n"
    out = with_summary_table(prose, summary_table(job), language="en")
    assert has_table(out)
    assert out.index("### Key figures") < out.index("## Conclusions")
    assert out.index("Revenue was") < out.index("### Key figures")
    assert render_report(out, job).tables == 1


def _breakdown_job(job: Path, amounts: dict[str, list[int]], trend: list[int]) -> Path:
    """A validated job with a breakdown of amount by region and a trend of amount per month, tracked with the
    standard analyses' id conventions."""
    rows = [(region, value) for region, values in amounts.items() for value in values]
    months = [f"2025-{m + 1:02d}-01" for m in range(len(trend))]
    frame = pd.DataFrame({"region": [r for r, _ in rows], "amount": [v for _, v in rows]})
    series = pd.DataFrame({"month": pd.to_datetime(months), "sales": trend})
    (job / "cache").mkdir(parents=True)
    frame.to_parquet(job / "cache" / "data.parquet", index=False)
    series.to_parquet(job / "cache" / "months.parquet", index=False)
    tables = [
        {"view": "data", "file": "data.csv", "parquet": "cache/data.parquet"},
        {"view": "months", "file": "months.csv", "parquet": "cache/months.parquet"},
    ]
    (job / "cache" / "profile.json").write_text(json.dumps({"tables": tables, "aliases": {}}), encoding="utf-8")
    totals = frame.groupby("region")["amount"].sum().sort_values(ascending=False, kind="stable")
    top, first, second = str(totals.index[0]), float(totals.iloc[0]), float(totals.iloc[1])
    share = 100.0 * first / float(totals.sum())
    change = 100.0 * (trend[-1] - trend[0]) / trend[0]
    by = "SELECT SUM(amount) AS v FROM data GROUP BY region ORDER BY v DESC"
    calcs: list[dict[str, Any]] = [
        _calc("amount_by_region_top", top, ["region", "amount"],
              check="SELECT region FROM data GROUP BY region ORDER BY SUM(amount) DESC LIMIT 1"),
        _calc("amount_by_region_1", first, ["region", "amount"], check=f"SELECT v FROM ({by}) LIMIT 1"),
        _calc("amount_by_region_2", second, ["region", "amount"], check=f"SELECT v FROM ({by}) LIMIT 1 OFFSET 1"),
        _calc("amount_by_region_share_1", share, ["region", "amount"], unit="%",
              check=f"SELECT 100.0 * MAX(v) / SUM(v) FROM ({by})"),
        _calc("amount_by_region_groups", len(totals), ["region"], unit="count",
              check="SELECT COUNT(DISTINCT region) FROM data"),
        _calc("sales_per_month_change", change, ["month", "sales"], unit="%", source="months.csv",
              check="SELECT 100.0 * (ARG_MAX(sales, month) - ARG_MIN(sales, month)) / ARG_MIN(sales, month) "
              "FROM months"),
    ]  # fmt: skip
    (job / "calculation_metadata.json").write_text(
        json.dumps({"generated_at": "2025-01-01T00:00:00Z", "calculations": calcs}), encoding="utf-8"
    )
    validate_job(job)
    return job


def _calc(calc_id: str, value: Any, columns: list[str], *, check: str, unit: str | None = None,
          source: str = "data.csv") -> dict[str, Any]:  # fmt: skip
    return {
        "id": calc_id, "value": value, "description": calc_id.replace("_", " "), "formula": check,
        "source_file": source, "source_columns": columns, "importance": "high", "check": check, "unit": unit,
    }  # fmt: skip


def _verified(job: Path) -> set[str]:
    data = json.loads((job / "citations.json").read_text(encoding="utf-8"))
    return {c["calculation_id"] for c in data["citations"] if c["verification_status"] == "verified"}


# Conclusions state verdicts only through verified claims (issue 20): tests/report/test_conclusions_claims.py.


def test_conclusions_are_empty_without_a_breakdown_or_trend(job: Path) -> None:
    assert conclusions(job) == []


def test_conclusions_never_cite_a_number_that_failed_its_check(tmp_path: Path) -> None:
    job = _breakdown_job(tmp_path / "job", {"North": [90, 80], "South": [10]}, [100, 120])
    data = json.loads((job / "citations.json").read_text(encoding="utf-8"))
    for entry in data["citations"]:
        if entry["calculation_id"] == "amount_by_region_share_1":
            entry["verification_status"] = "needs_review"
    (job / "citations.json").write_text(json.dumps(data), encoding="utf-8")
    assert not any("amount_by_region" in line for line in conclusions(job))
