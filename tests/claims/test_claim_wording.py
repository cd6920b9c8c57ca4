"""What a claim prints, the free-text claim phrases, contradictions and the summary's lead rule."""

from __future__ import annotations

from typing import Any

import pytest

from insightloom.claims.contradictions import contradictions
from insightloom.claims.lead import lead_order
from insightloom.claims.phrases import find_claim_phrases, phrase_kind
from insightloom.claims.table import KINDS
from insightloom.claims.wording import claim_text


def claim(claim_id: str, kind: str, value: str, evidence: dict[str, Any] | None = None, **params: Any) -> dict:
    return {
        "id": claim_id,
        "kind": "claim",
        "claim_kind": kind,
        "value": value,
        "evidence": evidence or {},
        "test": {"name": kind, "sql": "SELECT 1 FROM data", "params": params},
    }


VOLATILE = claim(
    "claim_trend",
    "trend",
    "volatile",
    {"n": 6, "tau": 0.2, "p_value": 0.57, "slope": 812.4, "cv": 61.3, "largest_swing": 83.2},
    measure="Revenue",
    by="Date",
    period="month",
    agg="sum",
    unit="USD",
)


def test_the_contract_example_sentence() -> None:
    assert claim_text(VOLATILE, "en") == (
        "no clear trend: the monthly totals swing by 83.2% of their mean (CV 61.3%, Kendall tau 0.20, p = 0.570)"
    )
    assert claim_text(VOLATILE, "ko").startswith("뚜렷한 추세 없음: 월별 합계")


def test_numbers_follow_the_renderer_rule() -> None:
    rising = dict(VOLATILE, value="rising", evidence={**VOLATILE["evidence"], "p_value": 0.0001})
    assert (
        claim_text(rising)
        == "rising: the monthly totals grow by 812 USD per month (Kendall tau 0.20, p < 0.001, 6 periods)"
    )
    figures = {"eta_sq": 0.29, "epsilon_sq": 0.2834, "rank": 1, "best": "Region", "best_epsilon_sq": 0.2834}
    driver = claim("d", "driver", "main", {**figures, "n": 1200, "groups": 5, "breakdowns": 3}, measure="Revenue",
                   by="Region")  # fmt: skip
    assert claim_text(driver) == (
        "Region is the main driver of Revenue: it explains 28.3% of its variation (epsilon squared, the largest of 3 "
        "breakdowns)"
    )
    other = claim("c", "driver", "material", {**figures, "epsilon_sq": 0.081, "rank": 2}, measure="Revenue",
                  by="Channel")  # fmt: skip
    assert claim_text(other) == (
        "Channel explains a material 8.1% of the variation in Revenue (epsilon squared; Region explains the most, "
        "28.3%)"
    )
    sentinel = claim("s", "sentinel", "sentinel_code", {"code": 99999, "count": 12}, measure="Income")
    assert claim_text(sentinel) == "99,999 in Income is a code, not a value: it appears in 12 rows and is left out"


def test_correlation_wording_carries_strength_and_direction() -> None:
    record = claim("c", "correlation", "moderate_negative", {"r": -0.52, "rho": -0.48, "n": 90, "r_without": -0.5,
                                                            "removed": 2}, x="Price", y="Units")  # fmt: skip
    assert (
        claim_text(record)
        == "moderate negative correlation between Price and Units: r = -0.52 (Spearman rho -0.48, n = 90)"
    )
    assert "음의 상관" in claim_text(record, "ko")


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_verdict_renders_in_both_languages_without_placeholders(kind: str) -> None:
    evidence = {key: 1 for key in KINDS[kind].evidence}
    for verdict in KINDS[kind].verdicts:
        for language in ("en", "ko"):
            text = claim_text(claim("x", kind, verdict, evidence, measure="M", by="B"), language)
            assert "{" not in text and "?" not in text and text


