"""Reviewer feedback is heard: each request of the feedback is applied or named with the reason it cannot be.

The rules are the product's (``insightloom.analysis.revision``), over small profiles built here; the hosted Planner's
revise prompt and the offline reviser both use them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from insightloom.analysis.catalog import AnalysisSpec, parse_item
from insightloom.analysis.planning import plan_markdown
from insightloom.analysis.revision import APPLIED, NOT_APPLIED, plan_requests, requests_markdown, revise_plan
from insightloom.plan import parse_plan, plan_problems


def _col(name: str, role: str, **kw: Any) -> dict[str, Any]:
    base = {"name": name, "dtype": "int64" if role == "measure" else "string", "role": role, "missing": 0,
            "distinct": 5, "samples": []}  # fmt: skip
    return {**base, **kw}


def _profile(columns: list[dict[str, Any]], rows: int = 800) -> dict[str, Any]:
    table = {"view": "sales", "file": "sales.csv", "parquet": "cache/sales.parquet", "rows": rows, "columns": columns}
    return {"tables": [table], "aliases": {"data": "sales"}, "language": "en"}


# Shaped like moon-market EN: `ship-state` is a category with one value, the postal code an identifier.
SHOP = _profile(
    [
        _col("Date", "date", dtype="datetime", distinct=14, min="2025-05-01", max="2025-05-14"),
        _col("Product", "category", distinct=175),
        _col("Category", "category", distinct=14),
        _col("Qty", "measure", distinct=9, min=1, max=9, mean=3.3),
        _col("Amount", "measure", unit="KRW", distinct=751, min=3046, max=148660, mean=19655),
        _col("ship-city", "category", distinct=25),
        _col("ship-state", "category", distinct=1),
        _col("ship-postal-code", "identifier", distinct=667),
        _col("Customer Name", "pii", distinct=700),
        _col("Gender", "category", distinct=2, top_values=[{"value": "F", "count": 423}, {"value": "M", "count": 413}]),
        _col("Age Group", "category", distinct=5),
        _col("Store Code", "measure", distinct=12, aggregation="none", semantic="code"),
    ]
)


def _plan() -> str:
    return plan_markdown(SHOP, "", "en")


def _coder_items(plan: str) -> list[str]:
    return [item.text for item in parse_plan(plan).section("coder").items]


def _only(feedback: str, plan: str | None = None) -> Any:
    requests = plan_requests(feedback, SHOP, plan or _plan())
    assert len(requests) == 1, [r.note() for r in requests]
    return requests[0]


def test_the_issue_scenario_removes_gender_names_payment_method_and_adds_ship_state() -> None:
    plan = _plan()
    assert any("`Gender`" in t for t in _coder_items(plan))
    first = revise_plan(plan, "drop the gender breakdown and add a breakdown of Amount by Payment Method", 1, SHOP)
    assert plan_problems(first) == []
    assert not any("`Gender`" in t for t in _coder_items(first))
    notes = first.split("## thought")[0]
    assert "applied: remove breakdown on `Gender`" in notes
    assert "not applied: add breakdown" in notes and "no such column `Payment Method`" in notes
    assert "closest columns:" in notes
    second = revise_plan(first, "also add a breakdown of Amount by ship-state", 2, SHOP)
    added = "Break down `Amount` by `ship-state`: group totals, top group and its share, bar chart"
    assert added in _coder_items(second) and added not in _coder_items(first)
    assert parse_item(added, SHOP) is not None  # the Coder can run what was added
    assert "Revision 1" in second and "Revision 2" in second and "added: " + added in second
    assert "single value" in second  # the one-group caveat is said, not hidden


@pytest.mark.parametrize("said", ["ship-state", "Ship State", "ship_state", "SHIP STATE"])
def test_column_names_match_loosely(said: str) -> None:
    request = _only(f"add a breakdown of Amount by {said}")
    assert request.outcome == APPLIED and request.columns == ("Amount", "ship-state")


def test_added_breakdown_trend_correlation_and_distribution() -> None:
    plan = _plan()
    city = _only("Break down Qty by ship city", plan)
    assert city.outcome == APPLIED and city.specs[0].measure == "Qty" and city.specs[0].by == "ship-city"
    trend = _only("add a weekly trend of Qty", plan)
    assert trend.outcome == APPLIED and (trend.specs[0].by, trend.specs[0].period) == ("Date", "week")
    dist = _only("add a distribution of Qty", plan)
    assert dist.outcome == APPLIED and dist.specs[0].kind == "distribution" and dist.specs[0].measure == "Qty"
    without_corr = revise_plan(plan, "remove the correlation", 1, SHOP)
    corr = _only("add a correlation between Amount and Qty", without_corr)
    assert corr.outcome == APPLIED and corr.specs[0].measures == ("Amount", "Qty")


def test_removed_kinds_and_columns() -> None:
    revised = revise_plan(_plan(), "remove the trend, the distribution and the Age Group breakdown", 1, SHOP)
    items = _coder_items(revised)
    assert not any(t.startswith(("Trend", "Distribution")) or "`Age Group`" in t for t in items)
    assert any(t.startswith("Correlate") for t in items)
    assert revised.count("  - applied: remove") == 3


def test_no_such_column_names_the_closest_columns() -> None:
    request = _only("add a breakdown of Amount by Payment Method")
    assert request.outcome == NOT_APPLIED and "no such column `Payment Method`" in request.reason
    assert "`" in request.reason.split("closest columns:")[1]
    removal = _only("remove the Payment Method breakdown")
    assert removal.outcome == NOT_APPLIED and "no such column `Payment Method`" in removal.reason
    revised = revise_plan(_plan(), "remove the Payment Method breakdown", 1, SHOP)
    assert _coder_items(revised) == _coder_items(_plan())  # an unknown name never removes every breakdown


def test_personal_data_is_never_added() -> None:
    request = _only("add a breakdown of Amount by customer name")
    assert request.outcome == NOT_APPLIED and request.reason.startswith("personal data")


def test_identifiers_and_codes_are_not_analysable() -> None:
    postal = _only("add a breakdown by ship-postal-code")
    assert postal.outcome == NOT_APPLIED and "not analysable: `ship-postal-code` is an identifier" in postal.reason
    code = _only("add a distribution of Store Code")
    assert code.outcome == NOT_APPLIED and "aggregation: none" in code.reason


def test_already_in_the_plan() -> None:
    request = _only("add a breakdown of Amount by Category")
    assert request.outcome == NOT_APPLIED and request.reason == "already in the plan"
    revised = revise_plan(_plan(), "add a breakdown of Amount by Category", 1, SHOP)
    assert _coder_items(revised) == _coder_items(_plan())
    assert "not applied: add breakdown" in revised and "already in the plan" in revised


def test_a_removal_matching_no_item_says_so() -> None:
    revised = revise_plan(_plan(), "drop the ship-city breakdown", 1, SHOP)
    assert "not applied: remove breakdown on `ship-city`" in revised and "not in the plan" in revised


def test_trends_follow_the_time_axis_and_never_a_cohort_date() -> None:
    staff = _profile([_col("Hire Date", "date", dtype="datetime", distinct=300, min="2001-01-01", max="2020-01-01",
                           semantic="cohort_date"),
                      _col("Dept", "category", distinct=4),
                      _col("Salary", "measure", unit="USD", distinct=300, min=1, max=90, mean=40)])  # fmt: skip
    cohort = plan_requests("add a trend of Salary over Hire Date", staff, plan_markdown(staff))
    assert [r.outcome for r in cohort] == [NOT_APPLIED] and "cohort date" in cohort[0].reason
    years = _profile([_col("Year", "measure", distinct=40, min=1970, max=2009, mean=1990),
                      _col("Units", "measure", distinct=40, min=1, max=900, mean=200)])  # fmt: skip
    plan = revise_plan(plan_markdown(years), "remove the trend", 1, years)
    (trend,) = plan_requests("add a trend of Units", years, plan)
    assert trend.outcome == APPLIED and (trend.specs[0].by, trend.specs[0].period) == ("Year", "year")


def test_korean_feedback_on_korean_columns() -> None:
    korean = _profile(
        [
            _col("매출액", "measure", unit="KRW", distinct=90, min=1, max=900, mean=80),
            _col("지역", "category", distinct=4),
            _col("성별", "category", distinct=2),
            _col("결제수단", "category", distinct=3),
        ]
    )
    plan = plan_markdown(korean, "", "ko")
    revised = revise_plan(plan, "성별 분석은 빼고 결제수단별 매출액 분석을 추가해 주세요", 1, korean)
    items = _coder_items(revised)
    assert not any("`성별`" in t for t in items)
    assert "`결제수단`별 `매출액` 분석: 그룹별 합계, 상위 그룹과 비중, 막대 차트" in items


def test_the_hosted_planner_gets_the_same_requests() -> None:
    requests = plan_requests("drop the gender breakdown and add a breakdown of Amount by ship-state", SHOP, _plan())
    text = requests_markdown(requests)
    assert text.splitlines()[0].startswith("- applied: remove breakdown on `Gender`")
    assert "item: Break down `Amount` by `ship-state`" in text
    assert requests_markdown([]) == "(none found)"


@pytest.mark.e2e
def test_moon_market_feedback_is_heard_through_a_whole_offline_job(tmp_path: Path) -> None:
    from insightloom.config import Settings
    from insightloom.workflow import Decision, JobOptions, run_job
    from repo_paths import DATA

    answers = [
        Decision("feedback", "drop the gender breakdown and add a breakdown of Amount by Payment Method"),
        Decision("feedback", "also add a breakdown of Amount by ship-state"),
        Decision("approve"),
    ]
    seen: list[str] = []

    class Reviewer:
        def review(self, plan: str, revision: int, max_revisions: int) -> Decision:
            seen.append(plan)
            return answers.pop(0)

    settings = Settings().with_provider("offline")
    settings.max_revisions = 3
    options = JobOptions(
        inputs=[DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"],
        request="Analyze this data and write a DOCX report",
        settings=settings,
        job_dir=tmp_path / "job",
        cwd=tmp_path,
    )
    outcome = run_job(options, Reviewer())
    assert outcome.status == "completed", outcome.error
    notes = seen[-1].split("## thought")[0]
    assert "applied: remove breakdown on `Gender`" in notes and "no such column `Payment Method`" in notes
    assert "added: Break down `Amount` by `ship-state`" in notes
    results = (outcome.job_dir / "all_results.txt").read_text(encoding="utf-8")
    assert "plan_item: Break down `Amount` by `ship-state`" in results
    assert "by `Gender`" not in results


# Each part of a request (grain, breakdown, filter, statistic) is applied, or the request is not applied and the note
# names that part and why. "Already in the plan" only when kind, measure, grain, breakdown, filter and statistic match.

MONTHLY_BY_CATEGORY = (
    "Trend of `Amount` per month over `Date` by `Category`: totals per period and category, first vs last period "
    "change per category, line chart"
)
DAILY = "Trend of `Amount` per day over `Date`: totals per period, first vs last period change, line chart"
YEARS = _profile([_col("Year", "measure", distinct=40, min=1970, max=2009, mean=1990, semantic="year",
                       aggregation="none"),
                  _col("Region", "category", distinct=4),
                  _col("Units", "measure", distinct=40, min=1, max=900, mean=200)])  # fmt: skip


def test_the_issue_feedback_adds_the_monthly_trend_by_category_beside_the_daily_one() -> None:
    plan = _plan()
    assert DAILY in _coder_items(plan)
    revised = revise_plan(plan, "drop the gender breakdown and add a monthly trend of Amount by Category", 1, SHOP)
    assert plan_problems(revised) == []
    items = _coder_items(revised)
    assert MONTHLY_BY_CATEGORY in items and DAILY in items  # added beside the daily trend, which stays
    assert not any("`Gender`" in t for t in items)
    notes = revised.split("## thought")[0]
    assert "already in the plan" not in notes
    assert "applied: add trend on `Amount`, `Date`, `Category` [grain: month; by: `Category`]" in notes
    assert "`Date` spans a single month" in notes  # the one-period caveat is said, not hidden
    assert "the trend shows the 5 largest, the rest named as left out" in notes
    spec = parse_item(MONTHLY_BY_CATEGORY, SHOP)
    assert spec == AnalysisSpec("trend", None, "Amount", "Date", agg="sum", period="month", split="Category")


def test_grain_applied_adds_a_monthly_trend_and_a_second_ask_is_already_in_the_plan() -> None:
    request = _only("add a monthly trend of Amount")
    assert request.outcome == APPLIED and request.asked.grain == "month"
    assert (request.specs[0].period, request.specs[0].by, request.specs[0].split) == ("month", "Date", None)
    revised = revise_plan(_plan(), "add a monthly trend of Amount", 1, SHOP)
    again = _only("add a monthly trend of Amount", revised)
    assert again.outcome == NOT_APPLIED and again.reason == "already in the plan"
    same = _only("add a daily trend of Amount")  # every part equal to the plan's trend
    assert same.outcome == NOT_APPLIED and same.reason == "already in the plan"


def test_grain_not_applied_over_a_year_column_names_the_grain_and_why() -> None:
    (request,) = plan_requests("add a monthly trend of Units", YEARS, plan_markdown(YEARS))
    assert request.outcome == NOT_APPLIED
    assert request.reason.startswith("grain month:") and "holds whole years" in request.reason
    breakdown = _only("add a monthly correlation between Amount and Qty")
    assert breakdown.outcome == NOT_APPLIED and breakdown.reason.startswith("grain month: a correlation has no time")


def test_breakdown_applied_splits_the_trend_and_a_plain_trend_is_no_match() -> None:
    request = _only("add a trend of Amount by Category")
    assert request.outcome == APPLIED and request.asked.by == ("Category",)
    spec = request.specs[0]
    assert (spec.split, spec.period) == ("Category", "day")  # the axis' own grain: none was asked for
    merged = _only("add a monthly breakdown of Amount by Category")  # a breakdown with a grain: the split trend
    assert merged.outcome == APPLIED and merged.specs[0].item_text() == MONTHLY_BY_CATEGORY


def test_breakdown_not_applied_names_the_split_and_why() -> None:
    by_measure = _only("add a weekly trend of Amount by Qty")
    assert by_measure.outcome == NOT_APPLIED
    assert by_measure.reason == "by `Qty`: `Qty` is a measure, not a category to split the trend by"
    distribution = _only("add a distribution of Amount by Category")
    assert distribution.outcome == NOT_APPLIED and distribution.reason.startswith("by `Category`: the catalog has no")
    two = _only("add a trend of Amount by Category by Age Group")
    assert two.outcome == NOT_APPLIED and "a trend splits by one category" in two.reason


def test_filter_applied_adds_a_filtered_kpi() -> None:
    request = _only("add the total of Amount for Gender = 'F'")
    assert request.outcome == APPLIED and request.asked.where == (("Gender", "F"),)
    assert request.specs[0].item_text() == "Compute the total of `Amount` for `Gender` = 'F'"
    only = _only("add the average Amount only Gender f")  # the profile's spelling of the value
    assert only.outcome == APPLIED and only.specs[0].item_text() == "Compute the average of `Amount` for `Gender` = 'F'"
    value_first = _only("add the total of Qty only M")
    assert value_first.outcome == APPLIED and value_first.specs[0].where == (("Gender", "M"),)
    last = _only("add the total of Qty in the last week")
    assert last.outcome == APPLIED
    assert last.specs[0].item_text() == "Compute the total of `Qty` in the last week of `Date`"
    revised = revise_plan(_plan(), "add the total of Amount for Gender = 'F'", 1, SHOP)
    assert "Compute the total of `Amount` for `Gender` = 'F'" in _coder_items(revised)


def test_filter_not_applied_names_the_filter_and_why() -> None:
    trend = _only("add a monthly trend of Amount for Gender = 'F'")
    assert trend.outcome == NOT_APPLIED
    assert trend.reason.startswith("filter `Gender` = 'F': the catalog has no filtered trend")
    assert "add the total of `Amount` for `Gender` = 'F'" in trend.reason  # the filtered item that can be added
    missing = _only("add the total of Amount for Gender X")
    assert missing.outcome == NOT_APPLIED
    assert missing.reason == "filter `Gender` = 'X': `Gender` has no value 'X' (its values: 'F', 'M')"
    above = _only("add the total of Amount for Qty > 3")
    assert above.outcome == NOT_APPLIED and "only a filter on equal values" in above.reason


def test_statistic_applied_gives_an_average_trend_and_row_counts() -> None:
    average = _only("add a trend of average Amount")
    assert average.outcome == APPLIED and average.asked.statistic == "mean"
    assert average.specs[0].item_text().startswith("Trend of average `Amount` per day over `Date`")
    counts = _only("add a count of rows by Category")
    assert counts.outcome == APPLIED and counts.specs[0].item_text().startswith("Count rows by `Category`")
    mean_by = _only("add the average Amount by Age Group")
    assert mean_by.outcome == APPLIED and mean_by.specs[0].agg == "mean"


def test_statistic_not_applied_names_the_statistic_and_why() -> None:
    median = _only("add a median trend of Amount")
    assert median.outcome == NOT_APPLIED
    assert median.reason == "statistic median: a trend gives totals, averages or row counts per period, not a median"
    by_median = _only("add the median of Amount by Category")
    assert by_median.outcome == NOT_APPLIED and by_median.reason.startswith("statistic median: a breakdown gives")
    price = _profile([_col("Date", "date", dtype="datetime", distinct=90, min="2025-01-01", max="2025-03-31"),
                      _col("Price", "measure", unit="USD", distinct=90, aggregation="mean", semantic="currency"),
                      _col("Store", "category", distinct=4)])  # fmt: skip
    (total,) = plan_requests("add a trend of total Price", price, plan_markdown(price))
    assert total.outcome == NOT_APPLIED and total.reason.startswith("statistic total: `Price` is averaged, never")


def test_a_removal_names_its_parts_and_keeps_the_items_they_rule_out() -> None:
    added = revise_plan(_plan(), "add a monthly trend of Amount", 1, SHOP)
    removed = revise_plan(added, "remove the monthly trend", 2, SHOP)
    items = _coder_items(removed)
    assert DAILY in items and not any("per month" in t for t in items)
    assert "applied: remove trend [grain: month]" in removed


def test_the_hosted_planner_gets_the_parts_of_each_request() -> None:
    feedback = "add a monthly trend of Amount by Category, and add a median trend of Amount"
    text = requests_markdown(plan_requests(feedback, SHOP, _plan()))
    lines = text.splitlines()
    assert lines[0].startswith("- applied: add trend on `Amount`, `Date`, `Category` [grain: month; by: `Category`]")
    assert lines[0].endswith("; item: " + MONTHLY_BY_CATEGORY)
    assert lines[1].startswith("- not_applied: add trend on `Amount` [statistic: median]")
    assert "statistic median: a trend gives" in lines[1]


def test_korean_feedback_asks_for_a_monthly_trend_by_region() -> None:
    regions = [{"value": v, "count": 1} for v in ("서울", "부산", "대구")]
    korean = _profile([_col("날짜", "date", dtype="datetime", distinct=90, min="2025-01-01", max="2025-03-31"),
                       _col("매출액", "measure", unit="KRW", distinct=90, min=1, max=900, mean=80),
                       _col("지역", "category", distinct=3, top_values=regions)])  # fmt: skip
    plan = plan_markdown(korean, "", "ko")
    revised = revise_plan(plan, "월별 지역별 매출액 추이를 추가해 주세요", 1, korean)
    item = "`날짜` 기준 `지역`별 월별 `매출액` 추이: 기간·범주별 합계, 범주별 첫 기간 대비 마지막 기간 변화율, 선 차트"
    assert item in _coder_items(revised) and "no such column" not in revised
    (seoul,) = plan_requests("서울만 매출액 합계를 추가해 주세요", korean, plan)
    assert seoul.outcome == APPLIED and seoul.specs[0].item_text("ko") == "`지역` = '서울' 행의 `매출액` 합계 계산"
