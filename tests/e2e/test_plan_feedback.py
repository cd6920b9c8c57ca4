"""Plan review on a whole offline job: "add a monthly trend of Amount by Category" on moon-market EN becomes a plan
item with that grain and breakdown, and the finished report prints the verified monthly series per Category."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobcheck import check_job

from insightloom.config import Settings
from insightloom.report.formatting import format_value
from insightloom.workflow import Decision, JobOptions, run_job
from repo_paths import DATA

pytestmark = pytest.mark.e2e
MOON = DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"
ITEM = (
    "Trend of `Amount` per month over `Date` by `Category`: totals per period and category, first vs last period "
    "change per category, line chart"
)
PREFIX = "amount_per_month_by_category"


class Reviewer:
    def __init__(self, answers: list[Decision]) -> None:
        self.answers = answers
        self.seen: list[str] = []

    def review(self, plan: str, revision: int, max_revisions: int) -> Decision:
        self.seen.append(plan)
        return self.answers.pop(0)


def test_a_monthly_trend_by_category_asked_at_review_reaches_the_report_verified(tmp_path: Path) -> None:
    reviewer = Reviewer([Decision("feedback", "add a monthly trend of Amount by Category"), Decision("approve")])
    settings = Settings().with_provider("offline")
    request = "Analyze this data and write a DOCX report"
    options = JobOptions(inputs=[MOON], request=request, settings=settings, job_dir=tmp_path / "job", cwd=tmp_path)
    outcome = run_job(options, reviewer)
    assert outcome.status == "completed", outcome.error
    first, revised = reviewer.seen
    assert ITEM not in first and f"- [ ] {ITEM}" in revised
    notes = revised.split("## thought")[0]
    assert "applied: add trend on `Amount`, `Date`, `Category` [grain: month; by: `Category`]" in notes
    assert "already in the plan" not in notes
    job = outcome.job_dir
    facts = check_job(job, min_charts=6, min_markers=10)  # contracts, audit pass, every marker verified
    assert (job / "code" / "04_trend_date_month_by_category.py").is_file()
    assert f"plan_item: {ITEM}" in (job / "all_results.txt").read_text(encoding="utf-8")

    calcs = {c["id"]: c for c in json.loads((job / "calculation_metadata.json").read_text())["calculations"]}
    citations = json.loads((job / "citations.json").read_text(encoding="utf-8"))["citations"]
    status = {c["calculation_id"]: c for c in citations}
    cells = sorted(i for i in calcs if i.startswith(f"{PREFIX}_") and i.endswith("_2025_05"))
    assert cells == [f"{PREFIX}_{i}_2025_05" for i in range(1, 6)]  # the 5 largest categories in May 2025
    ours = [i for i in calcs if i.startswith(PREFIX)]
    assert all(status[i]["verification_status"] == "verified" and calcs[i].get("check") for i in ours)
    assert all(status[i]["citation_id"] for i in cells)  # each value of the series is printed, with its marker
    assert calcs[f"{PREFIX}_groups"]["value"] == 14 and calcs[f"{PREFIX}_left"]["value"] == 9

    text = facts["text"]
    assert "Trend of total Amount per month by Category" in text
    assert "left out: " + str(calcs[f"{PREFIX}_left_names"]["value"]) in text  # the left-out categories, named
    for cell in cells:
        calc = calcs[cell]
        printed = format_value(calc["value"], calc.get("unit"), calc.get("decimals"))
        assert f"{printed} {status[cell]['citation_id']}" in text
    report = (job / "report.md").read_text(encoding="utf-8")
    assert "| Period | Ready Meal/Meal Kit/Salad |" in report and "![Trend of total `Amount` per month by" in report
    # The value of the largest category equals the breakdown's own total for it: one month holds every row.
    assert calcs[f"{PREFIX}_1_2025_05"]["value"] == calcs["amount_by_category_1"]["value"]
