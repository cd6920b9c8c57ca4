"""The claim tests: each verdict where the contract says, edge cases without NaN, and NumPy agreeing with SciPy."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from insightloom.claims import run_test
from insightloom.claims.stats import find_sentinels, kendall_vs_order, t_quantile, t_sf
from insightloom.claims.table import KINDS
from insightloom.claims.wording import claim_text
from insightloom.validation.claim_checks import compare, recompute

RNG = np.random.default_rng(20)


def _column(values: list[float]) -> list[tuple[float]]:
    return [(v,) for v in values]


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        ([10, 12, 13, 15, 16, 18, 21, 22], "rising"),
        ([30, 28, 25, 24, 20, 18, 15, 11], "falling"),
        ([14000, 9000, 12000, 3000, 8000, 2400, 13000], "volatile"),
        ([100, 104, 99, 103, 101, 98, 102], "no_clear_trend"),
        ([6378, 15623], "no_clear_trend"),  # two points are a change, never a trend
        ([1, 2, 3], "no_clear_trend"),  # fewer than 4 periods
    ],
)
def test_trend_verdicts(values: list[float], verdict: str) -> None:
    assert run_test("trend", _column(values), {}).verdict == verdict


def test_trend_evidence_volatility_figures() -> None:
    values = [100, 200, 100, 200, 150]
    result = run_test("trend", _column(values), {})
    assert result.evidence["n"] == 5
    assert result.evidence["largest_swing"] == pytest.approx(100 / 150 * 100)
    assert result.evidence["cv"] == pytest.approx(np.std(values, ddof=1) / 150 * 100)
    assert result.verdict == "volatile"
    assert run_test("trend", _column([1, 2, 3, 4]), {}).verdict == "no_clear_trend"  # 4 periods: exact p is 0.083


def test_a_weak_drift_amid_large_swings_is_volatile_and_the_validator_agrees() -> None:
    """A cycle over many periods (sunspot-like): Kendall's p is small, tau weak, the swings are what a reader sees."""
    steps = np.arange(300)
    values = 50 + 0.07 * steps + 45 * np.sin(2 * np.pi * steps / 11)
    result = run_test("trend", _column(list(values)), {})
    assert result.evidence["p_value"] < 0.05 and abs(result.evidence["tau"]) < 0.2
    assert result.verdict == "volatile"
    assert recompute("trend", _column(list(values)), {}).verdict == "volatile"  # SciPy reads it the same
    steady = 50 + 0.07 * steps + 2 * np.sin(2 * np.pi * steps / 11)  # the same drift with small swings
    assert run_test("trend", _column(list(steady)), {}).verdict == "rising"


def test_kendall_matches_scipy_with_ties() -> None:
    from scipy import stats as sps

    values = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], dtype=float)
    tau, p_value = kendall_vs_order(values)
    expected = sps.kendalltau(np.arange(len(values)), values, method="asymptotic")
    assert tau == pytest.approx(expected.statistic) and p_value == pytest.approx(expected.pvalue)


def _driver_rows() -> list[tuple[str, str, float]]:
    rows = []
    for i in range(200):
        channel = "Web" if i % 2 else "Store"
        region = "NSEW"[int(RNG.integers(0, 4))]
        value = (50.0 if channel == "Web" else 0.0) + RNG.normal(0, 10)
        rows += [("Channel", channel, value), ("Region", region, value)]
    return rows


def test_driver_names_the_largest_material_epsilon_squared_main() -> None:
    rows = _driver_rows()
    channel = run_test("driver", rows, {"by": "Channel"})
    region = run_test("driver", rows, {"by": "Region"})
    assert channel.verdict == "main" and channel.evidence["rank"] == 1 and channel.evidence["best"] == "Channel"
    assert region.verdict == "weak" and region.evidence["rank"] == 2
    assert channel.evidence["epsilon_sq"] > 0.8 and region.evidence["best_epsilon_sq"] == channel.evidence["epsilon_sq"]
    assert channel.evidence["eta_sq"] >= channel.evidence["epsilon_sq"]
    assert channel.evidence["groups"] == 2 and region.evidence["groups"] == 4 and channel.evidence["n"] == 200


