"""Re-compute tracked claims with SciPy, a second implementation beside the product's NumPy tests.

A claim's ``check`` is ``"stat:<test>"``; its ``test`` holds the DuckDB SQL that returns the test's input rows over
the job's views and the test's parameters. Here DuckDB runs that SQL on the same locked-down connection the number
checks use (no file is opened here: the views come from :func:`~insightloom.validation.jobfiles.load_views`),
SciPy re-computes the figures (``kendalltau``, ``theilslopes``, ``f_oneway``, ``pearsonr``, ``spearmanr``,
``ttest_ind``; from one row per group, the one-way ANOVA's F and ``ttest_ind_from_stats``), the verdict rules of
:mod:`insightloom.claims.verdicts` decide, and the result is compared with the record: the same verdict and every
evidence figure within |Δ| < 0.01 (or 1e-6 relative for large values). Otherwise the claim needs review with a
reason starting ``claim mismatch:``.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]

from insightloom.claims import verdicts
from insightloom.claims.inputs import (
    Inputs,
    breakdown_moments,
    breakdown_names,
    finite_values,
    group_moments,
    input_frame,
    numbers,
    values_by_group,
)
from insightloom.claims.records import evidence_of, params_of
from insightloom.claims.stats import (
    CONSTANT_SPREAD,
    PERFECT_FIT,
    Evidence,
    Verdict,
    group_stats,
    group_totals,
    rank_of,
    two_groups,
)
from insightloom.claims.table import KINDS, kind_of, threshold
from insightloom.validation.checks import (
    READS_RE,
    ConnectionFactory,
    clean_check,
    duckdb_message,
    open_connection,
    reads_no_table,
)
from insightloom.validation.jobfiles import CachedTable
from insightloom.validation.memo import RecomputeMemo, params_key, views_key

logger = logging.getLogger(__name__)

STAT_PREFIX = "stat:"
MISMATCH = "claim mismatch:"
RELATIVE_TOLERANCE = 1e-6
ABSOLUTE_TOLERANCE = 0.01


def is_stat_check(calc: Mapping[str, Any]) -> bool:
    """Whether the record's check is a statistical check (``stat:<test>``) rather than SQL."""
    check = calc.get("check")
    return isinstance(check, str) and check.strip().lower().startswith(STAT_PREFIX)


#: Why a claim record whose check is not its statistical test is never verified (SQL or LLM re-computation checks a
#: number; a claim's verdict and evidence are re-computed only by the test).
CLAIM_NEEDS_STAT = (
    "a claim is verified only by re-computing its statistical test; track it with track_claim, which records the "
    "check 'stat:<kind>', not with a SQL check or none"
)


def is_claim_without_test(calc: Mapping[str, Any]) -> bool:
    """Whether a ``kind: "claim"`` record lacks its ``stat:<test>`` check (it can never be verified)."""
    return calc.get("kind") == "claim" and not is_stat_check(calc)


@dataclass
class ClaimOutcome:
    """What re-computing one claim found.

    Attributes:
        verified: The re-computed verdict and evidence agree with the record.
        verdict: The re-computed verdict word (None when the test could not run).
        evidence: The re-computed evidence figures.
        reason: Why it does not verify (``claim mismatch: ...`` or why the test could not run); empty when verified.
    """

    verified: bool
    verdict: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    reason: str = ""


# --- the SciPy tests -----------------------------------------------------------------------------------------------


def _scipy() -> Any:
    """``scipy.stats``, imported on first use: it costs seconds, and the CLI imports validation at startup."""
    from scipy import stats  # type: ignore[import-untyped]

    return stats


def _safe(value: Any) -> float:
    number = float(value)
    return number if math.isfinite(number) else 0.0


