"""``record_verification``: how the Validator's own script records what it re-computed.

Calculations without a SQL check can only be verified by the Validator agent writing a script that re-computes them
independently. The script hands its results to this helper, which applies the same comparison rule as the checks
(through :func:`insightloom.validation.record_llm_verification`) and updates citations.json. The helper never
changes a tracked value: a result that disagrees marks the calculation ``needs_review``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from insightloom.analysis_utils.calculations import to_python_type
from insightloom.analysis_utils.jobdir import job_dir

logger = logging.getLogger(__name__)


def record_verification(results: Mapping[str, Any]) -> str:
    """Record independently re-computed values of unchecked calculations.

    Args:
        results: Calculation id -> the value the script re-computed (numpy/pandas scalars are fine).

    Returns:
        The updated validation summary (print it: it is what the Validator reports), including any id that was not
        recorded and why (unknown, has a check, or not selected by the tiers).

    Raises:
        ValueError: ``results`` is not a mapping.
    """
    from insightloom.validation import record_llm_verification  # DuckDB only loads when a script verifies

    if not isinstance(results, Mapping):
        raise ValueError("record_verification: pass a dict {calculation_id: re-computed value}")
    clean = {str(calc_id): to_python_type(value) for calc_id, value in results.items()}
    summary = record_llm_verification(job_dir(), clean)
    logger.debug("recorded %d script verification(s)", len(clean))
    return summary.to_text()