def test_driver_material_but_not_the_largest() -> None:
    rows = [("A", "x" if i < 50 else "y", (10 if i < 50 else 0) + i % 7) for i in range(100)]
    rows += [("B", "p" if i % 2 else "q", (10 if i < 50 else 0) + i % 7 + (3 if i % 2 else 0)) for i in range(100)]
    assert run_test("driver", rows, {"by": "A"}).verdict == "main"
    b = run_test("driver", rows, {"by": "B"})
    assert b.verdict == "material" and 0.06 <= float(b.evidence["epsilon_sq"]) < float(b.evidence["best_epsilon_sq"])


def test_many_groups_of_noise_are_no_driver_though_their_raw_eta_squared_looks_material() -> None:
    """40 random groups over 200 noise values "explain" about 20% by eta squared; epsilon squared takes out what as
    many groups of noise explain, so the verdict is weak, and the ranking reads the adjusted figure too."""
    noise = np.random.default_rng(11).normal(100, 10, 200)
    rows = [("Store", f"s{i % 40}", float(v)) for i, v in enumerate(noise)]
    rows += [("Half", "a" if i < 100 else "b", float(v) + (6 if i < 100 else 0)) for i, v in enumerate(noise)]
    store = run_test("driver", rows, {"by": "Store"})
    assert float(store.evidence["eta_sq"]) > 0.12 and float(store.evidence["epsilon_sq"]) < 0.06
    assert store.verdict == "weak" and store.evidence["best"] == "Half" and store.evidence["rank"] == 2
    half = run_test("driver", rows, {"by": "Half"})
    assert half.verdict == "main" and float(half.evidence["epsilon_sq"]) > 0.06


def test_a_single_candidate_breakdown_is_material_never_main_and_says_it_was_the_only_one() -> None:
    rows = [("Channel", "Web" if i % 2 else "Store", (50.0 if i % 2 else 0.0) + i % 5) for i in range(60)]
    verdict = run_test("driver", rows, {"by": "Channel"})
    assert verdict.verdict == "material" and verdict.evidence["breakdowns"] == 1
    params = {"measure": "Revenue", "by": "Channel"}
    record = {"claim_kind": "driver", "value": "material", "evidence": verdict.evidence, "test": {"params": params}}
    assert "(epsilon squared; the only breakdown compared)" in claim_text(record)
    assert "비교한 유일한 구분" in claim_text(record, "ko")


def test_one_value_per_group_explains_nothing_beyond_chance() -> None:
    rows = [("Name", f"n{i}", float(i * i)) for i in range(12)]
    verdict = run_test("driver", rows, {"by": "Name"})
    assert verdict.evidence["eta_sq"] == 1.0 and verdict.evidence["epsilon_sq"] == 0.0 and verdict.verdict == "weak"


@pytest.mark.parametrize(
    ("totals", "verdict"),
    [
        ([60, 30, 10], "dominates"),
        ([50, 50], "spread_evenly"),
        ([22, 20, 19, 20, 19], "spread_evenly"),
        ([49, 49, 2], "concentrated"),
        ([30, 25, 20, 15, 10], "moderate"),
        ([100], "dominates"),  # a single group holds everything
        # Two groups are judged against their fair share of 50%, like twenty groups against 5%.
        ([50.5, 49.5], "spread_evenly"),
        ([65, 35], "moderate"),
        ([72, 28], "concentrated"),
        ([80, 20], "dominates"),
        ([], "moderate"),
    ],
)
def test_concentration_verdicts(totals: list[float], verdict: str) -> None:
    rows = [(f"g{i}", v) for i, v in enumerate(totals)]
    assert run_test("concentration", rows, {}).verdict == verdict


