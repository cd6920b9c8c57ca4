"""The prompts carry the product's knowledge: column meaning, the helpers, recipes, suggestions and request outcomes.

A hosted model knows only what its prompt and skills tell it, so what the offline model gets from product functions
must reach the prompts too: the Coder's (within its token budget, detail in a lazily loaded skill) and the
Planner's (the product's suggested analyses and the feedback's requests, computed from the same profile).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from insightloom import prompting
from insightloom.analysis.planning import plan_analyses, plan_markdown
from insightloom.context.tokens import count_tokens
from insightloom.skills import discover_skills

SEMANTICS_KEYS = ("aggregation", "semantic", "unit", "unit_scale", "calc_id_stem", "rate_pairs", "headline_measures",
                  "time_axis")  # fmt: skip
HELPERS = ("qi", "ql", "ref", "compact_number", "track_total", "track_mean", "track_share", "track_group_values",
           "track_rate", "track_change", "track_corr", "run_standard", "AggregationRefused")  # fmt: skip
CODER_STATIC_LIMIT = 4000


def _coder_static() -> str:
    values = dict.fromkeys(prompting.placeholders(prompting.load_prompt("coder")), "")
    return prompting.split_static(prompting.render_prompt("coder", **values))[0]


@pytest.mark.parametrize("name", [*SEMANTICS_KEYS, *HELPERS, "track_calculation", "recipe"])
def test_the_coder_static_prompt_documents(name: str) -> None:
    assert f"`{name}" in _coder_static()


def test_the_coder_prompt_documents_recipe_ops_and_points_to_the_helpers_skill() -> None:
    static = _coder_static()
    for op in ("std", "count_groups", "column_count"):
        assert f'"op": "{op}"' in static
    assert "`analysis-helpers`" in static
    skill = discover_skills(cwd=Path("/nonexistent")).load("analysis-helpers")
    for name in (*SEMANTICS_KEYS, *HELPERS, "cohort_date", "wide_years", "count_groups", "column_count"):
        assert name in skill, name


def test_the_coder_static_prompt_stays_within_its_token_budget(tmp_path: Path) -> None:
    # Measured like benchmarks/context_ablation.py: the static prefix plus the skills catalog, in real BPE tokens.
    catalog = discover_skills(cwd=tmp_path).prompt_block()
    tokens = count_tokens(_coder_static()) + count_tokens(catalog)
    assert 1000 < tokens <= CODER_STATIC_LIMIT


def test_the_planner_prompt_uses_headline_ranking_and_time_semantics() -> None:
    static = prompting.split_static(prompting.load_prompt("planner"))[0]
    for phrase in ("`headline_measures`", "`time_axis`", "`cohort_date`", "`wide_years`", "`year`", "`aggregation`"):
        assert phrase in static, phrase
    assert "never a trend axis" in static


def _col(name: str, role: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "dtype": "int64" if role == "measure" else "string", "role": role, "missing": 0,
            "distinct": 5, **kw}  # fmt: skip


PROFILE = {
    "tables": [
        {
            "view": "sales",
            "file": "sales.csv",
            "rows": 500,
            "columns": [
                _col("Date", "date", dtype="datetime", distinct=90, min="2024-01-01", max="2024-03-30"),
                _col("Region", "category", distinct=4),
                _col("Gender", "category", distinct=2),
                _col("Qty", "measure", distinct=9, min=1, max=9, mean=3),
                _col("Amount", "measure", unit="USD", distinct=400, min=3, max=900, mean=80),
            ],
        }
    ],
    "aliases": {"data": "sales"},
    "language": "en",
}


def _profile_text(profile: dict[str, Any]) -> str:
    return f"<data_profile>\n{json.dumps(profile, separators=(',', ':'))}\n</data_profile>"


def test_the_planner_receives_the_products_suggested_analyses() -> None:
    text = prompting.render_prompt(
        "planner", request="Sales by region", data_profile=_profile_text(PROFILE), language="en", max_tokens=8000
    )
    _static, dynamic = prompting.split_static(text)
    block = dynamic.split("<suggested_analyses>")[1].split("</suggested_analyses>")[0]
    expected = [spec.item_text("en") for spec in plan_analyses(PROFILE, "Sales by region", "en")]
    assert block.splitlines() == [f"- {item}" for item in expected] and len(expected) >= 5


def test_the_revise_prompt_carries_the_requests_and_their_outcomes() -> None:
    values = {"request": "", "data_profile": _profile_text(PROFILE), "language": "en", "max_tokens": 8000,
              "previous_plan": plan_markdown(PROFILE), "revision": 1,
              "feedback": "drop the gender breakdown and add a breakdown of Amount by Payment Method"}  # fmt: skip
    dynamic = prompting.split_static(prompting.render_prompt("planner_revise", **values))[1]
    block = dynamic.split("<revision_requests>")[1].split("</revision_requests>")[0].splitlines()
    assert block[0].startswith("- applied: remove breakdown on `Gender`")
    assert block[1].startswith("- not_applied: add breakdown") and "no such column `Payment Method`" in block[1]


def test_a_given_value_wins_over_the_derived_one_and_a_missing_profile_is_said() -> None:
    values = {"request": "", "data_profile": "", "language": "en", "max_tokens": 10}
    assert "(no data profile)" in prompting.render_prompt("planner", **values)
    given = prompting.render_prompt("planner", **values, suggested_analyses="MY OWN LIST")
    assert "<suggested_analyses>MY OWN LIST</suggested_analyses>" in given
    assert prompting.profile_from_prompt(_profile_text(PROFILE)) == PROFILE
    assert prompting.profile_from_prompt("<data_profile>\nnot json\n</data_profile>") is None


def _one_table(columns: list[dict[str, Any]], rows: int = 40) -> dict[str, Any]:
    return {"tables": [{"view": "t", "file": "t.csv", "rows": rows, "columns": columns}], "aliases": {"data": "t"}}


def _suggested(profile: dict[str, Any]) -> list[str]:
    text = prompting.render_prompt(
        "planner", request="", data_profile=_profile_text(profile), language="en", max_tokens=8000
    )
    return text.split("<suggested_analyses>")[1].split("</suggested_analyses>")[0].splitlines()


def test_suggested_trends_follow_the_time_semantics() -> None:
    years = _one_table([_col("Year", "measure", distinct=40, min=1970, max=2009, mean=1990),
                        _col("Units Sold", "measure", distinct=40, min=1, max=900, mean=200)])  # fmt: skip
    trends = [t for t in _suggested(years) if t.startswith("- Trend")]
    assert len(trends) == 1 and "per year over `Year`" in trends[0]
    others = [t for t in _suggested(years) if not t.startswith("- Trend")]
    assert others and not any("`Year`" in t for t in others)  # a year is the axis, never a measure
    wide = _one_table([_col("Country", "category", distinct=30)]
                      + [_col(str(y), "measure", dtype="float64", distinct=30, min=1, max=80, mean=40)
                         for y in range(1990, 1996)])  # fmt: skip
    assert any(t.startswith("- Trend per year across the year columns from `1990`") for t in _suggested(wide))
    hires = _one_table([_col("Hire Date", "date", dtype="datetime", distinct=30, min="2001-01-01", max="2020-01-01",
                             semantic="cohort_date"),
                        _col("Dept", "category", distinct=4),
                        _col("Salary", "measure", unit="USD", distinct=30, min=1, max=80, mean=40)])  # fmt: skip
    assert not any(t.startswith("- Trend") for t in _suggested(hires))
