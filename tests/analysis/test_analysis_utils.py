"""analysis_utils: calculation tracking, all_results.txt, charts and the cached-data loader."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from PIL import Image

from insightloom.analysis_utils import (
    append_result,
    generate_utils_module,
    load_calculations,
    load_df,
    read_results,
    save_calculation_metadata,
    save_chart,
    to_python_type,
    track_calculation,
)
from insightloom.errors import BadInputError
from insightloom.fonts import find_cjk_font


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(tmp_path))
    return tmp_path


def _track(calc_id: str, value: object, **kw: object) -> dict:
    return track_calculation(calc_id, value, "desc", "formula", "sales.csv", ["Amount"], "high", **kw)


def test_to_python_type_converts_numpy_and_pandas_values() -> None:
    assert to_python_type(np.int64(3)) == 3 and type(to_python_type(np.int64(3))) is int
    assert type(to_python_type(np.float32(1.5))) is float
    assert to_python_type(pd.Timestamp("2025-05-01")) == "2025-05-01T00:00:00"
    assert to_python_type(pd.NA) is None
    assert to_python_type({"a": np.array([1, 2])}) == {"a": [1, 2]}


def test_track_calculation_writes_through_and_merges_by_id(job: Path, contract) -> None:
    _track("total_amount", np.int64(100), unit="KRW", check="SELECT 100")
    _track("share", np.float64(45.2), unit="%", decimals=1)
    _track("total_amount", 120.5)  # later wins, position kept
    data = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))
    contract("calculation_metadata", data)
    assert [c["id"] for c in data["calculations"]] == ["total_amount", "share"]
    first = data["calculations"][0]
    assert first["value"] == 120.5 and first["check"] is None
    assert data["calculations"][1]["value"] == 45.2 and data["calculations"][1]["decimals"] == 1
    assert data["generated_at"].endswith("Z")
    assert not list(job.glob(".calculation_metadata.json.*.tmp"))  # temp file renamed away


@pytest.mark.parametrize("value", [float("nan"), math.inf, np.float64("nan"), None, pd.NaT])
def test_track_calculation_rejects_missing_and_infinite_values(job: Path, value: object) -> None:
    with pytest.raises(ValueError, match="bad_value"):
        _track("bad_value", value)
    assert load_calculations(job) == []


def test_track_calculation_rejects_bad_importance_and_id(job: Path) -> None:
    with pytest.raises(ValueError, match="importance"):
        track_calculation("x", 1, "d", "f", "s.csv", [], "critical")
    with pytest.raises(ValueError, match="id"):
        track_calculation("total revenue {x}", 1, "d", "f", "s.csv", [], "high")


def test_save_calculation_metadata_creates_an_empty_file(job: Path, contract) -> None:
    path = Path(save_calculation_metadata())
    data = json.loads(path.read_text(encoding="utf-8"))
    contract("calculation_metadata", data)
    assert data["calculations"] == []


def test_append_result_and_read_results_round_trip(job: Path) -> None:
    for calc_id in ("top", "amount_1", "rows"):
        _track(calc_id, 1)
    append_result(
        "Amount by Category",
        plan_item="Break down `Amount` by `Category`: group totals",
        script="code/03_breakdown_category.py",
        findings=["The top group is {{calc:top}} with {{calc:amount_1}}."],
        table="| Category | Amount |\n| --- | --- |\n| Coffee/Tea | {{calc:amount_1}} |",
        charts=["charts/breakdown.png"],
    )
    append_result("Notes", "- first note with {{calc:rows}}\n| a | b |", files=["charts/x.png"])
    text = (job / "all_results.txt").read_text(encoding="utf-8")
    assert "## Amount by Category\n- plan_item: Break down `Amount` by `Category`: group totals\n" in text
    assert "- calculations: top, amount_1\n- charts: charts/breakdown.png\n### findings\n" in text
    sections = read_results(job / "all_results.txt")
    assert [s.title for s in sections] == ["Amount by Category", "Notes"]
    first, second = sections
    assert first.script == "code/03_breakdown_category.py"
    assert first.calculations == ["top", "amount_1"]
    assert first.findings == ["The top group is {{calc:top}} with {{calc:amount_1}}."]
    assert first.table.splitlines()[2] == "| Coffee/Tea | {{calc:amount_1}} |"
    assert second.findings == ["first note with {{calc:rows}}"]
    assert second.calculations == ["rows"] and second.charts == ["charts/x.png"] and second.table == "| a | b |"


@pytest.mark.parametrize(
    "written", ["{calc:total_revenue}", "{{calc:total_revenue}", "{calc:total_revenue}}", "{{Calc:total_revenue}}"]
)
def test_append_result_refuses_a_near_miss_with_the_exact_fix(job: Path, written: str) -> None:
    # Issue 11, item 2: the f-string slip f"... {{calc:{cid}}} ..." writes {calc:total_revenue}.
    _track("total_revenue", 100)
    with pytest.raises(ValueError) as info:
        append_result("Revenue", findings=[f"Revenue was {written}."])
    message = str(info.value)
    assert f"write {{{{calc:total_revenue}}}} instead of {written}" in message
    assert 'in an f-string that is f"{{{{calc:{cid}}}}}"' in message
    assert not (job / "all_results.txt").exists()


def test_append_result_corrects_a_near_miss_to_the_tracked_id(job: Path) -> None:
    _track("revenue_mean", 100)
    with pytest.raises(ValueError) as info:
        append_result("Revenue", findings=["Mean {{Calc:REVENUE_MEAN}} and {{ calc.revenue_mean }} and {{calc:}}."])
    message = str(info.value)
    assert "write {{calc:revenue_mean}} instead of {{Calc:REVENUE_MEAN}}" in message
    assert "write {{calc:revenue_mean}} instead of {{ calc.revenue_mean }}" in message
    assert "{{calc:}} is not a reference: it names no calculation" in message


def test_append_result_refuses_unknown_ids_naming_the_closest(job: Path) -> None:
    _track("avg_revenue", 1)
    _track("total_revenue", 2)
    with pytest.raises(ValueError, match=r"'avg_rev' is not a tracked calculation \(closest tracked ids: avg_revenue"):
        append_result("Revenue", findings=["Average {{calc:avg_rev}}."])
    with pytest.raises(ValueError, match=r"'Total_Revenue' is not a tracked calculation \(closest tracked ids: total_"):
        append_result("Revenue", table="| K | V |\n|---|---|\n| A | {{calc:Total_Revenue}} |")
    with pytest.raises(ValueError, match="'missing_one'"):
        append_result("Revenue", findings=["Total {{calc:total_revenue}}."], calculations=["missing_one"])
    assert not (job / "all_results.txt").exists()


def test_append_result_before_any_tracking_says_to_track_first(job: Path) -> None:
    with pytest.raises(ValueError, match="call track_calculation first"):
        append_result("Revenue", findings=["Total {{calc:total_revenue}}."])


def test_append_result_accepts_inner_spaces(job: Path) -> None:
    _track("total_revenue", 2)
    append_result("Revenue", findings=["Total {{ calc : total_revenue }}."])
    assert read_results(job / "all_results.txt")[0].calculations == ["total_revenue"]


def test_read_results_of_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_results(tmp_path / "all_results.txt") == []


def _figure(labels: list[str]) -> Figure:
    fig = Figure(figsize=(10, 5))
    ax = fig.subplots()
    ax.bar(labels, [3, 1], color="#4C72B0")
    ax.set_title(labels[0], fontsize=6)
    return fig


def test_save_chart_sizes_for_the_docx_and_writes_the_sidecar(job: Path) -> None:
    fig = _figure(["North", "South"])
    path = save_chart(fig, "../sales by region.png", title="Sales", alt="Bar chart", caption="Sales by region")
    assert path == "charts/sales_by_region.png"
    with Image.open(job / path) as image:
        assert image.size[0] == 900  # 6.0 in x 150 dpi
    assert fig.axes[0].title.get_fontsize() >= 9
    sidecar = json.loads((job / "charts" / "sales_by_region.json").read_text(encoding="utf-8"))
    assert sidecar == {
        "title": "Sales",
        "alt": "Bar chart",
        "caption": "Sales by region",
        "clipped_texts": [],
        "repeated_tick_labels": [],
    }


def test_save_chart_uses_a_cjk_font_for_hangul_labels(job: Path) -> None:
    font = find_cjk_font()
    if font is None:
        pytest.skip("no CJK font installed")
    fig = _figure(["쿠빵", "네이바"])
    save_chart(fig, "korean", title="매체", alt="막대", caption="매체별")
    ticks = fig.axes[0].get_xticklabels()
    assert Path(ticks[0].get_fontproperties().get_file()) == font.path
    assert Path(fig.axes[0].title.get_fontproperties().get_file()) == font.path


def test_load_df_resolves_the_data_alias_and_rejects_unknown_views(job: Path) -> None:
    (job / "cache").mkdir()
    pd.DataFrame({"a": [1, 2]}).to_parquet(job / "cache" / "sales.parquet")
    profile = {"tables": [{"view": "sales", "parquet": "cache/sales.parquet"}], "aliases": {"data": "sales"}}
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    assert load_df()["a"].tolist() == [1, 2]
    assert len(load_df("sales")) == 2
    with pytest.raises(BadInputError, match="nope"):
        load_df("nope")


def test_load_df_without_profile_names_the_fix(job: Path) -> None:
    with pytest.raises(BadInputError) as info:
        load_df()
    assert "profile.json" in str(info.value) and info.value.fix


def test_generated_utils_module_reexports_explicitly() -> None:
    source = generate_utils_module()
    compile(source, "coder_analysis_utils.py", "exec")
    assert "import *" not in source
    namespace: dict = {}
    exec(source, namespace)
    for name in ("load_df", "to_python_type", "track_calculation", "save_calculation_metadata", "append_result",
                 "save_chart"):  # fmt: skip
        assert name in namespace["__all__"] and callable(namespace[name])


def test_checks_over_thousands_of_columns_stay_shallow_enough_for_duckdb() -> None:
    import duckdb

    from insightloom.analysis_utils import sql_all, sql_sum

    cols = [f"c{i}" for i in range(3000)]
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT " + ", ".join(f"1 AS {c}" for c in cols[:1]) + " FROM range(3)")
    terms = ["1"] * 3000
    assert con.execute(f"SELECT {sql_sum(terms)}").fetchone() == (3000,)
    assert con.execute(f"SELECT {sql_all(['TRUE'] * 3000)}").fetchone() == (True,)
    assert sql_sum([]) == "0" and sql_all([]) == "TRUE" and sql_sum(["a"]) == "a"
    assert sql_sum(["a", "b", "c"]) == "(a + (b + c))"
    with pytest.raises(duckdb.Error):  # what a plain join does past DuckDB's depth limit
        con.execute("SELECT " + " + ".join(terms))


# Issue 11 follow-up (second review, 3): append_result never writes a forged section, and odd argument types are
# taken as meant or refused naming the argument and the fix.


def test_append_result_refuses_a_table_that_would_forge_a_section(job: Path) -> None:
    _track("total_revenue", 100)
    forged = "| a | b |\n## Forged\n- plan_item: Item D\n- calculations: total_revenue"
    with pytest.raises(ValueError, match=r"table= holds 3 line\(s\) that are no table rows.*'## Forged'") as caught:
        append_result("Revenue", table=forged, plan_item="Item X")
    assert "Fix: pass only Markdown table rows" in str(caught.value)
    assert not (job / "all_results.txt").exists()


def test_append_result_keeps_every_field_and_finding_on_one_line(job: Path) -> None:
    _track("total_revenue", 100)
    forged = "\n## Forged\n- plan_item: Item D\n- calculations: total_revenue"
    append_result(
        "Revenue" + forged,
        plan_item="Item X" + forged,
        findings=["Total {{calc:total_revenue}}." + forged],
        charts=["charts/x.png" + forged],
    )
    sections = read_results(job / "all_results.txt")
    assert [s.plan_item for s in sections] == ["Item X ## Forged - plan_item: Item D - calculations: total_revenue"]
    assert len(sections[0].findings) == 1 and sections[0].calculations == ["total_revenue"]


def test_append_result_takes_a_bare_string_as_a_one_item_list(job: Path) -> None:
    _track("total_revenue", 100)
    append_result(
        "Revenue",
        findings="Total {{calc:total_revenue}}.",
        charts="charts/revenue.png",
        calculations="total_revenue",
        files="code/01_kpis.py",
    )
    (section,) = read_results(job / "all_results.txt")
    assert section.findings == ["Total {{calc:total_revenue}}."]
    assert section.charts == ["charts/revenue.png"] and section.calculations == ["total_revenue"]
    assert section.script == "code/01_kpis.py"


def test_append_result_takes_a_number_as_a_section_title(job: Path) -> None:
    append_result(5, "A note")  # type: ignore[arg-type]
    assert [s.title for s in read_results(job / "all_results.txt")] == ["5"]


@pytest.mark.parametrize(
    "kwargs, named",
    [
        ({"findings": [{"a": 1}]}, "findings[0]"),
        ({"findings": {"a": 1}}, "findings"),
        ({"calculations": [None]}, "calculations[0]"),
        ({"charts": 3}, "charts"),
        ({"text": b"Total"}, "text"),
        ({"plan_item": ["Item A"]}, "plan_item"),
    ],
)
def test_append_result_refuses_other_types_naming_the_argument(job: Path, kwargs: dict, named: str) -> None:
    with pytest.raises(ValueError, match=rf"{re.escape(named)} is a .*\nFix: pass {named.split('[')[0]} as"):
        append_result("Revenue", **kwargs)
    assert not (job / "all_results.txt").exists()
