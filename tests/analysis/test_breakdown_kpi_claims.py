"""Breakdowns, KPIs, distributions and the overview state what an analyst would sign.

- a breakdown's verdicts are tracked claims: the driver (eta squared against every breakdown the plan makes of the
  same measure: exactly one is ``main``), the concentration of the group totals and, for averages, whether the top
  group is above the next one beyond noise;
- charts say what they show (all groups or the top of how many) and carry units; counts print as integers;
- a sentinel code (99999 for "unknown") is never a maximum or a mean, and the report says it is left out;
- the overview names every column the plan leaves out, with its reason, and its boilerplate only when true.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from tracker_job import calcs, claims, make_job, sql_rows
from tracker_job import findings as all_findings

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis.planning import plan_analyses
from insightloom.analysis.wording import TEXTS
from insightloom.analysis_utils import compact_axis, flush_checks, read_results, run_standard
from insightloom.analysis_utils.trackers import value_decimals
from insightloom.calc_refs import CALC_REF_RE, CLAIM_REF_RE
from insightloom.claims.phrases import find_claim_phrases

COLUMNS = {
    "Region": {"role": "category", "aggregation": "none"},
    "Channel": {"role": "category", "aggregation": "none"},
    "Store": {"role": "category", "aggregation": "none"},
    "Revenue": {"role": "measure", "aggregation": "sum", "unit": "USD"},
    "Age": {"role": "measure", "aggregation": "mean"},
}


def _sales(rows: int = 240, seed: int = 4) -> pd.DataFrame:
    """Revenue set by Region (West far above the rest), barely by Channel; Age equal across regions but noisy."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["West", "East", "North"], rows)
    revenue = np.where(region == "West", 400, 100) + rng.integers(0, 60, rows)
    return pd.DataFrame(
        {
            "Region": region,
            "Channel": rng.choice(["Web", "Shop"], rows),
            "Store": [f"S{i % 12:02d}" for i in range(rows)],
            "Revenue": revenue.astype("int64"),
            "Age": rng.integers(20, 60, rows).astype("int64"),
        }
    )


def _plan(job: Path, specs: list[AnalysisSpec]) -> None:
    items = "".join(f"- [ ] {spec.item_text()}\n" for spec in specs)
    (job / "plan.md").write_text(f"# Plan\n## thought\nt\n## title\nT\n## steps\n### 1. Coder: Data analysis\n{items}")


def _run(job: Path, specs: list[AnalysisSpec]) -> None:
    _plan(job, specs)
    for spec in specs:
        run_standard(spec.item_text())
    flush_checks()  # every number and claim re-computed (claims with SciPy) from its SQL