def test_concentration_evidence() -> None:
    result = run_test("concentration", [("a", 60), ("b", 30), ("c", 10), ("a", 0)], {})
    assert result.evidence == {"top": "a", "top_share": 60.0, "bottom_share": 10.0, "hhi": 4600.0, "groups": 3,
                               "tied": 1}  # fmt: skip


def test_a_tie_for_the_top_share_is_counted_and_said_in_both_languages() -> None:
    rows = [("a", 30.0), ("b", 30.0), ("c", 5.0), ("d", 5.0), ("e", 30.0)]
    ours = run_test("concentration", rows, {})
    assert ours.evidence["tied"] == 3 and ours.evidence["top"] == "a"
    assert compare({"value": ours.verdict, "evidence": ours.evidence}, recompute("concentration", rows, {})).verified
    record = {"id": "c", "claim_kind": "concentration", "value": ours.verdict, "evidence": ours.evidence,
              "test": {"params": {"measure": "Revenue", "by": "Region"}}}  # fmt: skip
    assert "the largest (a, tied with 2 other groups) holds 30.0%" in claim_text(record, "en")
    assert "최대 그룹(a 외 2개 그룹과 동률)" in claim_text(record, "ko")


def test_correlation_strength_and_sign() -> None:
    x = np.arange(100, dtype=float)
    noise = RNG.normal(0, 1, 100)
    assert run_test("correlation", list(zip(x, x + noise * 5, strict=True)), {}).verdict == "strong_positive"
    assert run_test("correlation", list(zip(x, -x + noise * 40, strict=True)), {}).verdict == "moderate_negative"
    assert run_test("correlation", list(zip(x, noise, strict=True)), {}).verdict == "negligible"


def test_correlation_driven_by_three_extreme_points() -> None:
    x = RNG.normal(0, 1, 60)
    y = RNG.normal(0, 1, 60)
    x[:3] += 12
    y[:3] += 12
    result = run_test("correlation", list(zip(x, y, strict=True)), {})
    assert result.verdict == "driven_by_extremes"
    assert float(result.evidence["r"]) > 0.7 and abs(float(result.evidence["r_without"])) < 0.4
    assert int(result.evidence["removed"]) >= 3


@pytest.mark.parametrize(
    "rows",
    [[], [(1, 2)], [(1, 2), (2, 4)], [(1, 5), (2, 5), (3, 5), (4, 5)], [(float("nan"), 1), (float("inf"), 2)]],
)
def test_correlation_degenerate_inputs_are_negligible(rows: list[tuple[float, float]]) -> None:
    result = run_test("correlation", rows, {})
    assert result.verdict == "negligible" and result.evidence["removed"] == 0


def test_outlier_verdicts() -> None:
    moved = run_test("outlier", _column([10, 11, 12, 13, 12, 11, 10, 500]), {})
    assert moved.verdict == "extreme_values" and moved.evidence["outliers"] == 1
    assert moved.evidence["mean_without"] == pytest.approx(11.2857, abs=1e-3)
    calm = run_test("outlier", _column(list(range(1, 101)) + [160]), {})
    assert calm.verdict == "no_extreme_values"  # one value beyond the fence moves the mean by under 10%
    assert calm.evidence["outliers"] == 1 and float(calm.evidence["shift"]) < 10


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([23, 35, 41, 52, 38, 99999, 99999, 29, 61], [(99999.0, 2)]),
        ([3, 4, 5, 2, 1, -1, -1, -1, 4], [(-1.0, 3)]),
        ([23, 35, 41, 99999, 29], [(99999.0, 1)]),  # once is enough this far above every other value
        ([3, 4, 5, 2, 1, -1, 4], []),  # a single negative value may be real
        ([-5, 3, 4, -1, -1, 2, 8], []),  # negatives are real values here
        ([-1, 1, 1, -1, 1, -1], []),  # a sign column: -1 is data
        ([9000, 9500, 9998, 9999, 9999, 9700], []),  # 9999 lies among the values
        ([120, 99, 199, 999, 1999, 99], []),  # retail prices, not codes
    ],
)
def test_sentinel_rule(values: list[float], expected: list[tuple[float, int]]) -> None:
    assert find_sentinels(values) == expected
    verdict = run_test("sentinel", _column(values), {})
    assert verdict.verdict == ("sentinel_code" if expected else "no_sentinel")


