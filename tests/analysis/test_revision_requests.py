"""Reviewer feedback is heard: each request of the feedback is applied or named with the reason it cannot be.

The rules are the product's (``insightloom.analysis.revision``), over small profiles built here; the hosted Planner's
revise prompt and the offline reviser both use them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from insightloom.analysis.catalog import parse_item
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
        _col("Gender", "category", distinct=2),
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
