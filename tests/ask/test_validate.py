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
