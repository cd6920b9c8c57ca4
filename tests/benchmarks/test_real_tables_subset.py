"""The real-tables benchmark: its committed sample and labels, its analyst-sanity lint on built job folders, and a
fast subset of its tables run as offline jobs."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from docx import Document

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.append(str(BENCHMARKS))  # appended, so no benchmark script shadows an installed module
bench = importlib.import_module("real_tables")
lint = bench.lint
SUBSET = [
    "datasets/Titanic",
    "datasets/mtcars",
    "datasets/airquality",
    "datasets/USPersonalExpenditure",
    "ggplot2/economics",
    "AER/CPS1985",
    "HSAUR/Forbes2000",
    "vcdExtra/Draft1970",
    "Stat2Data/Titanic",
    "palmerpenguins/penguins",
]


#: The benchmark's parseable line, as the issue spells it.
LINE = (
    r"sample=<name> tables=\d+ completed=\d+ needs_review=\d+ failed=\d+ lint_clean=\d+ median_s=[\d.]+ "
    r"max_s=[\d.]+ claims=\d+ claims_verified=\d+ type_e=\d+"
)


def sum_calc(calc_id: str, column: str, value: float, **extra: Any) -> dict[str, Any]:
    """A printed total of ``column`` with its DuckDB check, as the Coder tracks one."""
    check = f'SELECT COALESCE(SUM(CAST("{column}" AS DOUBLE)), 0) FROM "t"'
    return {"id": calc_id, "value": value, "description": f"Total {column}", "formula": f"df['{column}'].sum()"} | {
        "check": check,
        "unit": None,
        "source_columns": [column],
        **extra,
    }


def write_job(
    job: Path,
    *,
    columns: list[dict[str, Any]],
    calcs: list[dict[str, Any]],
    paragraphs: list[str],
    table: list[list[str]] | None = None,
    status: str = "completed",
    charts: dict[str, dict[str, Any]] | None = None,
    headings: tuple[str, ...] = ("Findings",),
    data: str | None = None,
) -> Path:
    """A finished job folder as the lint reads it: job, profile, calculations, citations, report, chart sidecars and
    (given ``data``, CSV text) the job's copy of its input.

    Each paragraph's ``{calc_id}`` is printed as the value (a claim: its ``printed`` sentence) with the citation
    marker of that calculation.
    """
    (job / "cache").mkdir(parents=True)
    (job / "charts").mkdir()
    (job / "job.json").write_text(json.dumps({"status": status}), encoding="utf-8")
    profile = {"tables": [{"view": "t", "columns": columns}]}
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    (job / "calculation_metadata.json").write_text(json.dumps({"calculations": calcs}), encoding="utf-8")
    markers = {c["id"]: f"[{i}]" for i, c in enumerate(calcs, start=1)}
    citations = [
        {"citation_id": markers[c["id"]], "calculation_id": c["id"], "verification_status": "verified"} for c in calcs
    ]
    (job / "citations.json").write_text(json.dumps({"citations": citations}), encoding="utf-8")
    printed = {
        c["id"]: c.get("printed", f"{c['value']:,}" if not isinstance(c["value"], str) else c["value"]) for c in calcs
    }
    if data is not None:
        (job / "data").mkdir()
        (job / "data" / "t.csv").write_text(data, encoding="utf-8")

    def render(text: str) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: f"{printed[m.group(1)]} {markers[m.group(1)]}", text)

    doc = Document()
    doc.add_heading("Report", 0)
    for heading in headings:
        doc.add_heading(heading, 1)
    for text in paragraphs:
        doc.add_paragraph(render(text))
    if table:
        grid = doc.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, cell in enumerate(row):
                grid.cell(r, c).text = render(cell)
    doc.add_paragraph("References")
    doc.save(str(job / "final_report.docx"))
    for stem, sidecar in (charts or {}).items():
        (job / "charts" / f"{stem}.json").write_text(json.dumps(sidecar), encoding="utf-8")
    return job


def measure(name: str, dtype: str = "float64", **extra: Any) -> dict[str, Any]:
    return {"name": name, "dtype": dtype, "role": "measure", "min": 1, "max": 500, "distinct": 400, **extra}


def clean_job(job: Path, **overrides: Any) -> Path:
    """A report an analyst signs: revenue totals by region, a table, three verified numbers, no time axis."""
    calcs = [
        sum_calc("revenue_total", "revenue", 1200.5),
        {"id": "rows", "value": 30, "unit": "count", "description": "Number of rows", "check": "SELECT COUNT(*)"},
        {"id": "revenue_mean", "value": 40.02, "unit": None, "description": "Average revenue", "check": "x"},
    ]
    kwargs: dict[str, Any] = {
        "columns": [measure("revenue"), {"name": "region", "dtype": "object", "role": "category", "distinct": 3}],
        "calcs": calcs,
        "paragraphs": ["Total revenue is {revenue_total} over {rows} rows, an average of {revenue_mean}."],
        "table": [["region", "Total"], ["North", "{revenue_total}"]],
    } | overrides
    return write_job(job, **kwargs)


def kinds(job: Path, expect: dict[str, Any] | None = None) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for finding in lint.lint_job(job, expect):
        found.setdefault(finding.kind, []).append(finding.subject)
    return found


def test_a_clean_report_has_no_finding(tmp_path: Path) -> None:
    assert kinds(clean_job(tmp_path / "job"), {"lead": ["revenue"]}) == {}


def test_a_summed_rank_is_found_though_the_profile_calls_it_a_measure(tmp_path: Path) -> None:
    # The product's profile misclassifies Rank as a plain measure (no aggregation rule): the sum still shows up.
    job = write_job(
        tmp_path / "job",
        columns=[measure("Rank", "int64"), measure("sales")],
        calcs=[sum_calc("rank_total", "Rank", 66795), sum_calc("sales_total", "sales", 9.5), sum_calc("s", "sales", 1)],
        paragraphs=["Total Rank is {rank_total} and total sales {sales_total} ({s})."],
        table=[["Rank", "sales"], ["1", "{sales_total}"]],
    )
    findings = [f for f in lint.lint_job(job, {"columns": {"Rank": {"sum": False}}}) if f.kind == "forbidden_sum"]
    assert [f.subject for f in findings] == ["Rank"]
    assert "expectations" in findings[0].detail and "name rule (rank)" in findings[0].detail


def test_forbidden_sums_come_from_the_labels_and_the_profile_not_only_names(tmp_path: Path) -> None:
    columns = [measure("wind", aggregation="sum"), measure("gust", aggregation="mean")]
    calcs = [sum_calc("wind_total", "wind", 5.0), sum_calc("gust_total", "gust", 7.0), sum_calc("w2", "wind", 2.0)]
    job = clean_job(
        tmp_path / "job",
        columns=columns,
        calcs=calcs,
        paragraphs=["{wind_total} {gust_total} {w2}"],
        table=[["a"], ["{w2}"]],
    )
    assert kinds(job).get("forbidden_sum") == ["gust"]  # the profile says mean; wind is an ordinary name
    assert kinds(job, {"columns": {"wind": {"sum": False}}})["forbidden_sum"] == ["wind", "gust"]


def test_a_wide_tables_summed_year_columns_are_one_finding_and_a_day_5_reading_is_no_day_code(tmp_path: Path) -> None:
    years = ["X1856", "X1860", "X1864", "day_5"]
    calcs = [sum_calc(f"total_{i}", column, 10.0 + i) for i, column in enumerate(years)]
    job = clean_job(
        tmp_path / "job",
        columns=[measure(column) for column in years],
        calcs=calcs,
        paragraphs=["Totals per year: {total_0}, {total_1}, {total_2}; day 5: {total_3}."],
        table=[["year", "Total"], ["1856", "{total_0}"]],
    )
    assert kinds(job, {"columns": {"X1*": {"sum": False}}})["forbidden_sum"] == ["3 year columns X1856..X1864"]


def test_an_integer_total_printed_with_decimals_is_a_count_with_decimals(tmp_path: Path) -> None:
    votes = sum_calc("votes_total", "votes", 137062633, printed="137,062,633.00")
    job = clean_job(
        tmp_path / "job",
        columns=[measure("votes", "int64")],
        calcs=[votes, *[sum_calc(f"v{i}", "votes", i) for i in range(2)]],
        paragraphs=["Total votes are {votes_total} ({v0}, {v1})."],
        table=[["votes"], ["{v1}"]],
    )
    assert kinds(job)["count_with_decimals"] == ["votes"]


def test_a_tie_called_the_largest_group_is_misreported(tmp_path: Path) -> None:
    calcs = [sum_calc("a", "revenue", 50), sum_calc("b", "revenue", 50), sum_calc("c", "revenue", 10)]
    table = [["region", "Total"], ["North", "{a}"], ["South", "{b}"], ["West", "{c}"]]
    job = clean_job(tmp_path / "job", calcs=calcs, table=table, paragraphs=["The largest region is North with {a}."])
    assert kinds(job)["tie_misreported"] == ["North"]
    named = clean_job(tmp_path / "named", calcs=calcs, table=table, paragraphs=["North and South tie at {a}."])
    assert "tie_misreported" not in kinds(named)
    numbered = [["year", "Total"], ["1", "{a}"], ["2", "{b}"], ["3", "{c}"]]  # "Figure 1" names no group "1"
    caption = clean_job(tmp_path / "caption", calcs=calcs, table=numbered,
                        paragraphs=["Figure 1: Revenue by year, all groups, largest first."])  # fmt: skip
    assert "tie_misreported" not in kinds(caption)


def test_a_citation_marker_is_no_group_label(tmp_path: Path) -> None:
    calcs = [sum_calc("a", "cards", 4), sum_calc("b", "cards", 4), sum_calc("c", "cards", 2)]
    table = [["rank", "Total"], ["1", "{a}"], ["2", "{b}"], ["3", "{c}"]]
    # "{a}" prints as "4 [1]": the marker [1] does not name the tied group "1"
    job = clean_job(tmp_path / "job", calcs=calcs, table=table, paragraphs=["The largest total is {a} in all."])
    assert "tie_misreported" not in kinds(job)


def test_a_time_axis_without_a_trend_is_a_missing_trend(tmp_path: Path) -> None:
    year = {"name": "year", "dtype": "int64", "role": "measure", "min": 1975, "max": 2022, "distinct": 48}
    job = clean_job(tmp_path / "job", columns=[measure("revenue"), year])
    assert kinds(job)["missing_trend"] == ["year"]
    trended = clean_job(tmp_path / "trend", columns=[measure("revenue"), year], headings=("Trend of revenue",))
    assert "missing_trend" not in kinds(trended)
    assert kinds(clean_job(tmp_path / "labelled"), {"time_axis": ["date"]})["missing_trend"] == ["date"]


def test_degenerate_reports_clipped_charts_and_a_wrong_lead_are_found(tmp_path: Path) -> None:
    few = clean_job(
        tmp_path / "few", columns=[measure("revenue")], paragraphs=["Total revenue is {revenue_total}."], table=None
    )
    assert set(kinds(few)) == {"too_few_verified", "no_table"}
    clipped = clean_job(tmp_path / "clip", charts={"breakdown_x": {"title": "x", "clipped_texts": ["a long label"]}})
    assert kinds(clipped)["clipped_chart_text"] == ["breakdown_x"]
    assert kinds(clean_job(tmp_path / "lead"), {"lead": ["profit"]})["wrong_headline"] == ["revenue"]


def test_the_committed_sample_and_labels_are_big_enough_and_fit_together() -> None:
    sample = bench.load_sample()
    labels = bench.load_expectations()
    assert len(sample) >= 150 and len(set(sample)) == len(sample)
    assert len(labels) >= 30 and set(labels) <= set(sample)
    traits = {t for entry in json.loads(bench.SAMPLE.read_text())["tables"] for t in entry["features"]}
    assert {"date", "year", "wide_years", "rank", "code", "binary", "money"} <= traits


@pytest.mark.e2e
def test_a_fast_subset_of_real_tables_runs_without_crash_and_is_linted(tmp_path: Path) -> None:
    results = bench.run_tables(SUBSET, tmp_path, workers=2)
    assert [r.table for r in results] == SUBSET
    assert all(r.outcome in ("completed", "needs_review") for r in results), [
        (r.table, r.outcome, r.reason) for r in results if r.outcome not in ("completed", "needs_review")
    ]
    assert all(r.seconds < 60 for r in results), [(r.table, r.seconds) for r in results]
    # The lint read every report: a finding list per table, and the parseable last line counts them.
    line = bench.summary_line(results, "first")
    assert re.fullmatch(LINE.replace("<name>", "first").replace("tables=\\d+", "tables=10"), line), line
    assert re.search(r" failed=0 ", line)
    assert all(lint.read_report(bench.table_folder(tmp_path, r.table) / "job").text for r in results)


def test_a_report_that_leads_with_a_group_rate_leads_with_that_outcome(tmp_path: Path) -> None:
    rate = {"id": "survived_by_sex_1", "value": 72.5, "description": "Rate for sex = female", "unit": "%",
            "formula": "rate for female", "source_columns": ["sex", "survived"],
            "check": "SELECT 100 * AVG(CASE WHEN \"sex\" = 'female' THEN CASE WHEN \"survived\" = 'yes' THEN 1.0 "
                     "ELSE 0.0 END END) FROM \"t\""}  # fmt: skip
    calcs = [rate, sum_calc("age_total", "age", 10), {"id": "rows", "value": 30, "unit": "count", "check": "x"}]
    job = clean_job(
        tmp_path / "job",
        calcs=calcs,
        paragraphs=["Women survived at {survived_by_sex_1} of {rows}."],
        table=[["sex", "Rate"], ["female", "{survived_by_sex_1}"], ["male", "{age_total}"]],
    )
    assert "wrong_headline" not in kinds(job, {"lead": ["survived"]})
    assert kinds(job, {"lead": ["age"]})["wrong_headline"] == ["survived"]


def test_a_report_that_leads_with_a_claim_leads_with_the_claims_measure(tmp_path: Path) -> None:
    claim = {"id": "claim_driver_survived_by_sex", "kind": "claim", "claim_kind": "driver", "value": "main",
             "printed": "sex is the main driver of survived", "source_columns": ["sex", "survived"],
             "test": {"name": "eta_squared", "params": {"measure": "survived", "by": "sex"}}}  # fmt: skip
    calcs = [claim, sum_calc("age_total", "age", 10), {"id": "rows", "value": 30, "unit": "count", "check": "x"}]
    columns = [measure("survived"), measure("age"), {"name": "sex", "dtype": "object", "role": "category"}]
    job = clean_job(tmp_path / "job", calcs=calcs, columns=columns,
                    paragraphs=["Row by row, {claim_driver_survived_by_sex}; the ages add up to {age_total}."],
                    table=[["sex", "Total age"], ["all", "{age_total}"]])  # fmt: skip
    assert "wrong_headline" not in kinds(job, {"lead": ["survived"]})
    assert kinds(job, {"lead": ["age"]})["wrong_headline"] == ["survived"]


def test_a_report_that_leads_with_a_correlation_leads_with_its_first_variable(tmp_path: Path) -> None:
    claim = {"id": "claim_corr_price_carat", "kind": "claim", "claim_kind": "correlation", "value": "strong_positive",
             "printed": "strong positive correlation between price and carat", "source_columns": ["price", "carat"],
             "test": {"params": {"measure": "carat", "by": "price", "x": "price", "y": "carat"}}}  # fmt: skip
    calcs = [claim, sum_calc("carat_total", "carat", 10), {"id": "rows", "value": 30, "unit": "count", "check": "x"}]
    job = clean_job(tmp_path / "job", calcs=calcs, columns=[measure("price"), measure("carat")],
                    paragraphs=["Checked: {claim_corr_price_carat}; carats add up to {carat_total}."],
                    table=[["cut", "Total carat"], ["all", "{carat_total}"]])  # fmt: skip
    assert kinds(job, {"lead": ["carat"]})["wrong_headline"] == ["price"]
