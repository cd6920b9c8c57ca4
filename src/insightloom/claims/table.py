"""THE one table of claim kinds: their verdict words, thresholds and wording (English and Korean).

A claim is a verdict about the data ("rising", "main driver", "dominates") that is recorded, checked and cited
like a number. Everything that decides or prints a verdict reads it from here: the product's NumPy tests
(:mod:`insightloom.claims.stats`), the Validator's SciPy re-computation, the wording a ``{{claim:ID}}`` renders to,
and ``docs/claims.md`` (a test keeps that page and this table in step, so no second table can drift).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

LANGUAGES = ("en", "ko")


@dataclass(frozen=True)
class ClaimKind:
    """One claim kind.

    Attributes:
        name: The ``claim_kind`` (and the statistical test's name, ``check: "stat:<name>"``).
        verdicts: The verdict words a record of this kind may carry as its ``value``.
        test: The test, in a few words (docs and the record's default ``formula``).
        inputs: The columns the claim's ``test.sql`` returns, in order.
        summary: The columns of the same inputs summarised per group (exact: the test needs only these), which
            ``test.sql`` may return instead, so a claim over millions of rows reads one row per group.
        evidence: The evidence keys every record of this kind carries.
        thresholds: Threshold name -> value; the verdict rules in ``stats.py`` use exactly these.
        wording: Verdict -> language -> template (fields: evidence, params and their display forms, see wording.py).
    """

    name: str
    verdicts: tuple[str, ...]
    test: str
    inputs: tuple[str, ...]
    evidence: tuple[str, ...]
    summary: tuple[str, ...] = ()
    thresholds: Mapping[str, float] = field(default_factory=dict)
    wording: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


TREND = ClaimKind(
    name="trend",
    verdicts=("rising", "falling", "no_clear_trend", "volatile"),
    test="Kendall tau-b of the period values against period order (asymptotic p), Theil-Sen slope, CV and the "
    "largest period-to-period swing",
    inputs=("v",),
    evidence=("n", "tau", "p_value", "slope", "cv", "largest_swing"),
    thresholds={"min_periods": 5, "p_value": 0.05, "volatile_cv": 30.0, "volatile_swing": 50.0, "weak_tau": 0.2},
    wording={
        "rising": {
            "en": "rising: the {period_adj} {series} grow by {slope} per {period} "
            "(Kendall tau {tau}, p {p_text}, {n} periods)",
            "ko": "증가 추세: {period_ko}별 {series_ko}이(가) {period_ko}마다 {slope}씩 늘어남 "
            "(Kendall tau {tau}, p {p_text}, {n}개 기간)",
        },
        "falling": {
            "en": "falling: the {period_adj} {series} shrink by {abs_slope} per {period} "
            "(Kendall tau {tau}, p {p_text}, {n} periods)",
            "ko": "감소 추세: {period_ko}별 {series_ko}이(가) {period_ko}마다 {abs_slope}씩 줄어듦 "
            "(Kendall tau {tau}, p {p_text}, {n}개 기간)",
        },
        "no_clear_trend": {
            "en": "no clear trend: over {n} periods the {period_adj} {series} vary by {cv} of their mean "
            "(Kendall tau {tau}, p {p_text})",
            "ko": "뚜렷한 추세 없음: {n}개 기간 동안 {period_ko}별 {series_ko}의 변동계수 {cv} "
            "(Kendall tau {tau}, p {p_text})",
        },
        "volatile": {
            "en": "no clear trend: the {period_adj} {series} swing by {largest_swing} of their mean "
            "(CV {cv}, Kendall tau {tau}, p {p_text})",
            "ko": "뚜렷한 추세 없음: {period_ko}별 {series_ko}이(가) 평균의 {largest_swing}만큼 출렁임 "
            "(변동계수 {cv}, Kendall tau {tau}, p {p_text})",
        },
    },
)

DRIVER = ClaimKind(
    name="driver",
    verdicts=("main", "material", "weak"),
    test="epsilon squared (eta squared, between-group over total sum of squares, less what as many groups of noise "
    "would explain) of the measure by each candidate breakdown, row level; the breakdowns are ranked by it",
    inputs=("breakdown", "grp", "v"),
    summary=("breakdown", "grp", "n", "mean", "m2"),
    evidence=("eta_sq", "epsilon_sq", "rank", "best", "best_epsilon_sq", "n", "groups", "breakdowns"),
    thresholds={"material_epsilon_sq": 0.06},
    wording={
        "main": {
            "en": "{by} is the main driver of {measure}: it explains {effect_pct} of its variation "
            "(epsilon squared, the largest of {breakdowns} breakdowns)",
            "ko": "{by}이(가) {measure}의 주요 동인: 변동의 {effect_pct}를 설명함 "
            "(엡실론 제곱, {breakdowns}개 구분 중 최대)",
        },
        "material": {
            "en": "{by} explains a material {effect_pct} of the variation in {measure} (epsilon squared; {best_note})",
            "ko": "{by}이(가) {measure} 변동의 {effect_pct}를 설명함 (엡실론 제곱; {best_note_ko})",
        },
        "weak": {
            "en": "{by} explains little of the variation in {measure}: {effect_pct} (epsilon squared)",
            "ko": "{by}은(는) {measure}의 변동을 거의 설명하지 못함: {effect_pct} (엡실론 제곱)",
        },
    },
)

CONCENTRATION = ClaimKind(
    name="concentration",
    verdicts=("dominates", "concentrated", "moderate", "spread_evenly"),
    test="share of the largest group and the Herfindahl-Hirschman index (HHI) of the group totals",
    inputs=("grp", "v"),
    evidence=("top", "top_share", "bottom_share", "hhi", "groups", "tied"),
    thresholds={
        "dominates_share": 50.0,
        "dominates_fair_ratio": 1.5,
        "concentrated_hhi": 2500.0,
        "concentrated_hhi_normalised": 0.15,
        "even_top_ratio": 1.5,
        "even_bottom_ratio": 0.5,
        "even_hhi_normalised": 0.05,
    },
    wording={
        "dominates": {
            "en": "{top} dominates {measure} by {by}: {top_share} of the total (HHI {hhi}, {groups} groups)",
            "ko": "{top}이(가) {by}별 {measure}을(를) 지배함: 전체의 {top_share} (HHI {hhi}, {groups}개 그룹)",
        },
        "concentrated": {
            "en": "{measure} is concentrated in a few {by} groups: HHI {hhi}, the largest ({top}) holds {top_share}",
            "ko": "{measure}이(가) 소수의 {by} 그룹에 집중됨: HHI {hhi}, 최대 그룹({top}) {top_share}",
        },
        "moderate": {
            "en": "{measure} is moderately concentrated across the {groups} {by} groups: the largest ({top}) "
            "holds {top_share} (HHI {hhi})",
            "ko": "{measure}은(는) {groups}개 {by} 그룹에 중간 정도로 분포: 최대 그룹({top}) {top_share} (HHI {hhi})",
        },
        "spread_evenly": {
            "en": "{measure} is spread evenly across the {groups} {by} groups: from {bottom_share} to {top_share} "
            "each (HHI {hhi})",
            "ko": "{measure}이(가) {groups}개 {by} 그룹에 고르게 분포: 그룹별 {bottom_share}~{top_share} (HHI {hhi})",
        },
    },
)

_CORRELATION_EN = "{strength} {direction} correlation between {x} and {y}: r = {r} (Spearman rho {rho}, n = {n})"
_CORRELATION_KO = "{x}와(과) {y}의 {strength_ko} {direction_ko} 상관: r = {r} (Spearman rho {rho}, n = {n})"

CORRELATION = ClaimKind(
    name="correlation",
    verdicts=(
        "strong_positive",
        "moderate_positive",
        "weak_positive",
        "strong_negative",
        "moderate_negative",
        "weak_negative",
        "negligible",
        "driven_by_extremes",
    ),
    test="Pearson r with Spearman rho beside it; r again without the influential points: Cook's distance (simple "
    "OLS of y on x) above 4/n, or x or y beyond 3 IQR from the quartiles",
    inputs=("x", "y"),
    evidence=("r", "rho", "n", "r_without", "removed"),
    thresholds={
        "strong_r": 0.7,
        "moderate_r": 0.4,
        "weak_r": 0.2,
        "extremes_delta_r": 0.2,
        "cooks_factor": 4.0,
        "far_iqr_factor": 3.0,
        "max_removed_share": 1.0,
        "min_removed": 3,
    },
    wording={
        **{
            verdict: {"en": _CORRELATION_EN, "ko": _CORRELATION_KO}
            for verdict in (
                "strong_positive",
                "moderate_positive",
                "weak_positive",
                "strong_negative",
                "moderate_negative",
                "weak_negative",
            )
        },
        "negligible": {
            "en": "no meaningful correlation between {x} and {y}: r = {r} (Spearman rho {rho}, n = {n})",
            "ko": "{x}와(과) {y} 사이에 의미 있는 상관 없음: r = {r} (Spearman rho {rho}, n = {n})",
        },
        "driven_by_extremes": {
            "en": "the correlation between {x} and {y} is driven by a few extreme values: r = {r} with all {n} "
            "points, {r_without} without the {removed} most influential",
            "ko": "{x}와(과) {y}의 상관은 소수의 극단값 때문: 전체 {n}개에서 r = {r}, "
            "영향이 큰 {removed}개를 빼면 {r_without}",
        },
    },
)

OUTLIER = ClaimKind(
    name="outlier",
    verdicts=("extreme_values", "no_extreme_values"),
    test="values beyond the IQR fences (Q1 - 1.5 IQR, Q3 + 1.5 IQR; linear quantiles) and how far they move the mean",
    inputs=("v",),
    evidence=("outliers", "share", "mean", "mean_without", "sd_without", "shift"),
    thresholds={"iqr_factor": 1.5, "mean_shift": 10.0},
    wording={
        "extreme_values": {
            "en": "{outliers} extreme values of {measure} ({share} of the values) pull its mean to {mean}; "
            "without them it is {mean_without}",
            "ko": "{measure}의 극단값 {outliers}개(전체의 {share})가 평균을 {mean}(으)로 끌어당김; "
            "이들을 빼면 {mean_without}",
        },
        "no_extreme_values": {
            "en": "no extreme values distort the mean of {measure}: {mean}, or {mean_without} without the "
            "{outliers} values beyond the IQR fences",
            "ko": "{measure}의 평균을 왜곡하는 극단값 없음: 평균 {mean}, "
            "IQR 경계 밖 {outliers}개를 빼면 {mean_without}",
        },
    },
)

SENTINEL = ClaimKind(
    name="sentinel",
    verdicts=("sentinel_code", "no_sentinel"),
    test="a code such as 99999 or -1 repeated far outside the other values (the profile's sentinel_values rule)",
    inputs=("v",),
    evidence=("code", "count"),
    thresholds={
        "min_count": 2,
        "min_count_positive": 1,
        "far_iqr_factor": 3.0,
        "far_p99_ratio": 10.0,
        "min_distinct_rest": 3,
    },  # fmt: skip
    wording={
        "sentinel_code": {
            "en": "{code_text} in {measure} is a code, not a value: it appears in {count} rows and is left out",
            "ko": "{measure}의 {code_text}은(는) 값이 아닌 코드: {count}개 행에 있으며 제외함",
        },
        "no_sentinel": {
            "en": "{measure} has no sentinel code such as 99999 or -1",
            "ko": "{measure}에는 99999나 -1 같은 코드 값이 없음",
        },
    },
)

COMPARISON = ClaimKind(
    name="comparison",
    verdicts=("higher", "lower", "within_noise"),
    test="Welch's t test of the two groups' means with its 95% interval of the difference",
    inputs=("grp", "v"),
    summary=("grp", "n", "mean", "var"),
    evidence=("diff", "ci_low", "ci_high", "p_value", "mean_a", "mean_b", "n_a", "n_b"),
    thresholds={"confidence": 95.0, "min_group_n": 2},
    wording={
        "higher": {
            "en": "{a} is higher than {b}: by {diff} on average (95% interval {ci_low} to {ci_high}, p {p_text})",
            "ko": "{a}이(가) {b}보다 평균 {diff} 높음 (95% 구간 {ci_low}~{ci_high}, p {p_text})",
        },
        "lower": {
            "en": "{a} is lower than {b}: by {abs_diff} on average (95% interval {ci_low} to {ci_high}, p {p_text})",
            "ko": "{a}이(가) {b}보다 평균 {abs_diff} 낮음 (95% 구간 {ci_low}~{ci_high}, p {p_text})",
        },
        "within_noise": {
            "en": "{a} and {b} differ by {diff} on average, within noise (95% interval {ci_low} to {ci_high})",
            "ko": "{a}와(과) {b}의 평균 차이 {diff}는 오차 범위 안 (95% 구간 {ci_low}~{ci_high})",
        },
    },
)

KINDS: dict[str, ClaimKind] = {
    kind.name: kind for kind in (TREND, DRIVER, CONCENTRATION, CORRELATION, OUTLIER, SENTINEL, COMPARISON)
}

#: How evidence figures print: key -> (unit, decimals) for report.formatting.format_value; "measure" means the
#: claim's ``params.unit`` (the measure's own unit, e.g. USD). Keys not listed print with 2 decimals.
EVIDENCE_FORMAT: dict[str, tuple[str | None, int | None]] = {
    "n": ("count", None),
    "groups": ("count", None),
    "rank": ("count", None),
    "breakdowns": ("count", None),
    "outliers": ("count", None),
    "tied": ("count", None),
    "removed": ("count", None),
    "count": ("count", None),
    "n_a": ("count", None),
    "n_b": ("count", None),
    "cv": ("%", None),
    "largest_swing": ("%", None),
    "top_share": ("%", None),
    "bottom_share": ("%", None),
    "share": ("%", None),
    "shift": ("%", None),
    "hhi": ("count", None),
    "p_value": (None, 3),
    "tau": (None, 2),
    "r": (None, 2),
    "rho": (None, 2),
    "r_without": (None, 2),
    "eta_sq": (None, 3),
    "epsilon_sq": (None, 3),
    "best_epsilon_sq": (None, 3),
    "slope": ("measure", None),
    "mean": ("measure", None),
    "mean_without": ("measure", None),
    "sd_without": ("measure", None),
    "diff": ("measure", None),
    "ci_low": ("measure", None),
    "ci_high": ("measure", None),
    "mean_a": ("measure", None),
    "mean_b": ("measure", None),
}


def kind_of(name: str) -> ClaimKind:
    """The claim kind called ``name``.

    Raises:
        ValueError: Unknown kind; the message lists the kinds.
    """
    kind = KINDS.get(str(name))
    if kind is None:
        raise ValueError(f"unknown claim kind {name!r}; use one of: {', '.join(KINDS)}")
    return kind


def threshold(kind: str, name: str) -> float:
    """One threshold of the table (a KeyError names a typo at once)."""
    return float(KINDS[kind].thresholds[name])
