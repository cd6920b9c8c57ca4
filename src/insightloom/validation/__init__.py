"""Validation: re-compute tracked calculations independently and write citations.json.

Public API:
    validate_job(job_dir) -> ValidationSummary
    record_llm_verification(job_dir, results) -> ValidationSummary
    select_for_llm(calcs) -> list[str]   (also as ``validation.tiers.select_for_llm``)
    values_match(tracked, recomputed) -> Comparison
    blocking_reviews(job_dir) -> (cited needs_review ids, uncited needs_review ids)
    run_script_checks(job_dir, records) -> (verified count, failures)   (the checks a script ran at its end)
"""

from insightloom.validation.blocking import blocking_reviews
from insightloom.validation.compare import Comparison, values_match
from insightloom.validation.core import (
    NEEDS_REVIEW,
    UNVERIFIED,
    VERIFIED,
    ValidationSummary,
    record_llm_verification,
    validate_job,
)
from insightloom.validation.script_checks import CheckFailure, run_script_checks
from insightloom.validation.tiers import select_for_llm

__all__ = [
    "NEEDS_REVIEW",
    "UNVERIFIED",
    "VERIFIED",
    "CheckFailure",
    "Comparison",
    "ValidationSummary",
    "blocking_reviews",
    "record_llm_verification",
    "run_script_checks",
    "select_for_llm",
    "validate_job",
    "values_match",
]
