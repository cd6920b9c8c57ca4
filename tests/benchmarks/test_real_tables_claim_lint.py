"""The real-tables lint's claim and column rules, on job folders built by hand: contradictions, trends read from two
points, claim words with no claim marker, sentinel codes printed as extremes, counts with decimals in cells and
prose, columns the report never names, and printed claims the hand labels say are false."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_real_tables_subset import clean_job, kinds, lint, measure, sum_calc

REGION = {"name": "region", "dtype": "object", "role": "category", "distinct": 3}
CHANNEL = {"name": "channel", "dtype": "object", "role": "category", "distinct": 2}


def claim(claim_id: str, kind: str, verdict: str, printed: str, **params: Any) -> dict[str, Any]:
    """A recorded claim as the contract writes it, printed as its sentence (the renderer's claim text)."""
    columns = [str(v) for v in params.values()]
    return {
        "id": claim_id,
        "kind": "claim",
        "claim_kind": kind,
        "value": verdict,
        "evidence": {"n": 12},
        "check": f"stat:{kind}",
        "test": {"name": kind, "sql": "SELECT 1", "params": params},
        "source_columns": columns,
        "unit": None,
        "printed": printed,
    }


def base_calcs() -> list[dict[str, Any]]:
    return [
        sum_calc("revenue_total", "revenue", 1200.5),
        {"id": "rows", "value": 30, "unit": "count", "description": "Number of rows", "check": "SELECT COUNT(*)"},
        {"id": "revenue_mean", "value": 40.02, "unit": None, "description": "Average revenue", "check": "x"},
    ]


BASE = "Total revenue is {revenue_total} over {rows} rows, an average of {revenue_mean}."


def job_with(tmp: Path, paragraphs: list[str], extra: list[dict[str, Any]] | None = None, **kw: Any) -> Path:
    """The clean report plus ``paragraphs`` and the calculations ``extra`` they cite."""
    kw.setdefault("columns", [measure("revenue"), REGION])
    return clean_job(tmp, calcs=[*base_calcs(), *(extra or [])], paragraphs=[BASE, *paragraphs], **kw)


def test_opposite_verdict_words_about_the_same_breakdown_contradict(tmp_path: Path) -> None:
    job = job_with(
        tmp_path / "job",
        ["Region is the main driver of revenue.", "Revenue is spread fairly evenly across the region groups."],
    )
    assert kinds(job)["contradiction"] == ["region, revenue"]
    # "no single group dominates" is the even pole, and a trend against "no clear trend" on one measure clashes too
    other = job_with(tmp_path / "trend", ["Revenue is rising.", "Revenue shows no clear trend over the months."])
    assert kinds(other)["contradiction"] == ["revenue"]


def test_verdicts_about_different_breakdowns_do_not_contradict(tmp_path: Path) -> None:
    job = job_with(
        tmp_path / "job",
        ["Revenue by region is dominated by West.", "Revenue is spread evenly across channel groups."],
        columns=[measure("revenue"), REGION, CHANNEL],
    )
    assert "contradiction" not in kinds(job)


def test_printed_claims_that_cannot_both_hold_contradict(tmp_path: Path) -> None:
    driver = claim(
        "claim_driver_region", "driver", "main", "main driver: eta squared 0.41", measure="revenue", by="region"
    )
    even = claim(
        "claim_conc_region",
        "concentration",
        "spread_evenly",
        "spread evenly: top share 36.0%",
        measure="revenue",
        by="region",
    )
    job = job_with(
        tmp_path / "job", ["By region: {claim_driver_region}.", "Shares: {claim_conc_region}."], [driver, even]
    )
    found = kinds(job)
    assert found["contradiction"] == ["claim_driver_region / claim_conc_region"]
    assert "unqualified_claim" not in found  # both sentences carry their claim's marker


def test_a_trend_read_from_first_and_last_is_flagged_and_a_tested_trend_is_not(tmp_path: Path) -> None:
    change = {
        "id": "revenue_change_first_last",
        "value": 145.0,
        "unit": "%",
        "description": "Change of revenue",
        "check": "x",
        "printed": "145.0%",
    }
    # The evidence is a "from X to Y" in the sentence, or a first-vs-last change calculation it cites
    job = job_with(tmp_path / "job", ["Revenue is rising: it rose from 6,378 to 15,623."])
    assert kinds(job)["trend_from_two_points"] == ["revenue"]
    cited = job_with(tmp_path / "cited", ["Revenue is rising ({revenue_change_first_last})."], [change])
    assert kinds(cited)["trend_from_two_points"] == ["revenue"]
    trend = claim(
        "claim_trend_revenue",
        "trend",
        "rising",
        "rising: the monthly totals grow by 3.1% a month",
        measure="revenue",
        by="date",
    )
    tested = job_with(tmp_path / "tested", ["Revenue rose from 6,378 to 15,623; {claim_trend_revenue}."], [trend])
    assert "trend_from_two_points" not in kinds(tested)
    two = claim("claim_trend_two", "trend", "rising", "rising: up 145.0%", measure="revenue", by="date")
    two["evidence"]["n"] = 2
    assert kinds(job_with(tmp_path / "two", ["{claim_trend_two}."], [two]))["trend_from_two_points"] == [
        "claim_trend_two"
    ]
    # Two periods with no clear trend is an honest verdict, not a trend read from two points
    flat = claim("claim_trend_two", "trend", "no_clear_trend", "no clear trend over 2 periods", measure="revenue")
    flat["evidence"]["n"] = 2
    assert "trend_from_two_points" not in kinds(job_with(tmp_path / "flat", ["{claim_trend_two}."], [flat]))


def test_claim_words_without_a_claim_marker_are_unqualified_in_prose_titles_and_korean(tmp_path: Path) -> None:
    job = job_with(
        tmp_path / "job",
        ["Revenue is strongly correlated with region.", "매출은 증가 추세입니다."],
        charts={"trend_revenue": {"title": "Revenue is volatile"}},
    )
    assert sorted(kinds(job)["unqualified_claim"]) == ["strongly correlated", "volatile", "증가 추세"]
    corr = claim(
        "claim_corr",
        "correlation",
        "strong_positive",
        "strong positive correlation: r = 0.91",
        measure="revenue",
        **{"with": "units"},
    )
    marked = job_with(tmp_path / "marked", ["Revenue and units: {claim_corr}."], [corr])
    assert "unqualified_claim" not in kinds(marked)
    # A row label that happens to be a verdict word ("Rising" as a group name) is data, not a claim
    labelled = job_with(tmp_path / "label", [], table=[["region", "Total"], ["Rising", "{revenue_total}"]])
    assert "unqualified_claim" not in kinds(labelled)


def test_a_printed_claim_against_the_hand_label_is_found(tmp_path: Path) -> None:
    falling = claim(
        "claim_trend_value", "trend", "falling", "falling: the yearly values drop", measure="value", by="time"
    )
    job = job_with(
        tmp_path / "job", ["{claim_trend_value}."], [falling], columns=[measure("revenue"), measure("value")]
    )
    label = {"claims": {"trend": {"measure": "value", "by": "time", "verdict": "rising"}}}
    assert kinds(job, label)["claim_against_label"] == ["trend value"]
    honest = {"claims": {"trend": [{"measure": "value", "by": "time", "verdict": ["falling", "no_clear_trend"]}]}}
    assert "claim_against_label" not in kinds(job, honest)


INCOMES = [12, 15, 18, 20, 22, 25, 30, 35, 99999, 99999]


def income_job(tmp: Path, calc: dict[str, Any]) -> Path:
    data = "income\n" + "\n".join(map(str, INCOMES)) + "\n"
    columns = [measure("revenue"), REGION, measure("income", "int64")]
    return job_with(tmp, [f"Income is {{{calc['id']}}}."], [calc], columns=columns, data=data)


def test_a_sentinel_code_printed_as_a_maximum_or_counted_into_a_mean_is_found(tmp_path: Path) -> None:
    top = {"id": "income_max", "value": 99999, "check": 'SELECT MAX("income") FROM "t"'}
    mean_with = {"id": "income_mean", "value": sum(INCOMES) / 10, "check": 'SELECT AVG("income") FROM "t"'}
    for calc in (top, mean_with):
        found = [f for f in lint.lint_job(income_job(tmp_path / calc["id"], calc)) if f.kind == "sentinel_as_extreme"]
        assert [(f.subject, f.detail.split()[0]) for f in found] == [("income", calc["id"])]
    # The same figures with the code left out are what an analyst signs
    real_max = {"id": "income_max", "value": 35, "check": 'SELECT MAX("income") FROM "t" WHERE "income" < 99999'}
    clean_mean = {"id": "income_mean", "value": 22.125, "check": 'SELECT AVG("income") FROM "t" WHERE "income" < 99999'}
    for calc in (real_max, clean_mean):
        assert "sentinel_as_extreme" not in kinds(income_job(tmp_path / f"fixed_{calc['id']}", calc))


def test_code_values_are_far_nines_or_a_lone_negative_code_never_ordinary_values() -> None:
    rules = lint.column_rules
    assert rules.code_values(INCOMES) == {99999.0}
    assert rules.code_values([-1, 3, 5, 8, 13, 21, 34]) == {-1.0}
    assert rules.code_values(list(range(100))) == set()  # ages 0..99: 99 is an age, no code
    assert rules.code_values([-3, -2, -1, 0, 1, 2, 3]) == set()  # a change column: -1 is a value
    assert rules.code_values([-1, 0, 1, 0, 1, -1, 1]) == set()  # a direction code set, not a missing code


def test_counts_printed_with_decimals_in_table_cells_and_prose_are_found(tmp_path: Path) -> None:
    job = job_with(
        tmp_path / "job",
        ["The table has 1,204.00 rows."],
        table=[["region", "Count"], ["North", "12.00"], ["South", "8.00"]],
    )
    found = kinds(job)["count_with_decimals"]
    assert "Count" in found and "1,204.00 rows" in found
    whole = job_with(tmp_path / "whole", [], table=[["region", "Count", "Mean"], ["North", "12", "8.50"]])
    assert "count_with_decimals" not in kinds(whole)


def test_an_extreme_of_a_whole_number_column_printed_with_zero_decimals_is_a_count_with_decimals(
    tmp_path: Path,
) -> None:
    # A missing cell makes the input column float, yet every value is whole: 43,107.00 listings is a count misprinted
    data = "listings\n12\n\n43107\n880\n"
    columns = [measure("revenue"), REGION, measure("listings")]
    top = {"id": "listings_max", "value": 43107.0, "check": 'SELECT MAX("listings") FROM "t"', "printed": "43,107.00"}
    job = job_with(tmp_path / "job", ["Listings reach {listings_max}."], [top], columns=columns, data=data)
    assert kinds(job)["count_with_decimals"] == ["listings"]
    plain = job_with(
        tmp_path / "plain",
        ["Listings reach {listings_max}."],
        [top | {"printed": "43,107"}],
        columns=columns,
        data=data,
    )
    assert "count_with_decimals" not in kinds(plain)


def test_a_column_named_only_in_the_missing_cells_table_is_unanalysed(tmp_path: Path) -> None:
    columns = [measure("revenue"), REGION, measure("discount")]
    missing = [["Column", "Missing cells"], ["discount", "29"]]
    job = job_with(tmp_path / "job", [], columns=columns, table=[["region", "Total"], ["North", "{revenue_total}"]])
    assert kinds(job)["unanalysed_column"] == ["discount"]
    only_missing = clean_job(tmp_path / "missing", columns=columns, table=missing)
    assert "discount" in kinds(only_missing)["unanalysed_column"]
    reason = job_with(tmp_path / "reason", ["Discount is 97% missing, so it is left out."], columns=columns)
    assert "unanalysed_column" not in kinds(reason)


def test_a_wide_tables_year_columns_are_named_by_a_year_range(tmp_path: Path) -> None:
    columns = [measure("revenue"), REGION, *(measure(f"X{y}") for y in (1960, 1961, 1962))]
    job = job_with(tmp_path / "job", ["The year columns 1960–1962 hold one rate each."], columns=columns)
    assert "unanalysed_column" not in kinds(job)
    short = job_with(tmp_path / "short", ["The year columns 1960–1961 hold one rate each."], columns=columns)
    assert kinds(short)["unanalysed_column"] == ["X1962"]


def test_the_lint_keeps_the_clean_report_clean_with_the_new_rules(tmp_path: Path) -> None:
    trend = claim(
        "claim_trend_revenue",
        "trend",
        "no_clear_trend",
        "no clear trend: the totals swing by 83.2%",
        measure="revenue",
        by="date",
    )
    job = job_with(tmp_path / "job", ["Over the months, {claim_trend_revenue}."], [trend])
    assert kinds(job, {"lead": ["revenue"]}) == {}