def test_comparison_verdicts() -> None:
    a = [("A", v) for v in [10, 11, 12, 13, 14]]
    b = [("B", v) for v in [1, 2, 3, 4, 5]]
    higher = run_test("comparison", a + b, {"a": "A", "b": "B"})
    assert higher.verdict == "higher" and higher.evidence["diff"] == 9.0 and float(higher.evidence["ci_low"]) > 0
    assert run_test("comparison", a + b, {"a": "B", "b": "A"}).verdict == "lower"
    close = [("A", v) for v in [10, 14, 9, 13]] + [("B", v) for v in [11, 12, 10, 14]]
    noise = run_test("comparison", close, {"a": "A", "b": "B"})
    assert noise.verdict == "within_noise" and float(noise.evidence["ci_low"]) < 0 < float(noise.evidence["ci_high"])


def test_comparison_with_too_few_values_is_within_noise() -> None:
    assert run_test("comparison", [("A", 5), ("B", 1)], {"a": "A", "b": "B"}).verdict == "within_noise"


@pytest.mark.parametrize("rows", [[], [("A", 5), ("A", 6)], [("A", 1), ("B", float("nan"))]])
def test_a_comparison_with_a_group_without_values_names_the_fix(rows: list[tuple]) -> None:
    # a difference against a group with no values would be made up: "A and B differ by -5.00"
    for test in (run_test, recompute):
        with pytest.raises(ValueError, match="two different groups with values"):
            test("comparison", rows, {"a": "A", "b": "B"})


def test_comparison_of_more_than_two_groups_names_the_fix() -> None:
    with pytest.raises(ValueError, match="exactly two groups"):
        run_test("comparison", [("A", 1), ("B", 2), ("C", 3)], {})


def test_t_distribution_matches_scipy() -> None:
    from scipy import stats as sps

    for df in (1.0, 2.5, 7.0, 30.0, 300.0):
        for t in (0.1, 1.0, 2.2, 5.0):
            assert t_sf(t, df) == pytest.approx(sps.t.sf(t, df), rel=1e-9, abs=1e-12)
        assert t_quantile(0.975, df) == pytest.approx(sps.t.ppf(0.975, df), rel=1e-8)


def test_a_driver_for_a_breakdown_not_in_the_rows_names_the_fix() -> None:
    with pytest.raises(ValueError, match="pass by= one of them"):
        run_test("driver", [("Region", "N", 1.0), ("Channel", "Web", 2.0)], {"by": "Segment"})


def test_wrong_width_and_unknown_kind_name_the_fix() -> None:
    with pytest.raises(ValueError, match="make the claim's SQL return exactly: x, y"):
        run_test("correlation", [(1,)], {})
    with pytest.raises(ValueError, match="unknown claim kind"):
        run_test("seasonality", [], {})


