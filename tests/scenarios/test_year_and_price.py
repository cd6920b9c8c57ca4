"""Issue 12: an LLM-style Coder that uses the product's trackers on a table with a year and a price column.

The Coder first asks for the total of a price (a real model's habit): the tracker refuses it, naming the column, the
profile's verdict and the fix. It then tracks the average price and a year trend with the same trackers, and the job
ends ``completed`` with that year trend verified, beside the trend the standard analyses planned.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from harness import assert_outcome
from llm_like import at_calls

from insightloom.models.offline.conversation import Reply

SUM_OF_PRICE = """\
from coder_analysis_utils import track_total
print(track_total("data", "Price", "probe_price_total"))
"""
YEAR_TREND = """\
from coder_analysis_utils import append_result, track_change, track_group_values, track_mean
mean = track_mean("data", "Price", "probe_price_mean", "Average price per row")
years = track_group_values("probe_price_by_year", "data", "Price", "Year", agg="mean", top=3, shares=False)
change = track_change("data", "Price", "Year", 2005, 2024, "probe_price_change", "Average price, 2005 to 2024",
                      agg="mean")
append_result("Price over the years", plan_item="Probe", findings=[
    f"The average price is {mean}; from the first year to the last it changed by {change}.",
])
"""


def _year_price_csv(path: Path) -> Path:
    rng = np.random.default_rng(12)
    years = np.repeat(np.arange(2005, 2025), 6)
    frame = pd.DataFrame({
        "Year": years,
        "Region": np.tile(["North", "South", "East"], len(years) // 3),
        "Price": np.round(20 + (years - 2005) * 1.5 + rng.normal(0, 2, len(years)), 2),
        "Units": rng.integers(5, 60, len(years)),
    })  # fmt: skip
    frame.to_csv(path, index=False)
    return path


def _script(text: str) -> Reply:
    return Reply.call("write_and_execute_tool", file_path="00_probe.py", content=text, timeout=60)


def test_an_llm_style_coder_hears_the_forbidden_sum_and_ends_with_a_verified_year_trend(scenario, tmp_path) -> None:
    data = _year_price_csv(tmp_path / "prices.csv")
    run = scenario({"coder": at_calls({1: _script(SUM_OF_PRICE), 2: _script(YEAR_TREND)})}, csv=data,
                   request="Analyze how prices changed over the years")  # fmt: skip

    refused = [e for e in run.errors("coder", "write_and_execute_tool") if "AggregationRefused" in e]
    assert refused, run.errors("coder", "write_and_execute_tool")
    assert "'Price'" in refused[0] and "aggregation: mean" in refused[0] and "Fix:" in refused[0]

    assert_outcome(run, "completed")
    profile = json.loads((run.job_dir / "cache" / "profile.json").read_text(encoding="utf-8"))
    table = profile["tables"][0]
    assert table["time_axis"]["kind"] == "year" and table["time_axis"]["column"] == "Year"
    assert {c["name"]: c["aggregation"] for c in table["columns"]}["Year"] == "none"

    listed = json.loads((run.job_dir / "citations.json").read_text(encoding="utf-8"))["citations"]
    status = {c["calculation_id"]: c["verification_status"] for c in listed}
    assert "probe_price_total" not in status  # the refused sum was never tracked
    assert status["probe_price_change"] == "verified"
    planned_trend = [i for i in status if "_per_year_" in i and i.endswith("_change")]
    assert planned_trend and all(status[i] == "verified" for i in planned_trend), planned_trend
    assert not any(i.endswith("_total") and "year" in i.lower() for i in status)  # no "Total Year"
