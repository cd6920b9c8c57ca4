"""The verdict rules: from a test's evidence figures to its verdict word, by the thresholds of ``table.py``.

Both implementations of a test, the product's NumPy code (:mod:`insightloom.claims.stats`) and the Validator's
SciPy re-computation (:mod:`insightloom.validation.claim_checks`), compute the figures independently and then call
these same rules, so a verdict can only differ where the figures do.
"""

from __future__ import annotations

import math

import numpy as np

from insightloom.claims.table import threshold

#: Codes that data sets use for "missing", "refused" or "not applicable" in a numeric column.
SENTINEL_CANDIDATES = (
    99.0,
    999.0,
    9999.0,
    99999.0,
    999999.0,
    9999999.0,
    99999999.0,
    -1.0,
    -9.0,
    -99.0,
    -999.0,
    -9999.0,
    -99999.0,
)


def trend_verdict(n: int, p_value: float, slope: float, tau: float, cv: float, largest_swing: float) -> str:
    """rising/falling when Kendall's p is below 0.05 (by the slope's sign), else volatile or no_clear_trend.

    Fewer than ``min_periods`` periods never make a trend: two points give a change, not a trend. A volatile series
    whose order explains little (|tau| below ``weak_tau``: 309 years of sunspots, tau 0.12, p 0.001, swings of 208%)
    is volatile, not rising: many periods make a weak drift significant, and the swings are what a reader sees.
    """
    if n < threshold("trend", "min_periods"):
        return "no_clear_trend"
    volatile = cv >= threshold("trend", "volatile_cv") or largest_swing >= threshold("trend", "volatile_swing")
    direction = slope if slope != 0 else tau
    weak_amid_swings = volatile and abs(tau) < threshold("trend", "weak_tau")
    if p_value < threshold("trend", "p_value") and direction != 0 and not weak_amid_swings:
        return "rising" if direction > 0 else "falling"
    return "volatile" if volatile else "no_clear_trend"


def driver_verdict(epsilon_sq: float, rank: int, breakdowns: int) -> str:
    """main for the breakdown with the largest material epsilon squared of two or more candidates, material for
    another material one (or the only candidate: "main" of one compares nothing), else weak."""
    if round(epsilon_sq, 9) < threshold("driver", "material_epsilon_sq"):  # both implementations agree at 0.06
        return "weak"
    return "main" if rank == 1 and breakdowns >= 2 else "material"


def concentration_verdict(top_share: float, bottom_share: float, hhi: float, groups: int) -> str:
    """dominates, then spread_evenly, then concentrated, else moderate (the rules of docs/claims.md).

    Each rule is measured against the fair share 100/groups, so two groups are judged like twenty: 50.5/49.5 is
    even, not "dominates", and HHI (at least 5000 for any two groups) counts only through its normalised form
    (HHI - fair) / (10000 - fair), which is 0 for equal groups and 1 for one group holding everything.
    """
    if groups < 1:
        return "moderate"
    if groups == 1:
        return "dominates"  # one group holds everything
    fair = 100.0 / groups
    normalised = (hhi - 100.0 * fair) / (10000.0 - 100.0 * fair) if groups > 1 else 1.0
    if top_share > threshold("concentration", "dominates_share") and top_share >= (
        threshold("concentration", "dominates_fair_ratio") * fair
    ):
        return "dominates"
    if (
        groups >= 2
        and top_share < threshold("concentration", "even_top_ratio") * fair
        and bottom_share > threshold("concentration", "even_bottom_ratio") * fair
        and normalised < threshold("concentration", "even_hhi_normalised")
    ):
        return "spread_evenly"
    if hhi >= threshold("concentration", "concentrated_hhi") and normalised >= threshold(
        "concentration", "concentrated_hhi_normalised"
    ):
        return "concentrated"
    return "moderate"


