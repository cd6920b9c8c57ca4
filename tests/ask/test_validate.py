"""Answers are checked in code: citations must be sent ids, numbers must come from cited fragments or verified calcs."""

from __future__ import annotations

from insightloom.ask.fragments import KnowledgeFragment
from insightloom.ask.validate import check_answer, cited_ids, render_answer

REVENUE = KnowledgeFragment(
    "F1",
    "Total revenue is 1,234,567 KRW [calc:total_revenue].",
    "job-a",
    "results",
    "Revenue",
    ("total_revenue",),
    {"total_revenue": "1,234,567 KRW"},
)
WEST = KnowledgeFragment(
    "F2",
    "West holds 45.2% [calc:west_share] of revenue.",
    "job-a",
    "results",
    "Regions",
    ("west_share",),
    {"west_share": "45.2%"},
)
SENT = [REVENUE, WEST]
VERIFIED = {"total_revenue": "1,234,567 KRW", "west_share": "45.2%"}


def test_a_copied_number_with_its_citation_passes() -> None:
    assert check_answer("Total revenue was 1,234,567 KRW [F1].", SENT, VERIFIED) == []
    assert (
        check_answer("West holds 45.2% of revenue [F2] and total revenue is 1,234,567 KRW [F1].", SENT, VERIFIED) == []
    )


def test_a_citation_that_was_not_sent_is_rejected() -> None:
    problems = check_answer("Total revenue was 1,234,567 KRW [F99].", SENT, VERIFIED)
    assert any("[F99]" in p and "not a fragment you were given" in p for p in problems)


def test_a_malformed_citation_is_named() -> None:
    problems = check_answer("West leads [f2].", SENT, VERIFIED)
    assert any("[f2]" in p for p in problems)


def test_a_typed_number_in_no_fragment_is_rejected() -> None:
    problems = check_answer("Total revenue was 1,300,000 KRW [F1].", SENT, VERIFIED)
    assert problems and "1,300,000" in problems[0]
    # rounding is typing a new number too: the report prints 45.2%, not 45%
    assert check_answer("West holds 45% [F2].", SENT, VERIFIED)


def test_a_number_from_a_fragment_the_answer_does_not_cite_is_rejected() -> None:
    problems = check_answer("West holds 45.2% of revenue [F1].", SENT, VERIFIED)
    assert any("45.2" in p for p in problems)


def test_verified_references_pass_and_print_like_the_report() -> None:
    answer = "Total revenue was {{calc:total_revenue}}."
    assert check_answer(answer, SENT, VERIFIED) == []
    assert render_answer(answer, VERIFIED, {"total_revenue": "F1"}) == "Total revenue was 1,234,567 KRW [F1]."


def test_a_reference_to_an_unverified_calculation_is_rejected() -> None:
    problems = check_answer("The margin was {{calc:margin_share}} [F1].", SENT, VERIFIED)
    assert any("margin_share" in p and "not a verified calculation" in p for p in problems)


def test_years_dates_and_fragment_tags_are_not_claims() -> None:
    answer = "In 2024 (since 2024-03-01) West holds 45.2% [calc:west_share] [F2]."
    assert check_answer(answer, SENT, VERIFIED) == []
    assert render_answer(answer, VERIFIED, {}) == "In 2024 (since 2024-03-01) West holds 45.2% [F2]."
    assert cited_ids("a [F2] b [F1] c [F2]") == ["F2", "F1"]


CORR = KnowledgeFragment(
    "F3",
    "Score and tenure correlate at −0.23 [calc:corr_r] over 12 [calc:corr_n] trainees, a 3.2pp gap.",
    "job-a",
    "results",
    "Correlation",
    ("corr_r", "corr_n"),
    {"corr_r": "−0.23", "corr_n": "12"},
)


def test_a_number_is_compared_with_its_sign() -> None:
    sent = [*SENT, CORR]
    assert check_answer("They correlate at -0.23 [F3].", sent, VERIFIED) == []  # any minus sign prints as one
    problems = check_answer("They correlate at 0.23 [F3].", sent, VERIFIED)
    assert problems and "0.23" in problems[0]
    assert check_answer("West holds -45.2% [F2].", sent, VERIFIED)


def test_a_number_is_compared_with_its_unit() -> None:
    sent = [*SENT, CORR]
    assert check_answer("Over 12 trainees [F3], a 3.2pp gap [F3].", sent, VERIFIED) == []
    problems = check_answer("12% of trainees [F3].", sent, VERIFIED)
    assert problems and "12%" in problems[0]
    assert check_answer("A 3.2% gap [F3].", sent, VERIFIED)  # percentage points are not percent
    assert check_answer("West holds 45.2 of revenue [F2].", sent, VERIFIED)  # the share without its percent sign
    assert check_answer("West holds 45.2 percent of revenue [F2].", sent, VERIFIED) == []
    # A currency word does not change what the digits claim.
    assert check_answer("Total revenue was 1,234,567 [F1].", sent, VERIFIED) == []