def _trend(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    values = finite_values(inputs, "v")
    n = len(values)
    order = np.arange(n, dtype=float)
    tau, p_value = 0.0, 1.0
    if n >= 3 and np.ptp(values) > 0:
        result = _scipy().kendalltau(order, values, method="asymptotic")
        tau, p_value = _safe(result.statistic), _safe(result.pvalue)
    slope = _safe(_scipy().theilslopes(values, order).slope) if n >= 2 else 0.0
    mean = float(np.mean(values)) if n else 0.0
    cv = abs(_safe(_scipy().variation(values, ddof=1))) * 100 if n >= 2 and mean != 0 else 0.0
    swing = float(pd.Series(values).diff().abs().max()) / abs(mean) * 100 if n >= 2 and mean != 0 else 0.0
    evidence: Evidence = {
        "n": n,
        "tau": tau,
        "p_value": p_value,
        "slope": slope,
        "cv": cv,
        "largest_swing": _safe(swing),
    }
    return Verdict(verdicts.trend_verdict(n, p_value, slope, tau, cv, _safe(swing)), evidence)


def _sizes_from_f(f_value: float, k: int, n: int) -> tuple[float, float]:
    """(eta², epsilon²) from the one-way ANOVA F: F(k-1) / (F(k-1) + N-k) and (F-1)(k-1) / (F(k-1) + N-k)."""
    if math.isinf(f_value):
        return 1.0, 1.0
    if not math.isfinite(f_value):
        return 0.0, 0.0
    denominator = f_value * (k - 1) + n - k
    return f_value * (k - 1) / denominator, max(0.0, (f_value - 1) * (k - 1) / denominator)


def _row_effect_sizes(inputs: Inputs, name: str) -> tuple[float, float]:
    """(eta², epsilon²) of one breakdown's data rows, from SciPy's ``f_oneway``."""
    part = inputs.frame[(breakdown_names(inputs) == name).to_numpy()]
    groups = list(values_by_group(Inputs(part.iloc[:, 1:].set_axis(["grp", "v"], axis=1))).values())
    values = np.concatenate(groups) if groups else np.array([])
    k, n = len(groups), len(values)
    if k < 2 or n == 0 or float(np.ptp(values)) == 0:
        return 0.0, 0.0
    if n == k:
        return 1.0, 0.0  # one value per group: every difference is between groups, none of it beyond chance
    return _sizes_from_f(float(_scipy().f_oneway(*groups).statistic), k, n)


def _summary_effect_sizes(moments: pd.DataFrame) -> tuple[float, float]:
    """(eta², epsilon²) of one breakdown's groups (n, mean, m2): F = (SSB / (k-1)) / (SSW / (N-k))."""
    n_g, mean_g, m2_g = (moments[column].to_numpy(dtype=float) for column in ("n", "mean", "m2"))
    k, n = len(n_g), int(round(float(n_g.sum())))
    grand = float(np.average(mean_g, weights=n_g)) if k else 0.0
    between, within = float(np.dot(n_g, (mean_g - grand) ** 2)), float(m2_g.sum())
    constant = between + within <= n * (CONSTANT_SPREAD * float(np.abs(mean_g).max(initial=0.0))) ** 2
    if k < 2 or n == 0 or constant:
        return 0.0, 0.0
    if n == k:
        return 1.0, 0.0
    f_value = math.inf if within == 0 else (between / (k - 1)) / (within / (n - k))
    return _sizes_from_f(f_value, k, n)


def _driver(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    names, found = breakdown_moments(inputs)
    by = str(params.get("by", ""))
    sizes = {
        name: _summary_effect_sizes(moments) if inputs.summary else _row_effect_sizes(inputs, name)
        for name, moments in found.items()
    }
    scores = {name: epsilon for name, (_, epsilon) in sizes.items()}
    scores.setdefault(by, 0.0)
    moments = found.get(by)
    rank = rank_of(scores, by)
    best = sorted(scores, key=lambda key: (-round(scores[key], 12), key))[0]
    evidence: Evidence = {
        "eta_sq": sizes.get(by, (0.0, 0.0))[0],
        "epsilon_sq": scores[by],
        "rank": rank,
        "best": best,
        "best_epsilon_sq": scores[best],
        "n": int(round(float(moments["n"].sum()))) if moments is not None else 0,
        "groups": len(moments) if moments is not None else 0,
        "breakdowns": len(scores),
    }
    return Verdict(verdicts.driver_verdict(scores[by], rank, len(scores)), evidence)


def _concentration(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    totals = pd.Series(group_totals(inputs), dtype=float)
    totals = totals[totals > 0].sort_index()
    if totals.empty:
        return Verdict("moderate", {"top": "", "top_share": 0.0, "bottom_share": 0.0, "hhi": 0.0, "groups": 0,
                                    "tied": 0})  # fmt: skip
    shares = totals / totals.sum() * 100
    hhi = float(np.dot(shares.to_numpy(), shares.to_numpy()))
    evidence: Evidence = {
        "top": str(shares.idxmax()),
        "top_share": float(shares.max()),
        "bottom_share": float(shares.min()),
        "hhi": hhi,
        "groups": len(shares),
        "tied": int(np.isclose(shares.to_numpy(), shares.max(), rtol=1e-9, atol=1e-9).sum()),
    }
    verdict = verdicts.concentration_verdict(float(shares.max()), float(shares.min()), hhi, len(shares))
    return Verdict(verdict, evidence)


def _cooks(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Cook's distance from the hat matrix of the design [1, z], z = x standardised (least squares via lstsq).

    Cook's distance does not change when x is shifted or scaled, and standardising keeps the hat matrix exact: a
    raw design [1, x] with x near 1e12 (a GDP in dollars) loses every digit of the leverage in ``pinv``.
    """
    scale = float(np.std(x)) or 1.0
    design = np.column_stack([np.ones_like(x), (x - float(np.mean(x))) / scale])
    coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
    residuals = y - design @ coefficients
    leverage = np.einsum("ij,ji->i", design, np.linalg.pinv(design))
    mse = float(residuals @ residuals) / (len(x) - 2)
    if mse <= PERFECT_FIT * float(np.var(y)):
        return np.zeros(len(x))
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = residuals**2 / (2 * mse) * leverage / (1 - leverage) ** 2
    return np.where(1 - leverage <= 1e-12, np.inf, distance)


def _far(values: np.ndarray) -> np.ndarray:
    q1, q3 = np.quantile(values, [0.25, 0.75])
    reach = threshold("correlation", "far_iqr_factor") * float(_scipy().iqr(values))
    return np.asarray((values < q1 - reach) | (values > q3 + reach))


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return _safe(_scipy().pearsonr(x, y).statistic)


def _correlation(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    pairs = pd.DataFrame({"x": numbers(inputs.column("x")), "y": numbers(inputs.column("y"))})
    pairs = pairs[np.isfinite(pairs.to_numpy()).all(axis=1)]
    x, y = pairs["x"].to_numpy(), pairs["y"].to_numpy()
    n = len(x)
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return Verdict("negligible", {"r": 0.0, "rho": 0.0, "n": n, "r_without": 0.0, "removed": 0})
    r = _pearson(x, y)
    rho = _safe(_scipy().spearmanr(x, y).statistic)
    cooks, far = _cooks(x, y), _far(x) | _far(y)
    mask = verdicts.most_influential((cooks > threshold("correlation", "cooks_factor") / n) | far, far, cooks)
    removed = int(mask.sum())
    r_without = _pearson(x[~mask], y[~mask]) if removed else r
    evidence: Evidence = {"r": r, "rho": rho, "n": n, "r_without": r_without, "removed": removed}
    return Verdict(verdicts.correlation_verdict(r, r_without, removed), evidence)


def _outlier(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    values = finite_values(inputs, "v")
    if not len(values):
        return Verdict(
            "no_extreme_values",
            {"outliers": 0, "share": 0.0, "mean": 0.0, "mean_without": 0.0, "sd_without": 0.0, "shift": 0.0},
        )
    q1 = float(_scipy().scoreatpercentile(values, 25))
    q3 = float(_scipy().scoreatpercentile(values, 75))
    reach = threshold("outlier", "iqr_factor") * float(_scipy().iqr(values))
    inside = values[(values >= q1 - reach) & (values <= q3 + reach)]
    count = len(values) - len(inside)
    mean = float(_scipy().tmean(values))
    kept = inside if len(inside) else values
    mean_without = float(_scipy().tmean(kept))
    sd_without = float(_scipy().tstd(kept)) if len(kept) > 1 else 0.0
    shift = verdicts.mean_shift(mean, mean_without, sd_without)
    evidence: Evidence = {
        "outliers": count,
        "share": 100.0 * count / len(values),
        "mean": mean,
        "mean_without": mean_without,
        "sd_without": sd_without,
        "shift": shift,
    }
    return Verdict(verdicts.outlier_verdict(count, shift), evidence)


def _sentinel(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    values = pd.Series(finite_values(inputs, "v"))
    counts = values.value_counts()
    is_code = values.isin(verdicts.SENTINEL_CANDIDATES)
    rest = values[~is_code].to_numpy()
    found: list[tuple[float, int]] = []
    if len(rest):
        q1, q3, p99 = (float(_scipy().scoreatpercentile(rest, q)) for q in (25, 75, 99))
        distinct = int(pd.Series(rest).nunique())
        for code in verdicts.SENTINEL_CANDIDATES:
            count = int(counts.get(code, 0))
            if count and verdicts.is_sentinel(code, count, q1, q3, p99, float(rest.min()), distinct):
                found.append((code, count))
    if not found:
        return Verdict("no_sentinel", {"code": 0, "count": 0})
    code, count = max(found, key=lambda item: (item[1], abs(item[0])))
    return Verdict("sentinel_code", {"code": int(code), "count": count})


def _welch_interval(a: tuple[int, float, float], b: tuple[int, float, float]) -> tuple[float, float]:
    """Welch's interval of mean(a) - mean(b) from each group's (n, mean, variance), at the claims table's
    confidence (Welch-Satterthwaite df)."""
    (n_a, mean_a, var_a), (n_b, mean_b, var_b) = a, b
    part_a, part_b = var_a / n_a, var_b / n_b
    df = (part_a + part_b) ** 2 / (part_a**2 / (n_a - 1) + part_b**2 / (n_b - 1))
    reach = float(_scipy().t.ppf(0.5 + threshold("comparison", "confidence") / 200, df)) * math.sqrt(part_a + part_b)
    return mean_a - mean_b - reach, mean_a - mean_b + reach


def _welch(inputs: Inputs, moments: pd.DataFrame, a: str, b: str) -> tuple[float, float, float] | None:
    """SciPy's Welch test of a against b: (p, interval low, high), or None when neither group varies."""
    confidence = threshold("comparison", "confidence") / 100
    if inputs.summary:
        stats_a, stats_b = group_stats(moments, a), group_stats(moments, b)
        if stats_a[2] <= 0 and stats_b[2] <= 0:
            return None
        (n_a, mean_a, var_a), (n_b, mean_b, var_b) = stats_a, stats_b
        p_value = (
            _scipy()
            .ttest_ind_from_stats(mean_a, math.sqrt(var_a), n_a, mean_b, math.sqrt(var_b), n_b, equal_var=False)
            .pvalue
        )
        return (p_value, *_welch_interval(stats_a, stats_b))
    groups = values_by_group(inputs)
    if not (np.ptp(groups[a]) > 0 or np.ptp(groups[b]) > 0):
        return None
    result = _scipy().ttest_ind(groups[a], groups[b], equal_var=False)
    interval = result.confidence_interval(confidence_level=confidence)
    return result.pvalue, interval.low, interval.high


def _comparison(inputs: Inputs, params: Mapping[str, Any]) -> Verdict:
    moments = group_moments(inputs, "var")
    a, b = two_groups(moments, params)
    (n_a, mean_a, _), (n_b, mean_b, _) = group_stats(moments, a), group_stats(moments, b)
    diff = mean_a - mean_b
    low, high, p_value = diff, diff, 1.0
    testable = min(n_a, n_b) >= threshold("comparison", "min_group_n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = _welch(inputs, moments, a, b) if testable else None
    if result is not None:
        p_value, low, high = (_safe(value) for value in result)
    elif testable and diff != 0:
        p_value = 0.0
    verdict = verdicts.comparison_verdict(low, high) if testable else "within_noise"
    evidence: Evidence = {
        "diff": diff,
        "ci_low": low,
        "ci_high": high,
        "p_value": p_value,
        "mean_a": mean_a,
        "mean_b": mean_b,
        "n_a": n_a,
        "n_b": n_b,
    }
    return Verdict(verdict, evidence)


_SCIPY_TESTS: dict[str, Callable[[Inputs, Mapping[str, Any]], Verdict]] = {
    "trend": _trend,
    "driver": _driver,
    "concentration": _concentration,
    "correlation": _correlation,
    "outlier": _outlier,
    "sentinel": _sentinel,
    "comparison": _comparison,
}


def recompute(name: str, rows: Sequence[Sequence[Any]] | pd.DataFrame, params: Mapping[str, Any]) -> Verdict:
    """Re-compute the claim test ``name`` with SciPy (the same inputs and rules as ``claims.stats.run_test``)."""
    kind = kind_of(name)
    inputs = input_frame(rows, kind.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy warns on constant or tiny input; the rules handle those cases
        return _SCIPY_TESTS[kind.name](inputs, dict(params))


# --- comparing -----------------------------------------------------------------------------------------------------


def figures_match(tracked: object, recomputed: object) -> bool:
    """|Δ| < 0.01, or within 1e-6 relative for large values; strings exactly."""
    if isinstance(tracked, str) or isinstance(recomputed, str):
        return str(tracked) == str(recomputed)
    try:
        left, right = float(tracked), float(recomputed)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    delta = abs(left - right)
    return delta < ABSOLUTE_TOLERANCE or delta <= RELATIVE_TOLERANCE * max(abs(left), abs(right))


def compare(record: Mapping[str, Any], verdict: Verdict) -> ClaimOutcome:
    """Compare a claim record with its re-computation: the verdict word, then each evidence figure."""
    evidence = evidence_of(record)
    problems: list[str] = []
    if record.get("value") != verdict.verdict:
        problems.append(f"verdict {record.get('value')!r} but the re-computation gives {verdict.verdict!r}")
    for key, value in verdict.evidence.items():
        if key not in evidence:
            problems.append(f"evidence {key!r} is missing (the re-computation gives {value!r})")
        elif not figures_match(evidence[key], value):
            problems.append(f"{key} {evidence[key]!r} but the re-computation gives {value!r}")
    extra = sorted(set(evidence) - set(verdict.evidence))
    if extra:  # the sentence would print figures (or names) nothing re-computed
        problems.append(f"evidence {', '.join(map(repr, extra))} is not the test's; track the claim with track_claim")
    reason = f"{MISMATCH} {'; '.join(problems)}" if problems else ""
    return ClaimOutcome(not problems, verdict.verdict, dict(verdict.evidence), reason)


def claim_spec(record: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]] | str:
    """The record's test name, SQL and params, or why the claim cannot be re-computed (with the fix)."""
    check = str(record.get("check") or "").strip()
    name = check[len(STAT_PREFIX) :].strip() if is_stat_check(record) else ""
    test = record.get("test") if isinstance(record.get("test"), Mapping) else None  # None: no test at all
    if name not in KINDS:
        return f"unknown statistical check {check!r}; use stat:<kind> with a kind of: {', '.join(KINDS)}"
    if record.get("claim_kind") != name:
        return f"claim_kind {record.get('claim_kind')!r} does not match its check {check!r}; track it with track_claim"
    if test is None or not isinstance(test.get("sql"), str) or not test["sql"].strip():
        return "the claim has no test.sql to re-compute its inputs from; track it with track_claim(kind, id, view, sql)"
    return name, str(test["sql"]), dict(params_of(record))


#: The most input rows a claim's test.sql may return: row-level inputs of a big table fit, a runaway join does not.
MAX_CLAIM_ROWS = 20_000_000
_BATCH_ROWS = 1_000_000


def _plain_columns(table: pa.Table) -> pd.DataFrame:
    """The Arrow result as pandas, decimals as floats (the tests read numbers, never ``Decimal`` objects)."""
    for index, column in enumerate(table.schema):
        if pa.types.is_decimal(column.type):
            table = table.set_column(index, column.name, table.column(index).cast(pa.float64()))
    return table.to_pandas()


def _arrow_reader(result: Any) -> pa.RecordBatchReader:
    """The result's rows in Arrow batches (DuckDB 2 names it ``to_arrow_reader``, 1.x ``fetch_record_batch``)."""
    read = getattr(result, "to_arrow_reader", None) or result.fetch_record_batch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DuckDB 2 notes that a DB-API result's Arrow output is one copy more
        return read(_BATCH_ROWS)


def fetch_rows(con: Any, sql: str, views: Sequence[str] = ()) -> pd.DataFrame | str:
    """The inputs a claim's ``test.sql`` returns on an open check connection, as columns (at most
    :data:`MAX_CLAIM_ROWS` rows, read in Arrow batches), or why they cannot be read: DuckDB's error (one line), SQL
    that reads no table, or too many rows."""
    text, error = clean_check(sql)
    if not error and not READS_RE.search(text):
        error = reads_no_table(list(views))
    if error:
        return error.replace("a check", "a claim's test.sql").replace("the check", "the claim's test.sql")
    batches: list[pa.RecordBatch] = []
    read = 0
    try:
        reader = _arrow_reader(con.execute(text))
        for batch in reader:
            batches.append(batch)
            read += batch.num_rows
            if read > MAX_CLAIM_ROWS:
                return (f"the test.sql returns more than {MAX_CLAIM_ROWS:,} rows; aggregate in SQL first (one row "
                        "per period for a trend, group totals for a concentration, one row per group for a driver "
                        "or a comparison: see docs/claims.md) or sample the rows")  # fmt: skip
        table = pa.Table.from_batches(batches, schema=reader.schema)
    except Exception as exc:  # duckdb.Error and friends: the claim cannot be re-computed, never a crash
        return f"the test.sql failed in DuckDB: {duckdb_message(exc)}"
    return _plain_columns(table)


def verify_claims(
    records: Sequence[Mapping[str, Any]],
    views: Mapping[str, CachedTable],
    *,
    connection_factory: ConnectionFactory | None = None,
    test: Callable[[str, pd.DataFrame, Mapping[str, Any]], Verdict] | None = None,
    memo: RecomputeMemo | None = None,
) -> list[ClaimOutcome]:
    """Re-compute each claim record from the job's views with SciPy; one outcome per record, in order.

    ``test`` replaces the SciPy implementation: a script's own end-of-run check passes the product's NumPy test,
    since there the question is whether its rows match its SQL, and SciPy's import would cost every script seconds.
    ``memo`` holds re-computations already made on the same data (SciPy's only): the test is not run again for a
    claim with the same test, SQL and parameters, and the record is compared with the kept verdict.
    """
    test = test or recompute
    memo = memo if test is recompute else None
    specs = [claim_spec(record) for record in records]
    data = views_key(views)
    con: Any = None
    outcomes: list[ClaimOutcome] = []
    try:
        for record, spec in zip(records, specs, strict=True):
            if isinstance(spec, str):
                outcomes.append(ClaimOutcome(False, reason=spec))
                continue
            name, sql, params = spec
            key = (data, "claim", name, sql, params_key(params))
            verdict = memo.get(key) if memo is not None else None
            if verdict is None:
                if con is None:
                    con = open_connection(views, connection_factory, [s[1] for s in specs if isinstance(s, tuple)])
                verdict = _recompute_one(con, name, sql, params, views, test)
                if memo is not None:
                    memo.put(key, verdict)
            outcomes.append(
                compare(record, verdict) if isinstance(verdict, Verdict) else ClaimOutcome(False, reason=verdict)
            )
    finally:
        if con is not None:
            con.close()
    logger.info("re-computed %d claim(s) with %s", len(records), "SciPy" if test is recompute else "NumPy")
    return outcomes


def _recompute_one(
    con: Any,
    name: str,
    sql: str,
    params: dict[str, Any],
    views: Mapping[str, CachedTable],
    test: Callable[[str, pd.DataFrame, Mapping[str, Any]], Verdict],
) -> Verdict | str:
    """The claim's re-computed verdict, or why its test cannot run (its SQL's error, or the test's)."""
    rows = fetch_rows(con, sql, sorted(views))
    if isinstance(rows, str):
        return rows
    try:
        return test(name, rows, params)
    except (ValueError, TypeError) as exc:  # rows a model's SQL shaped oddly: a reason, never a crash
        return f"the {name} test cannot run on its test.sql rows: {exc}"