def strength(r: float) -> str:
    """The strength class of a correlation coefficient: strong, moderate, weak or negligible."""
    size = abs(r)
    for name in ("strong", "moderate", "weak"):
        if size >= threshold("correlation", f"{name}_r"):
            return name
    return "negligible"


def most_influential(candidates: np.ndarray, far: np.ndarray, cooks: np.ndarray) -> np.ndarray:
    """The candidates a correlation is re-measured without: at most ``max_removed_share`` % of the points (never
    fewer than ``min_removed``), far-out points first, then the largest Cook's distance; none when fewer than 3
    points would remain. "A few extreme values" then stays a few, however skewed the data."""
    n = len(candidates)
    cap = max(int(threshold("correlation", "min_removed")), math.ceil(threshold("correlation", "max_removed_share")
                                                                      * n / 100.0))  # fmt: skip
    keep = np.zeros(n, dtype=bool)
    index = np.flatnonzero(candidates)
    if len(index) > cap:
        order = np.lexsort((-np.nan_to_num(cooks[index], posinf=np.finfo(float).max), ~far[index]))
        index = index[order[:cap]]
    keep[index] = True
    return keep if n - int(keep.sum()) >= 3 else np.zeros(n, dtype=bool)


def correlation_verdict(r: float, r_without: float, removed: int) -> str:
    """driven_by_extremes when dropping the influential points moves r by 0.2 or more, else r's strength and sign."""
    if removed > 0 and abs(r - r_without) >= threshold("correlation", "extremes_delta_r"):
        return "driven_by_extremes"
    name = strength(r)
    if name == "negligible":
        return name
    return f"{name}_{'positive' if r > 0 else 'negative'}"


def outlier_verdict(outliers: int, shift: float) -> str:
    """extreme_values when some values lie beyond the IQR fences and they move the mean by 10% or more."""
    return "extreme_values" if outliers > 0 and shift >= threshold("outlier", "mean_shift") else "no_extreme_values"


def mean_shift(mean: float, mean_without: float, sd_without: float = 0.0) -> float:
    """How far the outliers move the mean, in % of the mean without them or of those values' standard deviation,
    whichever is larger: a mean near 0 (returns, changes) is no yardstick of its own (100 when both are 0 and the
    outliers move it)."""
    scale = max(abs(mean_without), abs(sd_without))
    if scale == 0:
        return 0.0 if mean == mean_without else 100.0
    return abs(mean - mean_without) / scale * 100.0


def is_sentinel(code: float, count: int, q1: float, q3: float, p99: float, rest_min: float, distinct: int) -> bool:
    """Whether a candidate code is used as a code in a numeric column (the profile's ``sentinel_values`` rule).

    Args:
        code: The candidate (one of :data:`SENTINEL_CANDIDATES`).
        count: How many rows hold it.
        q1, q3, p99: Quartiles and 99th percentile of the other values (every candidate code left out).
        rest_min: The smallest other value.
        distinct: How many distinct other values there are.

    The other values must be varied (``min_distinct_rest``), and the code must lie far outside them: a positive
    code beyond Q3 + 3 IQR and at least 10 times the 99th percentile (once is enough, ``min_count_positive``: a
    single 9999 that far above every other value is no measurement), a negative code in a column whose other values
    are all non-negative, repeated (``min_count``: one negative value may be real).
    """
    if distinct < threshold("sentinel", "min_distinct_rest"):
        return False
    if code < 0:
        return count >= threshold("sentinel", "min_count") and rest_min >= 0
    if count < threshold("sentinel", "min_count_positive"):
        return False
    far = code > q3 + threshold("sentinel", "far_iqr_factor") * (q3 - q1)
    return far and (p99 <= 0 or code >= threshold("sentinel", "far_p99_ratio") * p99)


def comparison_verdict(ci_low: float, ci_high: float) -> str:
    """higher or lower when the 95% interval of the difference excludes 0, else within_noise."""
    if ci_low > 0:
        return "higher"
    if ci_high < 0:
        return "lower"
    return "within_noise"
