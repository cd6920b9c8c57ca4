"""Planning (product functions every Planner reads): analysis choice, plan format, item wording round trip and
plan revision."""

from __future__ import annotations

from typing import Any

from insightloom.analysis.catalog import AnalysisSpec, parse_item
from insightloom.analysis.ids import slug, slug_map
from insightloom.analysis.planning import plan_analyses, plan_markdown, same_quantity
from insightloom.analysis.revision import revise_plan
from insightloom.plan import parse_plan, plan_problems


def _col(name: str, role: str, **kw: Any) -> dict[str, Any]:
    base = {"name": name, "dtype": "int64" if role == "measure" else "str", "role": role, "missing": 0,
            "distinct": 5, "samples": []}  # fmt: skip
    return {**base, **kw}


def _profile(columns: list[dict[str, Any]], rows: int = 100) -> dict[str, Any]:
    table = {"view": "sales", "file": "sales.csv", "sheet": None, "parquet": "cache/sales.parquet", "rows": rows,
             "columns": columns}  # fmt: skip
    return {"tables": [table], "aliases": {"data": "sales"}, "language": "en"}


SALES = _profile(
    [
        _col("Order ID", "identifier", distinct=100),
        _col("Customer Name", "pii", distinct=100),
        _col("Date", "date", dtype="datetime64[us]", distinct=300, min="2024-01-01", max="2024-12-31"),
        _col("Region", "category", distinct=4),
        _col("Gender", "category", distinct=2),
        _col("Qty", "measure", distinct=9, min=1, max=9, mean=3),
        _col("Amount", "measure", unit="USD", distinct=95, min=3, max=900, mean=80),
    ]
)


def test_plan_covers_every_kind_and_never_uses_personal_columns() -> None:
    specs = plan_analyses(SALES, "Analyze sales", "en")
    kinds = [s.kind for s in specs]
    assert kinds == ["overview", "kpi", "breakdown", "breakdown", "trend", "correlation", "distribution"]
    assert specs[1].measures == ("Amount", "Qty")  # the currency column is the primary measure
    assert [s.by for s in specs if s.kind == "breakdown"] == ["Region", "Gender"]
    assert specs[4].period == "month" and specs[4].agg == "sum"
    used = {c for s in specs for c in s.columns()}
    assert not used & {"Order ID", "Customer Name"}


def test_plan_markdown_follows_the_design_format() -> None:
    text = plan_markdown(SALES, "Analyze sales", "en", "Sales report")
    assert plan_problems(text) == []
    plan = parse_plan(text)
    assert plan.title == "Sales report"
    assert [s.role for s in plan.sections] == ["coder", "validator", "reporter", "auditor"]
    assert [len(s.items) for s in plan.sections[1:]] == [1, 1, 1]
    assert plan.sections[1].items[0].text == "Re-run every tracked calculation's check and write citations.json"
    coder = [i.text for i in plan.sections[0].items]
    assert coder == [s.item_text("en") for s in plan_analyses(SALES, "Analyze sales", "en")]
    assert "Break down `Amount` by `Region`: group totals, top group and its share, bar chart" in coder


def test_korean_plan_uses_korean_items() -> None:
    text = plan_markdown(SALES, "", "ko")
    assert plan_problems(text) == []
    assert "- [ ] `Region`별 `Amount` 분석: 그룹별 합계, 상위 그룹과 비중, 막대 차트" in text


def test_parse_item_rejects_unknown_text_and_personal_columns() -> None:
    assert parse_item("Write a nice summary", SALES) is None
    assert parse_item("Break down `Amount` by `Customer Name`: group totals, top group and its share, bar chart",
                      SALES) is None  # fmt: skip
    assert parse_item("Break down `Amount` by `Nope`: group totals, top group and its share, bar chart", SALES) is None
    spec = AnalysisSpec("breakdown", measure="Amount", by="Region", agg="sum")
    assert parse_item("- [x] " + spec.item_text("en"), SALES) == spec


def test_no_measure_means_counts_and_wide_tables_keep_few_measures() -> None:
    counts = plan_analyses(_profile([_col("Store", "category"), _col("Day", "date", min="2024-01-01",
                                                                     max="2024-01-20")]))  # fmt: skip
    assert [(s.kind, s.agg, s.period) for s in counts] == [("overview", "", None), ("breakdown", "count", None),
                                                          ("trend", "count", "day")]  # fmt: skip
    wide = _profile([_col(f"Skill {i} Score", "measure", distinct=40, min=0, max=100, mean=60) for i in range(90)]
                    + [_col("Total Score", "measure", distinct=40, min=0, max=300, mean=180)])  # fmt: skip
    specs = plan_analyses(wide)
    kpi = next(s for s in specs if s.kind == "kpi")
    assert len(kpi.measures) <= 4 and kpi.measures[0] == "Total Score"
    assert len(specs) <= 6


