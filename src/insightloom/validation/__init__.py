"""Validation: re-compute tracked calculations independently and write citations.json.

Public API:
    validate_job(job_dir) -> ValidationSummary
    record_llm_verification(job_dir, results) -> ValidationSummary
    select_for_llm(calcs) -> list[str]   (also as ``validation.tiers.select_for_llm``)
    values_match(tracked, recomputed) -> Comparison
"""

from insightloom.validation.compare import Comparison, values_match
from insightloom.validation.core import (
    NEEDS_REVIEW,
    UNVERIFIED,
    VERIFIED,
    ValidationSummary,
    record_llm_verification,
    validate_job,
)
from insightloom.validation.tiers import select_for_llm

__all__ = [
    "NEEDS_REVIEW",
    "UNVERIFIED",
    "VERIFIED",
    "Comparison",
    "ValidationSummary",
    "record_llm_verification",
    "select_for_llm",
    "validate_job",
    "values_match",
]