_EDGE_INPUTS = {
    "trend": [[], [(1,)], [(5,)] * 6, [(float("nan"),), (float("inf"),), (2,), (3,)], [(0,), (0,), (1,), (-1,)]],
    "driver": [[], [("A", "x", 1)], [("A", "x", 1), ("A", "y", 1)], [("A", None, 1), ("A", "x", float("nan"))]],
    "concentration": [[("a", -5), ("b", 0)], [(None, 3)], [("a", float("inf"))]],
    "correlation": [[(1, 1), (1, 2), (1, 3)], [(0, 0), (0, 0), (0, 0), (10, 5)]],
    "outlier": [[], [(3,)], [(2,)] * 5, [(0,), (0,), (0,), (1,)]],
    "sentinel": [[], [(-1,)] * 4, [(float("nan"),)]],
    "comparison": [
        [("A", 1), ("B", 1)],
        [("A", 1), ("A", 1), ("B", 1), ("B", 1)],
        [("A", 1), ("A", 1), ("B", 2), ("B", 2)],
    ],
}


@pytest.mark.parametrize(("kind", "rows"), [(k, r) for k, cases in _EDGE_INPUTS.items() for r in cases])
def test_edge_cases_give_a_verdict_and_finite_evidence(kind: str, rows: list[tuple]) -> None:
    params = {"by": "A", "a": "A", "b": "B"}
    ours = run_test(kind, rows, params)
    assert ours.verdict in KINDS[kind].verdicts
    assert set(KINDS[kind].evidence) <= set(ours.evidence)
    json.dumps(ours.evidence, allow_nan=False)  # never NaN or inf in the JSON
    assert all(not isinstance(v, float) or math.isfinite(v) for v in ours.evidence.values())
    theirs = recompute(kind, rows, params)
    assert compare({"value": ours.verdict, "evidence": ours.evidence}, theirs).verified, theirs


def _random_inputs(kind: str, seed: int) -> tuple[list[tuple], dict]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    if kind == "trend":
        base = np.cumsum(rng.normal(rng.normal(0, 2), 5, n)) + 100
        return [(round(v, 2),) for v in base], {}
    if kind == "driver":
        rows = []
        for name, k in (("A", 3), ("B", 5), ("C", 2)):
            groups = rng.integers(0, k, n)
            values = groups * rng.normal(0, 3) + rng.normal(0, 5, n)
            rows += [(name, f"g{g}", float(v)) for g, v in zip(groups, values, strict=True)]
        return rows, {"by": "ABC"[seed % 3]}
    if kind == "concentration":
        return [(f"g{i}", float(v)) for i, v in enumerate(rng.gamma(1 + seed % 3, 10, int(rng.integers(2, 9))))], {}
    if kind == "correlation":
        x = rng.lognormal(0, 1, n)
        y = x * rng.normal(0, 2) + rng.normal(0, 3, n)
        return list(zip(x.tolist(), y.tolist(), strict=True)), {}
    if kind in ("outlier", "sentinel"):
        values = rng.gamma(2, 10, n).round(1).tolist() + ([99999.0] * (seed % 3) if kind == "sentinel" else [])
        return [(v,) for v in values], {}
    groups = rng.integers(0, 2, n)
    values = groups * rng.normal(0, 2) + rng.normal(0, 3, n)
    return [("AB"[g], float(v)) for g, v in zip(groups, values, strict=True)], {"a": "A", "b": "B"}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_numpy_and_scipy_agree_on_random_data(kind: str) -> None:
    for seed in range(25):
        rows, params = _random_inputs(kind, seed)
        ours = run_test(kind, rows, params)
        theirs = recompute(kind, rows, params)
        outcome = compare({"value": ours.verdict, "evidence": ours.evidence}, theirs)
        assert outcome.verified, (kind, seed, outcome.reason)


def test_a_dataframe_works_like_tuples() -> None:
    frame = pd.DataFrame({"grp": ["a", "b", "a"], "v": [1.0, 2.0, 3.0]})
    assert run_test("concentration", frame, {}) == run_test("concentration", [("a", 1), ("b", 2), ("a", 3)], {})


