"""The product's own implementation of each claim test, in NumPy (the Validator re-computes them with SciPy).

``run_test(name, rows, params)`` takes the test's input rows (what the claim's ``test.sql`` returns: see
``ClaimKind.inputs`` in ``table.py``) and returns a :class:`Verdict`: the verdict word and its evidence figures.
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
from insightloom.claims.table import kind_of, threshold

Evidence = dict[str, float | int | str]
#: A residual variance this small relative to y's variance is a perfect line, whatever the rounding of each route.
PERFECT_FIT = 1e-12


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


def _number(value: Any) -> float:
    """A float for any row cell; NULL, text and NaN become NaN (then dropped)."""
    if value is None or isinstance(value, (str, bytes)):
        try:
            return float(value) if value is not None else math.nan
        except ValueError:
            return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _label(value: Any) -> str | None:
    """A group key as text (SQL and pandas type keys differently); NULL/NaN keys are dropped like groupby does."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 3.0 from a float column and 3 from SQL name the same group
    return str(value)


def as_rows(rows: Sequence[Sequence[Any]] | pd.DataFrame, width: int, name: str) -> list[tuple[Any, ...]]:
    """The input rows as tuples of ``width`` cells.

    Raises:
        ValueError: A row has another number of columns (the message names the test's inputs).
    """
    if isinstance(rows, pd.DataFrame):
        data = [tuple(row) for row in rows.itertuples(index=False, name=None)]
    else:
        data = [tuple(row) if isinstance(row, (list, tuple)) else (row,) for row in rows]
    for row in data[:1]:
        if len(row) != width:
            columns = ", ".join(kind_of(name).inputs)
            raise ValueError(
                f"the {name} test takes rows of {width} column(s) ({columns}), got {len(row)}; "
                f"make the claim's SQL return exactly: {columns}"
            )
    return data


def _values(rows: list[tuple[Any, ...]], column: int = 0) -> np.ndarray:
    values = np.array([_number(row[column]) for row in rows], dtype=float)
    return values[np.isfinite(values)]


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


def trend(rows: list[tuple[Any, ...]], params: Mapping[str, Any]) -> Verdict:
    """Direction and volatility of one value per period, in period order."""
    values = _values(rows)
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


def eta_squared(labels: list[str], values: np.ndarray) -> float:
    """Between-group sum of squares over the total sum of squares (0 when the values do not vary)."""
    if not len(values) or float(np.ptp(values)) == 0:
        return 0.0  # a constant 0.1 leaves a rounding residue of 1e-34 that would explain "everything"
    total = float(((values - values.mean()) ** 2).sum())
    if total <= 0:
        return 0.0
    frame = pd.DataFrame({"g": labels, "v": values})
    groups = frame.groupby("g")["v"].agg(["mean", "size"])
    between = float((groups["size"] * (groups["mean"] - values.mean()) ** 2).sum())
    return max(0.0, min(1.0, between / total))


def breakdown_inputs(rows: list[tuple[Any, ...]]) -> dict[str, tuple[list[str], np.ndarray]]:
    """Breakdown name -> (group labels, values), rows with a NULL key or a missing value left out."""
    found: dict[str, tuple[list[str], list[float]]] = {}
    for breakdown, group, raw in rows:
        label, value = _label(group), _number(raw)
        if label is None or not math.isfinite(value):
            continue
        labels, values = found.setdefault(str(breakdown), ([], []))
        labels.append(label)
        values.append(value)
    return {name: (labels, np.array(values, dtype=float)) for name, (labels, values) in found.items()}


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


def driver(rows: list[tuple[Any, ...]], params: Mapping[str, Any]) -> Verdict:
    """How much of the measure's variation ``params['by']`` explains beyond chance (epsilon squared), ranked among
    all the candidate breakdowns."""
    inputs = breakdown_inputs(rows)
    by = str(params.get("by", ""))
    names = sorted({str(row[0]) for row in rows})
    if names and by not in names:
        raise ValueError(
            f"the driver test's params['by'] is {by!r}, but the rows' breakdown column holds {', '.join(names[:10])}; "
            "pass by= one of them (the SQL's first column names each candidate breakdown)"
        )
    etas = {name: eta_squared(labels, values) for name, (labels, values) in inputs.items()}
    scores = {
        name: epsilon_squared(etas[name], len(values), len(set(labels))) for name, (labels, values) in inputs.items()
    }
    scores.setdefault(by, 0.0)
    labels, values = inputs.get(by, ([], np.array([])))
    rank = rank_of(scores, by)
    best = min(scores, key=lambda key: (-round(scores[key], 12), key))
    evidence: Evidence = {
        "eta_sq": _finite(etas.get(by, 0.0)),
        "epsilon_sq": _finite(scores[by]),
        "rank": rank,
        "best": best,
        "best_epsilon_sq": _finite(scores[best]),
        "n": len(values),
        "groups": len(set(labels)),
        "breakdowns": len(scores),
    }
    return Verdict(verdicts.driver_verdict(scores[by], rank, len(scores)), evidence)


# --- concentration -------------------------------------------------------------------------------------------------


def group_totals(rows: list[tuple[Any, ...]]) -> dict[str, float]:
    """Group -> total of its values (repeated keys are added), NULL keys and missing values left out."""
    totals: dict[str, float] = {}
    for group, raw in rows:
        label, value = _label(group), _number(raw)
        if label is not None and math.isfinite(value):
            totals[label] = totals.get(label, 0.0) + value
    return totals


