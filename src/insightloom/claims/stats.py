"""The product's own implementation of each claim test, in NumPy (the Validator re-computes them with SciPy).

``run_test(name, rows, params)`` takes the test's inputs (what the claim's ``test.sql`` returns: see
``ClaimKind.inputs`` and ``ClaimKind.summary`` in ``table.py``, read by :mod:`insightloom.claims.inputs`) and returns
a :class:`Verdict`: the verdict word and its evidence figures. Every test works on whole columns, so a claim over
millions of rows costs NumPy time, not Python time.
Every figure is finite (a constant series, fewer than three points or a single group give a sensible verdict,
never NaN), because the evidence is written to JSON and printed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from insightloom.claims import verdicts
from insightloom.claims.inputs import (
    Inputs,
    breakdown_moments,
    finite_values,
    group_moments,
    input_frame,
    label,
    labels,
    numbers,
)
from insightloom.claims.table import kind_of, threshold

Evidence = dict[str, float | int | str]
#: A residual variance this small relative to y's variance is a perfect line, whatever the rounding of each route.
PERFECT_FIT = 1e-12
#: A spread below this share of the values' magnitude is rounding, not variation: a constant column.
CONSTANT_SPREAD = 1e-12


@dataclass(frozen=True)
class Verdict:
    """A test's outcome.

    Attributes:
        verdict: One of the kind's verdict words (``rising``, ``main``, ...).
        evidence: The figures behind it (every key of the kind's ``evidence``), JSON-safe and finite.
    """

    verdict: str
    evidence: Evidence = field(default_factory=dict)


def _finite(value: float) -> float:
    number = float(value)
    return number if math.isfinite(number) else 0.0


def _values(inputs: Inputs) -> np.ndarray:
    return finite_values(inputs, "v")


# --- trend ---------------------------------------------------------------------------------------------------------


def kendall_vs_order(values: np.ndarray) -> tuple[float, float]:
    """Kendall tau-b of ``values`` against their order 0..n-1, and its two-sided asymptotic p (ties in the values).

    Order has no ties, so S's variance is (n(n-1)(2n+5) - sum t(t-1)(2t+5)) / 18 over the value ties t.
    """
    n = len(values)
    pairs = n * (n - 1) // 2
    if n < 3:
        return 0.0, 1.0
    s = float(sum(np.sign(values[i + 1 :] - values[i]).sum() for i in range(n - 1)))
    _, ties = np.unique(values, return_counts=True)
    ties = ties[ties > 1].astype(float)
    value_ties = float((ties * (ties - 1) / 2).sum())
    if value_ties == pairs:
        return 0.0, 1.0  # a constant series has no order at all
    tau = s / math.sqrt(pairs) / math.sqrt(pairs - value_ties)
    variance = (n * (n - 1) * (2 * n + 5) - float((ties * (ties - 1) * (2 * ties + 5)).sum())) / 18
    z = s / math.sqrt(variance)
    return max(-1.0, min(1.0, tau)), math.erfc(abs(z) / math.sqrt(2))


def theil_sen(values: np.ndarray) -> float:
    """The median of the slopes between every pair of periods (robust to one odd period)."""
    n = len(values)
    if n < 2:
        return 0.0
    slopes = np.concatenate([(values[i + 1 :] - values[i]) / np.arange(1, n - i) for i in range(n - 1)])
    return float(np.median(slopes))


def trend(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    """Direction and volatility of one value per period, in period order."""
    values = _values(inputs)
    n = len(values)
    tau, p_value = kendall_vs_order(values)
    slope = theil_sen(values)
    mean = float(values.mean()) if n else 0.0
    cv = float(values.std(ddof=1)) / abs(mean) * 100 if n >= 2 and mean != 0 else 0.0
    swing = float(np.abs(np.diff(values)).max()) / abs(mean) * 100 if n >= 2 and mean != 0 else 0.0
    evidence: Evidence = {
        "n": n,
        "tau": _finite(tau),
        "p_value": _finite(p_value),
        "slope": _finite(slope),
        "cv": _finite(cv),
        "largest_swing": _finite(swing),
    }
    verdict = verdicts.trend_verdict(n, p_value, slope, tau, float(evidence["cv"]), float(evidence["largest_swing"]))
    return Verdict(verdict, evidence)


# --- driver --------------------------------------------------------------------------------------------------------


def eta_squared(moments: pd.DataFrame) -> float:
    """Between-group sum of squares over the total sum of squares, from each group's n, mean and m2 (0 when the
    values do not vary)."""
    n, means = moments["n"].to_numpy(), moments["mean"].to_numpy()
    count = float(n.sum())
    if not count:
        return 0.0
    grand = float((n * means).sum()) / count
    between = float((n * (means - grand) ** 2).sum())
    total = between + float(moments["m2"].sum())
    if total <= count * (CONSTANT_SPREAD * float(np.abs(means).max())) ** 2:
        return 0.0  # a constant 0.1 leaves a rounding residue of 1e-34 that would explain "everything"
    return max(0.0, min(1.0, between / total))


def rank_of(scores: Mapping[str, float], name: str) -> int:
    """1 for the largest score (ties broken by name, so both implementations rank alike)."""
    order = sorted(scores, key=lambda key: (-round(scores[key], 12), key))
    return order.index(name) + 1


def epsilon_squared(eta_sq: float, n: int, groups: int) -> float:
    """eta squared less what ``groups`` groups of pure noise would explain of ``n`` values:
    eta² - (k-1)(1-eta²)/(n-k), at least 0, and 0 when no value is left to vary within a group (n <= k)."""
    if groups < 2 or n <= groups:
        return 0.0
    return max(0.0, min(1.0, eta_sq - (groups - 1) * (1.0 - eta_sq) / (n - groups)))


def driver(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    """How much of the measure's variation ``params['by']`` explains beyond chance (epsilon squared), ranked among
    all the candidate breakdowns."""
    names, found = breakdown_moments(inputs)
    by = str(params.get("by", ""))
    if names and by not in names:
        raise ValueError(
            f"the driver test's params['by'] is {by!r}, but the rows' breakdown column holds {', '.join(names[:10])}; "
            "pass by= one of them (the SQL's first column names each candidate breakdown)"
        )
    etas = {name: eta_squared(moments) for name, moments in found.items()}
    scores = {
        name: epsilon_squared(etas[name], int(round(float(moments["n"].sum()))), len(moments))
        for name, moments in found.items()
    }
    scores.setdefault(by, 0.0)
    moments = found.get(by)
    rank = rank_of(scores, by)
    best = min(scores, key=lambda key: (-round(scores[key], 12), key))
    evidence: Evidence = {
        "eta_sq": _finite(etas.get(by, 0.0)),
        "epsilon_sq": _finite(scores[by]),
        "rank": rank,
        "best": best,
        "best_epsilon_sq": _finite(scores[best]),
        "n": int(round(float(moments["n"].sum()))) if moments is not None else 0,
        "groups": len(moments) if moments is not None else 0,
        "breakdowns": len(scores),
    }
    return Verdict(verdicts.driver_verdict(scores[by], rank, len(scores)), evidence)


# --- concentration -------------------------------------------------------------------------------------------------


def group_totals(inputs: Inputs) -> dict[str, float]:
    """Group -> total of its values (repeated keys are added), NULL keys and missing values left out."""
    keys, values = labels(inputs.column("grp")), numbers(inputs.column("v"))
    keep = keys.notna().to_numpy() & np.isfinite(values)
    totals = pd.Series(values[keep]).groupby(keys.to_numpy()[keep], sort=True).sum()
    return {str(key): float(total) for key, total in totals.items()}


def top_ties(shares: Any) -> int:
    """How many groups hold the largest share (1 when one group leads alone)."""
    values = np.asarray(shares, dtype=float)
    return int((np.abs(values - values.max()) <= 1e-9 * max(abs(float(values.max())), 1.0)).sum())


def concentration(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    """Top share and HHI of the group totals; only groups with a positive total hold a share."""
    totals = {key: value for key, value in group_totals(inputs).items() if value > 0}
    if not totals:
        evidence: Evidence = {"top": "", "top_share": 0.0, "bottom_share": 0.0, "hhi": 0.0, "groups": 0, "tied": 0}
        return Verdict("moderate", evidence)
    keys = sorted(totals)
    amounts = np.array([totals[key] for key in keys], dtype=float)
    shares = amounts / amounts.sum() * 100
    top = keys[int(np.argmax(shares))]  # the first of equal maxima in name order
    evidence = {
        "top": top,
        "top_share": float(shares.max()),
        "bottom_share": float(shares.min()),
        "hhi": float((shares**2).sum()),
        "groups": len(keys),
        "tied": top_ties(shares),
    }
    verdict = verdicts.concentration_verdict(
        float(shares.max()), float(shares.min()), float(evidence["hhi"]), len(keys)
    )
    return Verdict(verdict, evidence)


# --- correlation ---------------------------------------------------------------------------------------------------


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3:
        return 0.0
    dx, dy = x - x.mean(), y - y.mean()
    scale = math.sqrt(float((dx**2).sum()) * float((dy**2).sum()))
    return max(-1.0, min(1.0, float((dx * dy).sum()) / scale)) if scale > 0 else 0.0


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, tied values sharing their average rank (what Spearman's rho correlates); one sort."""
    n = len(values)
    if not n:
        return np.array([], dtype=float)
    order = np.argsort(values)
    ordered = values[order]
    starts_run = np.empty(n, dtype=bool)
    starts_run[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts_run[1:])
    starts = np.flatnonzero(starts_run)
    ends = np.append(starts[1:], n)
    ranks = np.empty(n, dtype=float)
    ranks[order] = ((starts + 1 + ends) / 2.0)[np.cumsum(starts_run) - 1]  # the mean of ranks start+1 .. end
    return ranks


