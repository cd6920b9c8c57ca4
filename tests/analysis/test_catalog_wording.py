"""Plan-item wording of the analysis catalogue: a wide year table's trend reads as one and round-trips."""

from __future__ import annotations

import pytest

from insightloom.analysis.catalog import AnalysisSpec, parse_item_text


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("agg", ["sum", "mean"])
def test_a_wide_year_trend_names_the_year_columns_and_round_trips(language: str, agg: str) -> None:
    spec = AnalysisSpec("trend", None, measure="1960", by="1960", agg=agg, period="year")
    text = spec.item_text(language)
    assert text.count("`1960`") == 1  # not "Trend of `1960` per year over `1960`"
    assert parse_item_text(text) == spec


def test_a_date_trend_keeps_its_measure_and_period() -> None:
    spec = AnalysisSpec("trend", "orders", measure="Amount", by="Date", agg="sum", period="week")
    assert "`Amount`" in spec.item_text() and "week" in spec.item_text()
    assert parse_item_text(spec.item_text()) == spec


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("agg", ["sum", "mean", "count"])
@pytest.mark.parametrize("period", ["day", "week", "month", "year"])
def test_a_trend_split_by_a_category_round_trips(language: str, agg: str, period: str) -> None:
    measure = None if agg == "count" else "Amount"
    spec = AnalysisSpec("trend", None, measure=measure, by="Date", agg=agg, period=period, split="Category")
    text = spec.item_text(language)
    assert "`Category`" in text and parse_item_text(text) == spec
    assert parse_item_text(f"- [ ] {text}") == spec  # as the plan lists it
    plain = AnalysisSpec("trend", None, measure=measure, by="Date", agg=agg, period=period)
    assert plain.item_text(language) != text and parse_item_text(plain.item_text(language)) == plain
    named = AnalysisSpec("trend", "orders", measure, "Order Date", agg=agg, period=period, split="Ship, City")
    assert parse_item_text(named.item_text(language)) == named  # a table and names with spaces and commas


def test_the_split_trend_wording() -> None:
    spec = AnalysisSpec("trend", None, measure="Amount", by="Date", agg="sum", period="month", split="Category")
    assert spec.item_text() == (
        "Trend of `Amount` per month over `Date` by `Category`: totals per period and category, first vs last period "
        "change per category, line chart"
    )
    assert spec.item_text("ko") == (
        "`Date` 기준 `Category`별 월별 `Amount` 추이: 기간·범주별 합계, 범주별 첫 기간 대비 마지막 기간 변화율, 선 차트"
    )
    assert spec.columns() == ["Amount", "Date", "Category"]
    assert parse_item_text(spec.item_text().replace("`Category`", "`Date`")) is None  # split by its own time axis