def top_ties(shares: Any) -> int:
    """How many groups hold the largest share (1 when one group leads alone)."""
    values = np.asarray(shares, dtype=float)
    return int((np.abs(values - values.max()) <= 1e-9 * max(abs(float(values.max())), 1.0)).sum())


def concentration(rows: list[tuple[Any, ...]], params: Mapping[str, Any]) -> Verdict:
    """Top share and HHI of the group totals; only groups with a positive total hold a share."""
    totals = {key: value for key, value in group_totals(rows).items() if value > 0}
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
    """Ranks 1..n, tied values sharing their average rank (what Spearman's rho correlates)."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=float)
    ranks[order] = np.arange(1, len(values) + 1, dtype=float)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return np.asarray(sums[inverse] / counts[inverse], dtype=float)


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


def correlation(rows: list[tuple[Any, ...]], params: Mapping[str, Any]) -> Verdict:
    """Pearson r, Spearman rho, and r without the influential points."""
    pairs = np.array([(_number(a), _number(b)) for a, b in rows], dtype=float).reshape(-1, 2)
    pairs = pairs[np.isfinite(pairs).all(axis=1)]
    x, y = pairs[:, 0], pairs[:, 1]
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


def outlier(rows: list[tuple[Any, ...]], params: Mapping[str, Any]) -> Verdict:
    """Values beyond the IQR fences and how far they move the mean."""
    values = _values(rows)
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


def sentinel(rows: list[tuple[Any, ...]], params: Mapping[str, Any]) -> Verdict:
    """The most frequent sentinel code of the column, if any."""
    found = find_sentinels(_values(rows))
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


def two_groups(rows: list[tuple[Any, ...]], params: Mapping[str, Any]) -> tuple[str, str, dict[str, np.ndarray]]:
    """The two groups compared (``params`` a and b, else the two labels in name order) and each group's values.

    Raises:
        ValueError: More than two groups and no ``a``/``b`` to choose (the message says how to fix the SQL).
    """
    found: dict[str, list[float]] = {}
    for group, raw in rows:
        label, value = _label(group), _number(raw)
        if label is not None and math.isfinite(value):
            found.setdefault(label, []).append(value)
    labels = sorted(found)
    a = _label(params.get("a")) or (labels[0] if labels else "")
    b = _label(params.get("b")) or next((label for label in labels if label != a), "")
    if params.get("a") is None and len(labels) > 2:
        raise ValueError(
            f"the comparison test takes exactly two groups, got {len(labels)}; filter the SQL to two groups "
            "(WHERE grp IN (...)) or pass params a and b"
        )
    if not a or not b or a == b or a not in found or b not in found:
        present = ", ".join(labels[:8]) or "none"
        raise ValueError(
            f"the comparison needs two different groups with values, got a={a!r} and b={b!r} (groups with values: "
            f"{present}); pass params a and b naming two of them"
        )
    return a, b, {key: np.array(found[key], dtype=float) for key in (a, b)}


def comparison(rows: list[tuple[Any, ...]], params: Mapping[str, Any]) -> Verdict:
    """Welch's t test of mean(a) - mean(b) with its 95% interval."""
    a, b, groups = two_groups(rows, params)
    va, vb = groups[a], groups[b]
    mean_a = float(va.mean()) if len(va) else 0.0
    mean_b = float(vb.mean()) if len(vb) else 0.0
    diff = mean_a - mean_b
    low, high, p_value = diff, diff, 1.0
    if min(len(va), len(vb)) >= threshold("comparison", "min_group_n"):
        part_a, part_b = float(va.var(ddof=1)) / len(va), float(vb.var(ddof=1)) / len(vb)
        se = math.sqrt(part_a + part_b)
        if se > 0:
            df = (part_a + part_b) ** 2 / (part_a**2 / (len(va) - 1) + part_b**2 / (len(vb) - 1))
            p_value = min(1.0, 2 * t_sf(abs(diff) / se, df))
            reach = t_quantile(0.5 + threshold("comparison", "confidence") / 200, df) * se
            low, high = diff - reach, diff + reach
        elif diff != 0:
            p_value = 0.0  # no variation in either group: any difference is exact
    verdict = verdicts.comparison_verdict(low, high)
    if min(len(va), len(vb)) < threshold("comparison", "min_group_n"):
        verdict = "within_noise"  # one value in a group cannot show a difference beyond noise
    evidence: Evidence = {
        "diff": _finite(diff),
        "ci_low": _finite(low),
        "ci_high": _finite(high),
        "p_value": _finite(p_value),
        "mean_a": _finite(mean_a),
        "mean_b": _finite(mean_b),
        "n_a": len(va),
        "n_b": len(vb),
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
    """Run the claim test ``name`` on its input rows.

    Args:
        name: A claim kind (``trend``, ``driver``, ...).
        rows: The test's inputs, as ``test.sql`` returns them (tuples or a DataFrame of those columns, in order).
        params: The test's parameters (``measure``, ``by``, ``a``/``b`` for a comparison ...).

    Returns:
        The :class:`Verdict`.

    Raises:
        ValueError: Unknown test, rows of the wrong width, or parameters the test cannot use (with the fix).
    """
    kind = kind_of(name)
    data = as_rows(rows, len(kind.inputs), kind.name)
    return _TESTS[kind.name](data, dict(params or {}))