def cooks_distance(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Cook's distance of each point in the least-squares line of y on x (inf for a point of leverage 1)."""
    n = len(x)
    dx = x - x.mean()
    sxx = float((dx**2).sum())
    slope = float((dx * (y - y.mean())).sum()) / sxx
    residuals = y - (y.mean() + slope * dx)
    leverage = 1 / n + dx**2 / sxx
    mse = float((residuals**2).sum()) / (n - 2)
    if mse <= PERFECT_FIT * float(np.var(y)):
        return np.zeros(n)  # a perfect line (up to rounding): no point pulls it anywhere
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = residuals**2 / (2 * mse) * leverage / (1 - leverage) ** 2
    return np.where(1 - leverage <= 1e-12, np.inf, distance)


def far_out(values: np.ndarray) -> np.ndarray:
    """The mask of values beyond Q1 - 3 IQR or Q3 + 3 IQR (linear quantiles)."""
    q1, q3 = np.percentile(values, [25, 75])
    reach = threshold("correlation", "far_iqr_factor") * (q3 - q1)
    return np.asarray((values < q1 - reach) | (values > q3 + reach))


def influential(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The points that may carry r: Cook's distance above 4/n, or far out in x or y.

    Why both: a cluster of a few extreme points defines the line it lies on, so each one alone has a small Cook's
    distance; the far-out rule catches them. None are removed when fewer than 3 points would remain.
    """
    n = len(x)
    cooks, far = cooks_distance(x, y), far_out(x) | far_out(y)
    return verdicts.most_influential((cooks > threshold("correlation", "cooks_factor") / n) | far, far, cooks)


def finite_pairs(inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """The (x, y) pairs where both are finite numbers."""
    x, y = numbers(inputs.column("x")), numbers(inputs.column("y"))
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def correlation(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    """Pearson r, Spearman rho, and r without the influential points."""
    x, y = finite_pairs(inputs)
    n = len(x)
    if n < 3 or float(x.std()) == 0 or float(y.std()) == 0:
        evidence: Evidence = {"r": 0.0, "rho": 0.0, "n": n, "r_without": 0.0, "removed": 0}
        return Verdict("negligible", evidence)
    r = _pearson(x, y)
    rho = _pearson(average_ranks(x), average_ranks(y))
    mask = influential(x, y)
    r_without = _pearson(x[~mask], y[~mask]) if mask.any() else r
    removed = int(mask.sum())
    evidence = {"r": r, "rho": rho, "n": n, "r_without": r_without, "removed": removed}
    return Verdict(verdicts.correlation_verdict(r, r_without, removed), evidence)


# --- outlier and sentinel ------------------------------------------------------------------------------------------


def outlier(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    """Values beyond the IQR fences and how far they move the mean."""
    values = _values(inputs)
    if not len(values):
        evidence: Evidence = {"outliers": 0, "share": 0.0, "mean": 0.0, "mean_without": 0.0, "sd_without": 0.0,
                              "shift": 0.0}  # fmt: skip
        return Verdict("no_extreme_values", evidence)
    q1, q3 = np.percentile(values, [25, 75])
    reach = threshold("outlier", "iqr_factor") * (q3 - q1)
    out = (values < q1 - reach) | (values > q3 + reach)
    mean = float(values.mean())
    inside = values[~out] if (~out).any() else values
    mean_without = float(inside.mean())
    sd_without = float(inside.std(ddof=1)) if len(inside) > 1 else 0.0
    shift = verdicts.mean_shift(mean, mean_without, sd_without)
    count = int(out.sum())
    evidence = {
        "outliers": count,
        "share": count / len(values) * 100,
        "mean": _finite(mean),
        "mean_without": _finite(mean_without),
        "sd_without": _finite(sd_without),
        "shift": _finite(shift),
    }
    return Verdict(verdicts.outlier_verdict(count, shift), evidence)


def find_sentinels(values: Sequence[float] | np.ndarray) -> list[tuple[float, int]]:
    """The codes used as codes in a numeric column, most frequent first: ``[(99999.0, 12), (-1.0, 3)]``.

    The rule is :func:`insightloom.claims.verdicts.is_sentinel` (documented in docs/claims.md and docs/profile.md).
    """
    data = np.asarray(values, dtype=float)
    finite = np.isfinite(data)
    if not finite.all():
        data = data[finite]
    coded = np.zeros(len(data), dtype=bool)
    for code in verdicts.SENTINEL_CANDIDATES:  # 13 vectorised compares: several times faster than np.isin here
        coded |= data == code
    if not coded.any():
        return []  # the usual case, one pass: a wide table profiles thousands of columns
    rest = data[~coded]
    if not len(rest):
        return []
    q1, q3, p99 = (float(q) for q in np.percentile(rest, [25, 75, 99]))
    distinct = len(np.unique(rest))
    found = []
    for code in verdicts.SENTINEL_CANDIDATES:
        count = int((data == code).sum())
        if count and verdicts.is_sentinel(code, count, q1, q3, p99, float(rest.min()), distinct):
            found.append((code, count))
    return sorted(found, key=lambda item: (-item[1], -abs(item[0])))


def sentinel(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    """The most frequent sentinel code of the column, if any."""
    found = find_sentinels(_values(inputs))
    if not found:
        return Verdict("no_sentinel", {"code": 0, "count": 0})
    code, count = found[0]
    return Verdict("sentinel_code", {"code": int(code), "count": count})


# --- comparison ----------------------------------------------------------------------------------------------------


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (continued fraction, Lentz's method)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1 - x)  # the fraction converges fast only below the mean
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * result


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def t_quantile(probability: float, df: float) -> float:
    """The ``probability`` quantile (above 0.5) of Student's t, by bisection on :func:`t_sf`."""
    low, high = 0.0, 1.0
    while t_sf(high, df) > 1 - probability:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if t_sf(middle, df) > 1 - probability:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2


def two_groups(moments: pd.DataFrame, params: Mapping[str, Any]) -> tuple[str, str]:
    """The two groups compared: ``params`` a and b, else the two labels in name order.

    Raises:
        ValueError: More than two groups and no ``a``/``b`` to choose (the message says how to fix the SQL).
    """
    found = [str(key) for key in moments.index]
    a = label(params.get("a")) or (found[0] if found else "")
    b = label(params.get("b")) or next((key for key in found if key != a), "")
    if params.get("a") is None and len(found) > 2:
        raise ValueError(
            f"the comparison test takes exactly two groups, got {len(found)}; filter the SQL to two groups "
            "(WHERE grp IN (...)) or pass params a and b"
        )
    if not a or not b or a == b or a not in found or b not in found:
        present = ", ".join(found[:8]) or "none"
        raise ValueError(
            f"the comparison needs two different groups with values, got a={a!r} and b={b!r} (groups with values: "
            f"{present}); pass params a and b naming two of them"
        )
    return a, b


def group_stats(moments: pd.DataFrame, key: str) -> tuple[int, float, float]:
    """A group's n, mean and sample variance (0 for a group of one)."""
    at = moments.index.get_loc(key)
    n, mean, m2 = (float(moments[column].to_numpy()[at]) for column in ("n", "mean", "m2"))
    return int(round(n)), mean, m2 / (n - 1) if n > 1 else 0.0


def comparison(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    """Welch's t test of mean(a) - mean(b) with its 95% interval."""
    moments = group_moments(inputs, "var")
    a, b = two_groups(moments, params)
    (n_a, mean_a, var_a), (n_b, mean_b, var_b) = group_stats(moments, a), group_stats(moments, b)
    diff = mean_a - mean_b
    low, high, p_value = diff, diff, 1.0
    if min(n_a, n_b) >= threshold("comparison", "min_group_n"):
        part_a, part_b = var_a / n_a, var_b / n_b
        se = math.sqrt(part_a + part_b)
        if se > 0:
            df = (part_a + part_b) ** 2 / (part_a**2 / (n_a - 1) + part_b**2 / (n_b - 1))
            p_value = min(1.0, 2 * t_sf(abs(diff) / se, df))
            reach = t_quantile(0.5 + threshold("comparison", "confidence") / 200, df) * se
            low, high = diff - reach, diff + reach
        elif diff != 0:
            p_value = 0.0  # no variation in either group: any difference is exact
    verdict = verdicts.comparison_verdict(low, high)
    if min(n_a, n_b) < threshold("comparison", "min_group_n"):
        verdict = "within_noise"  # one value in a group cannot show a difference beyond noise
    evidence: Evidence = {
        "diff": _finite(diff),
        "ci_low": _finite(low),
        "ci_high": _finite(high),
        "p_value": _finite(p_value),
        "mean_a": _finite(mean_a),
        "mean_b": _finite(mean_b),
        "n_a": n_a,
        "n_b": n_b,
    }
    return Verdict(verdict, evidence)


_TESTS = {
    "trend": trend,
    "driver": driver,
    "concentration": concentration,
    "correlation": correlation,
    "outlier": outlier,
    "sentinel": sentinel,
    "comparison": comparison,
}


def run_test(name: str, rows: Sequence[Sequence[Any]] | pd.DataFrame, params: Mapping[str, Any] | None) -> Verdict:
    """Run the claim test ``name`` on its inputs.

    Args:
        name: A claim kind (``trend``, ``driver``, ...).
        rows: The test's inputs, as ``test.sql`` returns them (tuples or a DataFrame of those columns, in order),
            as data rows or, for a driver or a comparison, one row per group (the kind's ``summary``).
        params: The test's parameters (``measure``, ``by``, ``a``/``b`` for a comparison ...).

    Returns:
        The :class:`Verdict`.

    Raises:
        ValueError: Unknown test, rows of the wrong width, or parameters the test cannot use (with the fix).
    """
    kind = kind_of(name)
    return _TESTS[kind.name](input_frame(rows, kind.name), dict(params or {}))