def test_revise_plan_drops_what_the_feedback_removes() -> None:
    plan = plan_markdown(SALES, "", "en")
    feedback = "Please remove the correlation analysis and skip the Gender breakdown. Also drop validation."
    revised = revise_plan(plan, feedback, 1)
    assert revised.startswith("# Plan (Revised)\n## revision_notes\n")
    assert "> Please remove the correlation analysis" in revised
    assert plan_problems(revised) == []
    coder = parse_plan(revised).section("coder")
    texts = [i.text for i in coder.items]
    assert not any(t.startswith("Correlate") for t in texts)
    assert not any("`Gender`" in t for t in texts)
    assert any("`Region`" in t for t in texts) and any(t.startswith("Distribution") for t in texts)
    assert parse_plan(revised).section("validator").items  # the Validator cannot be removed
    assert "cannot be removed" in revised


def test_revise_plan_removes_a_measure_from_kpis_and_reads_korean_feedback() -> None:
    revised = revise_plan(plan_markdown(SALES, "", "en"), "Drop Qty", 1)
    texts = [i.text for i in parse_plan(revised).section("coder").items]
    assert "Compute headline KPIs for `Amount`: totals or averages" in texts
    assert not any(t.startswith("Correlate") for t in texts)
    korean = revise_plan(plan_markdown(SALES, "", "ko"), "상관관계 분석은 빼 주세요", 2)
    ko_items = [i.text for i in parse_plan(korean).section("coder").items]
    assert not any("상관관계" in t for t in ko_items) and len(ko_items) == 6
    again = revise_plan(korean, "추이 분석도 제외", 3)
    assert "Revision 2" in again and "Revision 3" in again and again.count("# Plan (Revised)") == 1


def test_revise_plan_keeps_at_least_one_coder_item() -> None:
    revised = revise_plan(plan_markdown(SALES, "", "en"), "remove Amount and Region and Gender and Qty and Date", 1)
    assert plan_problems(revised) == []


def test_ids_are_ascii_and_unique_for_korean_names() -> None:
    assert slug("매출액") == "maechulaek"
    assert slug("Age Group") == "age_group" and slug("2024 sales").startswith("c")
    mapping = slug_map(["a-b", "a_b", "광고비용"])
    assert len(set(mapping.values())) == 3 and all(v.isascii() for v in mapping.values())


def test_columns_named_in_backticks_are_exactly_the_breakdowns() -> None:
    named = plan_analyses(SALES, "Break revenue down by `Gender` and `Region`, please.")
    assert [s.by for s in named if s.kind == "breakdown"] == ["Gender", "Region"]
    only_one = plan_analyses(SALES, "Break revenue down by `Gender`.")
    assert [s.by for s in only_one if s.kind == "breakdown"] == ["Gender"]
    # Names that are not usable category columns are ignored, and the default choice comes back.
    ignored = plan_analyses(SALES, "Break it down by `Customer Name` and `Nope`.")
    default = plan_analyses(SALES, "")
    assert [s.by for s in ignored if s.kind == "breakdown"] == [s.by for s in default if s.kind == "breakdown"]


def test_a_text_outcome_leads_as_its_rate_and_is_never_its_own_breakdown() -> None:
    profile = _profile([
        _col("survived", "category", distinct=2, semantic="binary_outcome", aggregation="mean", positive_value="yes"),
        _col("sex", "category", distinct=2),
        _col("age", "measure", dtype="float64", distinct=80, min=1, max=80, mean=30, aggregation="mean"),
    ])  # fmt: skip
    specs = plan_analyses(profile)
    kpi = next(s for s in specs if s.kind == "kpi")
    assert kpi.measures[0] == "survived"
    assert [(s.measure, s.by) for s in specs if s.kind == "breakdown"] == [("survived", "sex")]
    assert [s.measure for s in specs if s.kind == "distribution"] == ["age"]  # a yes/no column has no distribution


def test_a_measure_is_never_correlated_with_its_own_logarithm() -> None:
    columns = [_col("salary", "measure", unit="USD", distinct=90, min=20000, max=90000, mean=40000),
               _col("lsalary", "measure", dtype="float64", distinct=90, min=9.9, max=11.4, mean=10.5),
               _col("cost", "measure", unit="USD", distinct=80, min=5000, max=30000, mean=12000)]  # fmt: skip
    (correlation,) = [s for s in plan_analyses(_profile(columns), "Analyze", "en") if s.kind == "correlation"]
    assert correlation.measures == ("salary", "cost")
    assert same_quantity("gdp", "log_gdp") and same_quantity("GDP_ln", "gdp") and not same_quantity("cost", "lcosts")