@pytest.fixture
def sales(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_job(tmp_path, monkeypatch, _sales(), COLUMNS)


BREAKDOWNS = [
    AnalysisSpec("breakdown", measure="Revenue", by="Region", agg="sum"),
    AnalysisSpec("breakdown", measure="Revenue", by="Channel", agg="sum"),
    AnalysisSpec("breakdown", measure="Revenue", by="Store", agg="sum"),
]


def test_exactly_one_breakdown_is_the_main_driver_and_every_script_ranks_the_same_candidates(sales: Path) -> None:
    _run(sales, BREAKDOWNS)
    drivers = {c["test"]["params"]["by"]: c for c in claims(sales).values() if c["claim_kind"] == "driver"}
    assert set(drivers) == {"Region", "Channel", "Store"}
    assert {by: c["value"] for by, c in drivers.items()} == {"Region": "main", "Channel": "weak", "Store": "weak"}
    assert {tuple(c["test"]["params"]["candidates"]) for c in drivers.values()} == {("Region", "Channel", "Store")}
    assert all(c["evidence"]["best"] == "Region" and c["evidence"]["breakdowns"] == 3 for c in drivers.values())
    region = drivers["Region"]
    # The claim's SQL returns, in DuckDB, the inputs the verdict was computed from: one row per group and candidate
    # (its count, mean and sum of squares), the counts adding up to every row once per candidate.
    summary = sql_rows(sales, region["test"]["sql"])
    assert {row[0] for row in summary} == {"Region", "Channel", "Store"} and len(summary) == len(
        {row[:2] for row in summary}
    )
    assert sum(row[2] for row in summary) == 3 * 240 == 3 * region["evidence"]["n"]
    text = " ".join(all_findings(sales))
    assert "Row by row, {{claim:claim_driver_revenue_by_region}}." in text
    assert "By group totals, {{claim:claim_concentration_revenue_by_region}}." in text


def test_a_breakdown_of_sums_states_its_concentration_by_top_share_and_hhi(sales: Path) -> None:
    _run(sales, BREAKDOWNS[:1])
    claim = claims(sales)["claim_concentration_revenue_by_region"]
    data = _sales()
    totals = data.groupby("Region")["Revenue"].sum()
    shares = totals / totals.sum() * 100
    assert claim["evidence"]["top"] == "West"
    assert claim["evidence"]["top_share"] == pytest.approx(float(shares.max()))
    assert claim["evidence"]["hhi"] == pytest.approx(float((shares**2).sum()))
    assert len(sql_rows(sales, claim["test"]["sql"])) == 3  # group totals, one row per group


def test_the_highest_average_within_noise_is_said_to_be_within_noise(sales: Path) -> None:
    spec = AnalysisSpec("breakdown", measure="Age", by="Region", agg="mean")
    _run(sales, [spec])
    claim = claims(sales)["claim_comparison_avg_age_by_region_top"]
    assert claim["value"] == "within_noise"  # Age is drawn alike in every region
    top = calcs(sales)["avg_age_by_region_top"]["value"]
    assert claim["test"]["params"]["a"] == top and claim["evidence"]["ci_low"] < 0 < claim["evidence"]["ci_high"]
    assert "Against the next group, {{claim:claim_comparison_avg_age_by_region_top}}." in all_findings(sales)
    assert {row[0] for row in sql_rows(sales, claim["test"]["sql"])} == {claim["test"]["params"]["a"],
                                                                          claim["test"]["params"]["b"]}  # fmt: skip


def test_a_clearly_higher_average_is_higher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    scores = np.concatenate([rng.normal(90, 2, 40), rng.normal(60, 2, 40), rng.normal(50, 2, 40)])
    frame = pd.DataFrame({"Team": ["A"] * 40 + ["B"] * 40 + ["C"] * 40, "Score": scores})
    job = make_job(tmp_path, monkeypatch, frame, {"Team": {"role": "category", "aggregation": "none"},
                                                  "Score": {"role": "measure", "aggregation": "mean"}})  # fmt: skip
    _run(job, [AnalysisSpec("breakdown", measure="Score", by="Team", agg="mean")])
    claim = claims(job)["claim_comparison_avg_score_by_team_top"]
    assert (claim["value"], claim["test"]["params"]["a"], claim["test"]["params"]["b"]) == ("higher", "A", "B")


def test_no_free_text_claim_phrase_in_the_wording_of_these_analyses() -> None:
    for kind in ("overview", "kpi", "breakdown", "distribution"):
        for language, templates in TEXTS[kind].items():
            for key, template in templates.items():
                if "{claim}" in template:
                    continue  # the sentence cites a claim: its words come from the claim
                found = [m.group(0) for m in find_claim_phrases(template)]
                assert not found, f"{kind}/{language}/{key}: {found}"


def test_a_chart_title_says_all_groups_or_the_top_of_how_many_and_its_axis_carries_the_unit(
    sales: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    region = AnalysisSpec("breakdown", measure="Revenue", by="Region", agg="sum")
    store = AnalysisSpec("breakdown", measure="Revenue", by="Store", agg="sum")
    _run(sales, [region, store])
    for name, caption in (
        ("breakdown_revenue_by_region", "Revenue by Region, all groups, largest first."),
        ("breakdown_revenue_by_store", "Revenue by Store, top 10 groups by value."),
    ):
        sidecar = json.loads((sales / "charts" / f"{name}.json").read_text(encoding="utf-8"))
        assert sidecar["caption"] == caption and "leading" not in sidecar["title"] + sidecar["alt"]
    # What the figure draws: rebuild it the way the breakdown does and read its texts back.
    from insightloom.analysis_utils.standard import breakdown

    drawn: dict[str, str] = {}
    original = breakdown.save_chart

    def spy(fig: Figure, name: str, **kwargs: Any) -> str:
        ax = fig.get_axes()[0]
        drawn[name] = f"{ax.get_title()} | {ax.get_xlabel()}"
        return original(fig, name, **kwargs)

    monkeypatch.setattr(breakdown, "save_chart", spy)
    run_standard(region.item_text())
    run_standard(store.item_text())
    run_standard(AnalysisSpec("breakdown", by="Channel", agg="count").item_text())
    assert drawn["breakdown_revenue_by_region"] == "Revenue by Region, all 3 groups | Total Revenue (USD)"
    assert drawn["breakdown_revenue_by_store"] == "Revenue by Store, top 10 of 12 | Total Revenue (USD)"
    assert drawn["breakdown_rows_by_channel"] == "Rows by Channel, all 2 groups | Rows"


def test_counts_print_as_integers_in_text_and_on_axes() -> None:
    assert value_decimals(808585.0, None, True) == 0
    assert value_decimals(808585.0, "tons", True) == 0  # a whole sum of whole numbers, whatever its unit
    assert value_decimals(2.5, None, True) is None  # a median between two counts keeps its half
    assert value_decimals(12.5, "USD", False) == 2
    fig = Figure()
    ax = fig.subplots()
    ax.bar(["a", "b"], [1, 3])
    compact_axis(ax.yaxis, integer=True)
    fig.draw_without_rendering()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert labels and all(label.lstrip("-").isdigit() for label in labels)  # never "2.5" on a count axis


def test_min_max_and_quantiles_of_whole_numbers_print_without_decimals(sales: Path) -> None:
    _run(sales, [AnalysisSpec("kpi", measures=("Age",)), AnalysisSpec("distribution", measure="Age")])
    got = calcs(sales)
    assert got["age_min"]["decimals"] == 0 and got["age_max"]["decimals"] == 0
    assert got["age_median"]["decimals"] in (0, None) and got["age_mean"]["decimals"] is None


SENTINEL_COLUMNS = {**COLUMNS, "Age": {**COLUMNS["Age"], "sentinel_values": [{"value": 99999, "count": 12}]}}


@pytest.fixture
def coded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    frame = _sales()
    frame.loc[:11, "Age"] = 99999
    return make_job(tmp_path, monkeypatch, frame, SENTINEL_COLUMNS)


def test_a_sentinel_code_is_never_a_maximum_or_a_mean_and_the_report_says_it_is_left_out(coded: Path) -> None:
    _run(coded, [AnalysisSpec("kpi", measures=("Revenue", "Age")), AnalysisSpec("distribution", measure="Age")])
    got = calcs(coded)
    real = _sales()["Age"].iloc[12:]
    assert got["age_max"]["value"] == real.max() < 99999
    assert got["age_mean"]["value"] == pytest.approx(real.mean())
    assert got["age_q3"]["value"] == pytest.approx(real.quantile(0.75))
    assert got["age_outliers"]["value"] == 0  # the codes are no outliers either: they are no values
    claim = got["claim_sentinel_age"]
    assert (claim["value"], claim["evidence"]["code"], claim["evidence"]["count"]) == ("sentinel_code", 99999, 12)
    assert claim["sentence"] == "99,999 in Age is a code, not a value: it appears in 12 rows and is left out"
    findings = all_findings(coded)
    assert findings.count("{{claim:claim_sentinel_age}}.") == 2  # in the KPIs and in the distribution
    # The DuckDB check of every figure left the code out too (flush_checks passed); the SQL says how.
    assert "99999.0" in got["age_max"]["check"]


def test_the_distribution_states_whether_extreme_values_move_the_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = [10.0, 11, 12, 11, 10, 12, 11, 10, 11, 12, 400]
    job = make_job(tmp_path, monkeypatch, pd.DataFrame({"Score": values}),
                   {"Score": {"role": "measure", "aggregation": "mean"}})  # fmt: skip
    _run(job, [AnalysisSpec("distribution", measure="Score")])
    claim = claims(job)["claim_outlier_score"]
    assert claim["value"] == "extreme_values" and claim["evidence"]["outliers"] == 1
    assert any(f.endswith("{{claim:claim_outlier_score}}.") for f in all_findings(job))


def test_the_overview_names_each_column_left_out_with_its_reason_and_no_typed_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _sales(40)
    frame["Customer ID"] = [f"C{i}" for i in range(40)]
    frame["Discount %"] = [5.0] + [None] * 39
    frame["Notes"] = ["long text " * 5] * 40
    columns = {**COLUMNS, "Customer ID": {"role": "identifier"}, "Notes": {"role": "text"},
               "Discount %": {"role": "measure", "aggregation": "mean"}}  # fmt: skip
    job = make_job(tmp_path, monkeypatch, frame, columns)
    _run(job, [AnalysisSpec("overview"), *BREAKDOWNS[:2], AnalysisSpec("kpi", measures=("Revenue",))])
    overview = read_results(job / "all_results.txt")[0].findings
    assert "(personal data and identifier columns are left out)" in overview[0]
    (coverage,) = [f for f in overview if f.startswith("Columns not analysed")]
    assert coverage == (
        "Columns not analysed, and why: `Store` is a category beyond the plan's breakdowns; `Age` is a measure "
        "beyond the plan's headline measures; `Customer ID` is an identifier; `Notes` is free text; `Discount %` is "
        "{{calc:missing_share_in_discount}} missing."
    )
    assert calcs(job)["missing_share_in_discount"]["value"] == pytest.approx(97.5)
    assert not any(ch.isdigit() for ch in CALC_REF_RE.sub("", CLAIM_REF_RE.sub("", coverage)))


def test_the_overview_names_every_column_left_out_for_one_reason_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _sales(40)
    extra = [f"Score {i}" for i in range(15)]
    for i, name in enumerate(extra):
        frame[name] = np.arange(40.0) * (i + 1)
    columns = {**COLUMNS, **{name: {"role": "measure", "aggregation": "mean"} for name in extra}}
    job = make_job(tmp_path, monkeypatch, frame, columns)
    _run(job, [AnalysisSpec("overview"), *BREAKDOWNS[:2], AnalysisSpec("kpi", measures=("Revenue",))])
    (coverage,) = [f for f in read_results(job / "all_results.txt")[0].findings if f.startswith("Columns not")]
    listed = ", ".join(f"`{name}`" for name in ["Age", *extra])
    # all sixteen measures named (none counted away as "and N more"), their shared reason said once
    assert coverage == (
        "Columns not analysed, and why: `Store` is a category beyond the plan's breakdowns; "
        f"{listed} (measures beyond the plan's headline measures)."
    )
    assert "unanalysed_more" not in calcs(job)


def test_the_overview_claims_no_left_out_columns_when_none_were(sales: Path) -> None:
    specs = [AnalysisSpec("overview"), *BREAKDOWNS, AnalysisSpec("kpi", measures=("Revenue", "Age"))]
    _run(sales, specs)
    overview = read_results(sales / "all_results.txt")[0].findings
    assert "left out" not in " ".join(overview)
    assert overview[0].endswith("all {{calc:analysed_columns}} can be analysed.")
    assert not any(f.startswith("Columns not analysed") for f in overview)  # every column is read by the plan


def test_numbered_groups_are_never_correlated_or_described_as_a_quantity() -> None:
    def col(name: str, **kw: Any) -> dict[str, Any]:
        return {"name": name, "dtype": "int64", "role": "measure", "missing": 0, "aggregation": "mean", **kw}

    table = {
        "view": "t", "file": "possum.csv", "parquet": "cache/t.parquet", "rows": 100,
        "columns": [col("site", distinct=7, min=1, max=7), col("age", distinct=9, min=1, max=9, dtype="float64"),
                    col("belly", distinct=60, min=25, max=40), col("chest", distinct=50, min=22, max=32)],
        "headline_measures": [{"column": c, "reason": ""} for c in ("site", "age", "belly", "chest")],
        "time_axis": None,
    }  # fmt: skip
    specs = plan_analyses({"tables": [table], "aliases": {"data": "t"}})
    (corr,) = [s for s in specs if s.kind == "correlation"]
    assert "site" not in corr.measures
    assert all(s.measure != "site" for s in specs if s.kind == "distribution")


def test_a_footnote_column_is_never_correlated() -> None:
    def col(name: str, **kw: Any) -> dict[str, Any]:
        return {"name": name, "dtype": "int64", "role": "measure", "missing": 0, "aggregation": "mean",
                "distinct": 40, "min": 2, "max": 90, **kw}  # fmt: skip

    table = {
        "view": "t", "file": "un.csv", "parquet": "cache/t.parquet", "rows": 100,
        "columns": [col("Value"), col("Value Footnotes", distinct=4, min=2, max=9), col("Population")],
        "headline_measures": [{"column": c, "reason": ""} for c in ("Value", "Value Footnotes", "Population")],
        "time_axis": None,
    }  # fmt: skip
    (corr,) = [s for s in plan_analyses({"tables": [table], "aliases": {"data": "t"}}) if s.kind == "correlation"]
    assert corr.measures == ("Value", "Population")