def test_an_unknown_verdict_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="rising, falling"):
        claim_text(dict(VOLATILE, value="skyrocketing"))


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("Revenue is falling sharply.", ["trend"]),
        ("Revenue is rising over Date.", ["trend"]),
        ("Region is the main driver of Revenue.", ["driver"]),
        ("Catering dominates; the rest is spread fairly evenly.", ["concentration", "concentration"]),
        ("Units and Revenue are strongly correlated.", ["correlation"]),
        ("a strong positive correlation", ["correlation"]),
        ("The difference is statistically significant.", ["comparison"]),
        ("매출이 증가 추세를 보입니다.", ["trend"]),
        ("지역이 매출의 주요 동인입니다.", ["driver"]),
        ("매출이 고르게 분포합니다.", ["concentration"]),
        ("두 변수는 강한 상관을 보입니다.", ["correlation"]),
        ("차이가 유의미합니다.", ["comparison"]),
        ("Revenue rose from 6,378 USD to 15,623 USD (145.0%).", []),  # a change, not a trend
        ("유의사항: 결측치가 있습니다.", []),
        ("The evenness index and the dominance of nothing.", []),
    ],
)
def test_claim_phrases(text: str, kinds: list[str]) -> None:
    assert [phrase_kind(match) for match in find_claim_phrases(text)] == kinds


def test_phrase_positions_point_into_the_text() -> None:
    text = "Overall, Revenue is rising."
    (match,) = find_claim_phrases(text)
    assert text[match.start() : match.end()] == "is rising" == match.group(0)


def test_opposite_verdicts_on_the_same_subject_contradict() -> None:
    rising = claim("t1", "trend", "rising", measure="Revenue", by="Date")
    flat = claim("t2", "trend", "no_clear_trend", measure="Revenue", by="Date")
    other = claim("t3", "trend", "falling", measure="Units", by="Date")
    found = contradictions([rising, flat, other])
    assert [(a, b) for a, b, _ in found] == [("t1", "t2")]
    assert "opposite verdicts" in found[0][2]


def test_main_driver_and_spread_evenly_contradict() -> None:
    main = claim("d", "driver", "main", measure="Revenue", by="Region")
    even = claim("c", "concentration", "spread_evenly", measure="Revenue", by="Region")
    other = claim("c2", "concentration", "spread_evenly", measure="Revenue", by="Channel")
    found = contradictions([main, even, other, {"id": "n", "value": 3}])
    assert [(a, b) for a, b, _ in found] == [("d", "c")]
    assert "Region cannot be the main driver" in found[0][2]


def test_mirrored_comparisons_agree_and_opposite_ones_contradict() -> None:
    a_higher = claim("x", "comparison", "higher", measure="Revenue", by="Channel", a="Web", b="Store")
    b_lower = claim("y", "comparison", "lower", measure="Revenue", by="Channel", a="Store", b="Web")
    b_higher = claim("z", "comparison", "higher", measure="Revenue", by="Channel", a="Store", b="Web")
    assert contradictions([a_higher, b_lower]) == []
    assert [(a, b) for a, b, _ in contradictions([a_higher, b_higher])] == [("x", "z")]


def test_lead_order_strongest_driver_then_trend_then_correlation() -> None:
    records = [
        claim("corr", "correlation", "strong_positive", {"r": 0.9}),
        claim("trend", "trend", "falling", {"tau": -0.6}),
        claim("region", "driver", "material", {"epsilon_sq": 0.08, "eta_sq": 0.5}),
        claim("channel", "driver", "main", {"epsilon_sq": 0.31, "eta_sq": 0.32}),
        claim("weak", "driver", "weak", {"epsilon_sq": 0.01}),
        claim("flat", "trend", "volatile", {"tau": 0.1}),
        claim("mild", "correlation", "moderate_positive", {"r": 0.5}),
    ]
    assert lead_order(records) == ["channel", "region", "trend", "corr"]
    assert lead_order([claim("flat", "trend", "no_clear_trend")]) == []
