"""Ties named as ties outside breakdowns (the overview's most-missing column, a trend's peak) with checks that agree
with pandas on the tie, and chart sidecars that record what the laid-out figure still clips or repeats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest
from matplotlib.dates import DateFormatter
from matplotlib.figure import Figure
from tracker_job import calcs, checked, make_job

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis_utils import flush_checks, read_results, run_standard
from insightloom.analysis_utils.charts import repeated_tick_labels, save_chart
from insightloom.analysis_utils.numbers_text import compact_axis
from insightloom.analysis_utils.standard.trend import run_trend

MEASURE = {"role": "measure", "aggregation": "sum"}


def _missing(counts: dict[str, int], rows: int = 12) -> pd.DataFrame:
    """A table whose column ``name`` misses its first ``counts[name]`` cells."""
    return pd.DataFrame({name: [None] * n + [1.0] * (rows - n) for name, n in counts.items()})


def _overview(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counts: dict[str, int], language: str = "en") -> Path:
    job = make_job(tmp_path, monkeypatch, _missing(counts), {name: MEASURE for name in counts})
    run_standard(AnalysisSpec("overview").item_text(language))
    assert flush_checks() == checked(job)  # every check, the tie-aware ones too, reproduces its value
    return job


def _findings(job: Path) -> list[str]:
    return [f for section in read_results(job / "all_results.txt") for f in section.findings]


def test_columns_tied_for_the_most_missing_cells_are_all_named_as_a_tie(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _overview(tmp_path, monkeypatch, {"service": 6, "accident": 6, "period": 2})
    found = calcs(job)
    assert found["most_missing_column"]["value"] == "accident, service"
    assert found["most_missing_cells"]["value"] == 6
    assert "{{calc:most_missing_column}} tie for the most, with {{calc:most_missing_cells}}" in _findings(job)[2]


def test_many_tied_columns_are_counted_and_a_single_top_column_keeps_its_wording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _overview(tmp_path, monkeypatch, {"a": 8, "b": 8, "c": 8, "d": 8, "e": 1})
    assert calcs(job)["most_missing_tied"]["value"] == 4
    assert "{{calc:most_missing_tied}} of them tie for the most" in _findings(job)[2]
    single = _overview(tmp_path / "single", monkeypatch, {"a": 3, "b": 1})
    assert calcs(single)["most_missing_column"]["value"] == "a"
    assert "most_missing_cells" not in calcs(single)
    assert _findings(single)[2].endswith("the most are in {{calc:most_missing_column}}.")


def test_columns_all_missing_as_many_cells_claim_no_most_column_in_either_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _overview(tmp_path, monkeypatch, {"x": 4, "y": 4})
    assert "the same number in each (a tie at {{calc:most_missing_cells}}" in _findings(job)[2]
    ko = _overview(tmp_path / "ko", monkeypatch, {"x": 4, "y": 4, "z": 2}, language="ko")
    assert "공동 최다" in _findings(ko)[2]


def _wide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame) -> Path:
    years = [c for c in frame.columns if c != "occ"]
    columns = {"occ": {"role": "category", "aggregation": "none"}, **{y: MEASURE for y in years}}
    axis = {"kind": "wide_years", "column": None, "columns": years, "period": "year"}
    return make_job(tmp_path, monkeypatch, frame, columns, time_axis=axis)


def test_a_wide_table_whose_years_all_sum_to_one_claims_no_peak_and_its_checks_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shares = np.random.default_rng(7).random((280, 5))
    shares /= shares.sum(axis=0)  # each year's shares sum to 1, up to rounding that differs by summation order
    frame = pd.DataFrame(shares, columns=["1850", "1860", "1870", "1880", "1900"])
    frame["occ"] = [f"o{i}" for i in range(280)]
    job = _wide(tmp_path, monkeypatch, frame)
    run_trend(AnalysisSpec("trend", by="1850", agg="sum", period="year"))
    assert flush_checks() == checked(job)
    assert "values_per_year_peak_period" not in calcs(job)
    assert any("all periods tie, so there is no single peak" in f for f in _findings(job))


def test_periods_tied_for_the_peak_are_counted_and_the_earliest_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = pd.DataFrame({"occ": ["a", "b"], "2001": [0.1, 0.2], "2002": [0.3, 0.4], "2003": [0.2, 0.1],
                          "2004": [0.4, 0.3]})  # fmt: skip  # 2002 and 2004 both total 0.7 (0.1 + 0.2 is not 0.3)
    job = _wide(tmp_path, monkeypatch, frame)
    run_trend(AnalysisSpec("trend", by="2001", agg="sum", period="year"))
    assert flush_checks() == checked(job)
    found = calcs(job)
    assert found["values_per_year_peak_period"]["value"] == "2002"
    assert found["values_per_year_peak_tied"]["value"] == 2
    assert any("{{calc:values_per_year_peak_tied}} tied periods" in f for f in _findings(job))


def _sidecar(job: Path, stem: str) -> dict[str, object]:
    return json.loads((job / "charts" / f"{stem}.json").read_text(encoding="utf-8"))


@pytest.fixture
def chart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Figure, Any]:
    """A figure and its axes, with the job folder pointed at ``tmp_path``."""
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(tmp_path))
    fig = Figure(figsize=(6, 3.4))
    return fig, fig.subplots()


def test_the_chart_sidecar_records_text_the_saved_image_cuts_and_repeated_ticks(
    tmp_path: Path, chart: tuple[Figure, Any]
) -> None:
    fig, ax = chart
    days = pd.date_range("2024-01-01", "2024-06-30", freq="D")
    ax.plot(days, np.arange(len(days)))
    ax.xaxis.set_major_formatter(DateFormatter("%Y"))  # one label per month tick: '2024' six times
    fig.text(1.05, 0.5, "outside").set_in_layout(False)  # left out of the tight box, so the saved image cuts it
    save_chart(fig, "cut", title="Values", alt="Line chart", caption="Values per day")
    sidecar = _sidecar(tmp_path, "cut")
    assert sidecar["repeated_tick_labels"] == ["'2024' on the x axis"]
    assert sidecar["clipped_texts"] == ["'outside' crosses the right edge"]
    assert {"title", "alt", "caption"} <= set(sidecar)


def test_a_clean_chart_records_empty_lists(tmp_path: Path, chart: tuple[Figure, Any]) -> None:
    fig, ax = chart
    ax.plot([1, 2, 3], [3, 1, 2])
    save_chart(fig, "clean", title="Values", alt="Line chart", caption="Values")
    sidecar = _sidecar(tmp_path, "clean")
    assert sidecar["clipped_texts"] == [] and sidecar["repeated_tick_labels"] == []


def test_a_flat_line_gets_a_readable_axis_instead_of_repeated_ticks(tmp_path: Path, chart: tuple[Figure, Any]) -> None:
    fig, ax = chart
    value = 1 / 281  # the mean share of 281 occupations, each year; summation order moves it by ~1e-13
    ax.plot([1850, 1860, 1870, 1880], [value, value * (1 - 2.4e-13), value * (1 + 1e-13), value])
    compact_axis(ax.yaxis)  # as the trend chart does
    assert repeated_tick_labels(fig)  # ticks 1e-18 apart: no number format tells them apart
    save_chart(fig, "flat", title="Shares", alt="Line chart", caption="Shares per year")
    assert _sidecar(tmp_path, "flat")["repeated_tick_labels"] == []
    low, high = ax.get_ylim()
    assert low < value < high and high - low > 1e-4
