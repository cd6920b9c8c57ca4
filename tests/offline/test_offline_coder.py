"""The offline Coder as a client of the product: its scripts are run_standard calls, and bad columns are refused."""

from __future__ import annotations

import pytest

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.errors import BadInputError
from insightloom.models.offline.analyst import script_for

SALES = {
    "tables": [
        {
            "view": "sales",
            "file": "sales.csv",
            "sheet": None,
            "parquet": "cache/sales.parquet",
            "rows": 100,
            "columns": [
                {"name": "Customer Name", "dtype": "str", "role": "pii", "missing": 0, "distinct": 90, "samples": []},
                {"name": "Amount", "dtype": "int64", "role": "measure", "missing": 0, "distinct": 80, "samples": []},
                {"name": "Region", "dtype": "str", "role": "category", "missing": 0, "distinct": 4, "samples": []},
            ],
        }
    ],
    "aliases": {"data": "sales"},
    "language": "en",
}


def test_script_for_refuses_personal_columns() -> None:
    with pytest.raises(BadInputError, match="Customer Name"):
        script_for(AnalysisSpec("distribution", measure="Customer Name"), SALES)


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_script_is_one_run_standard_call_of_the_exact_plan_item(language: str) -> None:
    spec = AnalysisSpec("breakdown", measure="Amount", by="Region", agg="sum")
    name, source = script_for(spec, SALES, language)
    assert name == "03_breakdown_region.py"
    assert f"run_standard({spec.item_text(language)!r}, language={language!r})" in source
    assert "track_calculation" not in source  # every decision is the product's, at run time