def test_a_correlation_on_skewed_data_is_re_measured_without_at_most_one_percent_of_its_points() -> None:
    """On heavy-tailed data many points lie beyond 3 IQR; "a few extreme values" must still be a few (1%, min 3)."""
    rng = np.random.default_rng(11)
    x = rng.lognormal(0.0, 1.5, 1000)
    y = 2.0 * x + rng.lognormal(0.0, 1.5, 1000)
    rows = list(zip(x.tolist(), y.tolist(), strict=True))
    ours, theirs = run_test("correlation", rows, {}), recompute("correlation", rows, {})
    assert 3 <= int(ours.evidence["removed"]) <= 10
    assert ours.evidence["removed"] == theirs.evidence["removed"]
    assert ours.verdict == theirs.verdict
    assert abs(float(ours.evidence["r_without"]) - float(theirs.evidence["r_without"])) < 0.01


def test_an_outlier_shift_of_a_mean_near_zero_is_measured_against_the_spread() -> None:
    """Daily returns around 0: one value beyond the fences moves the mean from 0.0004 to 0.0034, which is 750% of
    that mean but a tenth of the spread; against the spread, the verdict stays no_extreme_values."""
    rng = np.random.default_rng(5)
    returns = rng.normal(0, 0.02, 400)
    returns -= returns.mean() - 0.0004
    rows = [(float(v),) for v in [*returns, 0.25]]
    local = run_test("outlier", rows, {"measure": "return"})
    spread = float(local.evidence["sd_without"])
    assert 0.015 < spread < 0.025 and abs(float(local.evidence["mean_without"])) < 0.002
    assert float(local.evidence["shift"]) < 10 and local.verdict == "no_extreme_values"
    checked = recompute("outlier", rows, {"measure": "return"})
    assert compare({"value": local.verdict, "evidence": local.evidence}, checked).verified
    salaries = [(float(v),) for v in [*rng.normal(50_000, 5_000, 200), 2_000_000, 3_000_000]]
    assert run_test("outlier", salaries, {"measure": "salary"}).verdict == "extreme_values"  # the mean still counts


def test_driver_verdicts_agree_at_the_threshold_and_on_a_constant_measure() -> None:
    constant = [(by, g, 0.1) for by in ("A", "B") for g in ("x", "y", "z") for _ in range(4)]
    for rows in (constant,):
        ours, theirs = run_test("driver", rows, {"by": "A"}), recompute("driver", rows, {"by": "A"})
        assert ours.verdict == theirs.verdict == "weak" and ours.evidence["eta_sq"] == 0.0
    from insightloom.claims.verdicts import driver_verdict

    assert driver_verdict(0.05999999999999996, 1, 2) == driver_verdict(0.06000000000000001, 1, 2) == "main"


def test_both_implementations_rank_extreme_points_alike_when_x_is_in_the_trillions() -> None:
    """gapminder's gdp in dollars (up to 1e13): a raw [1, x] hat matrix lost the leverage, so the two
    implementations removed different points and the Validator refused a true claim."""
    from insightloom.claims.stats import cooks_distance
    from insightloom.validation.claim_checks import _cooks

    x = np.exp(RNG.normal(27.6, 1.5, 2000))  # about 1e12, a long right tail
    y = 60 - 4 * np.log(x) + RNG.normal(0, 8, 2000)
    assert _cooks(x, y) == pytest.approx(cooks_distance(x, y), rel=1e-6)
    rows = [(float(a), float(b)) for a, b in zip(x, y, strict=True)]
    product = run_test("correlation", rows, {})
    assert product.evidence["removed"] > 0
    record = {"value": product.verdict, "evidence": product.evidence}
    assert compare(record, recompute("correlation", rows, {})).verified


def test_average_ranks_match_scipy_with_ties_and_edges() -> None:
    from scipy.stats import rankdata

    from insightloom.claims.stats import average_ranks

    for values in (RNG.integers(0, 5, 500).astype(float), RNG.normal(size=500), np.array([1.0]), np.array([2.0] * 3)):
        assert np.allclose(average_ranks(values), rankdata(values))
    assert len(average_ranks(np.array([]))) == 0
