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
