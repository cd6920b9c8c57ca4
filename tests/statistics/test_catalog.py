"""The statistics catalog: every SQL check agrees with the pandas/SciPy computation, filters included, and the
one rounding rule rounds half away from zero."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from insightloom.statistics import operations as ops
from insightloom.statistics.request import Filter, StatRequest, Step, item_text, parse_item
from insightloom.statistics.rounding import format_rounded

STEPS = [
    Step("mean", ("x",)), Step("std", ("x",)), Step("var", ("x",), params=(("ddof", 0),)), Step("median", ("x",)),
    Step("quantile", ("x",), params=(("q", 0.9),)), Step("min", ("x",)), Step("max", ("x",)), Step("sum", ("x",)),
    Step("skew", ("x",)), Step("kurtosis", ("x",)), Step("zscore_outliers", ("x",), params=(("threshold", 2.0),)),
    Step("iqr_outliers", ("x",)), Step("count", ()), Step("distinct", ("g",)), Step("missing", ("x",)),
    Step("share", (), params=(("where", (("g", "=", "a"),)),)), Step("pearson", ("x", "y")),
    Step("regression", ("x", "y")), Step("group_max", ("x",), "g"), Step("group_min", ("x",), "g",
                                                                       params=(("agg", "count"),)),
]  # fmt: skip


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    data = pd.DataFrame({"x": rng.normal(5, 2, 400), "y": rng.normal(0, 1, 400), "g": rng.choice(["a", "b", "c"], 400)})
    data.loc[[3, 9], "x"] = np.nan
    return data


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.op)
def test_every_sql_check_agrees_with_the_computation(frame: pd.DataFrame, step: Step) -> None:
    filters = (Filter("y", ">", -1.5),)
    kept = frame.loc[ops.filter_mask(frame, filters)]
    assert 0 < len(kept) < len(frame)
    result = ops.evaluate(step, kept)
    checks = ops.check_sql(step, "t", filters)
    assert checks, f"{step.op} has no SQL check"
    con = duckdb.connect()
    con.register("t", frame)
    for part, sql in checks.items():
        got = con.execute(sql).fetchone()[0]
        if isinstance(result[part], str):
            assert got == result[part]
        else:
            assert got == pytest.approx(result[part], rel=1e-9, abs=1e-12), part


def test_tests_follow_scipy_and_the_validator_route_reads_duckdb(frame: pd.DataFrame) -> None:
    x = frame["x"].dropna().to_numpy()
    normality = ops.evaluate(Step("normality", ("x",)), frame)
    assert normality["p_value"] == pytest.approx(stats.shapiro(x).pvalue)
    assert normality["verdict"] == ("normal" if stats.shapiro(x).pvalue >= 0.05 else "not_normal")
    a, b = (frame.loc[frame["g"] == level, "x"].dropna() for level in ("a", "b"))
    welch = ops.evaluate(Step("ttest", ("x",), "g", params=(("equal_var", False), ("levels", ("a", "b")))), frame)
    assert welch["p_value"] == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue)
    con = duckdb.connect()
    con.register("t", frame)
    step = Step("spearman", ("x", "y"))
    assert ops.recompute(step, (), "t", con) == ops.evaluate(step, frame)


def test_a_big_sample_is_tested_with_dagostino() -> None:
    values = pd.DataFrame({"x": np.random.default_rng(1).normal(size=6000)})
    result = ops.evaluate(Step("normality", ("x",)), values)
    assert result["test"] == "D'Agostino-Pearson"
    assert result["p_value"] == pytest.approx(stats.normaltest(values["x"]).pvalue)


@pytest.mark.parametrize(
    ("value", "decimals", "shown"),
    [
        (2.675, 2, "2.68"),
        (-2.345, 2, "-2.35"),
        (0.5, 0, "1"),
        (1.5, 0, "2"),
        (-0.0001, 2, "0.00"),
        (22607406.185, 2, "22,607,406.19"),
        (0.73655, 4, "0.7366"),
    ],  # fmt: skip
)
def test_rounding_is_half_away_from_zero(value: float, decimals: int, shown: str) -> None:
    assert format_rounded(value, decimals) == shown


def test_a_request_round_trips_through_its_plan_item() -> None:
    request = StatRequest((Step("mean", ("Volume",)), Step("std", ("Volume",), params=(("ddof", 1),))),
                          (Filter("Region", "=", "West"),), decimals=2)  # fmt: skip
    assert parse_item("- [ ] " + item_text(request)) == request
    assert parse_item("Compute headline KPIs for `Volume`: totals or averages") is None
