"""Which unchecked calculations get the costly LLM verification.

A calculation with a SQL check is verified deterministically. One without a check can only be verified by the
Validator agent writing its own script, which costs tokens, so DESIGN caps how many it attempts by the size of the
job (the count is over ALL tracked calculations, checked or not):

- more than 50: every high plus the first 10 medium;
- more than 20: every high plus the first 15 medium;
- otherwise: every high, every medium and the first 5 low.

"First" means earliest tracked. The rest stay ``unverified`` and cannot be cited.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

logger = logging.getLogger(__name__)


def _quota(total: int) -> dict[str, int | None]:
    # None means "all of them".
    if total > 50:
        return {"high": None, "medium": 10, "low": 0}
    if total > 20:
        return {"high": None, "medium": 15, "low": 0}
    return {"high": None, "medium": None, "low": 5}


def tier_rule(total: int) -> str:
    """The tier that applies to a job of ``total`` tracked calculations, in words (for the Validator's task)."""
    if total > 50:
        return f"{total} tracked, more than 50: all high + the first 10 medium"
    if total > 20:
        return f"{total} tracked, more than 20: all high + the first 15 medium"
    return f"{total} tracked, 20 or fewer: all high, all medium + the first 5 low"


def has_check(calc: Mapping[str, Any]) -> bool:
    """Whether the calculation carries a non-blank check: SQL, or ``stat:<test>`` for a claim (re-computed with
    SciPy by :mod:`insightloom.validation.claim_checks`, never sent to LLM verification)."""
    check = calc.get("check")
    return isinstance(check, str) and bool(check.strip())


def select_for_llm(calcs: Sequence[dict[str, Any]]) -> list[str]:
    """The ids of calculations without a check chosen for LLM verification, in tracking order.

    Args:
        calcs: Every tracked calculation, in tracking order (as in calculation_metadata.json).

    Returns:
        The selected ids, earliest tracked first.
    """
    quota = _quota(len(calcs))
    taken = {"high": 0, "medium": 0, "low": 0}
    selected: list[str] = []
    for calc in calcs:
        if has_check(calc) or calc.get("kind") == "claim":  # a claim is re-computed by its test, never by an LLM
            continue
        importance = str(calc.get("importance", "low")).lower()
        if importance not in quota:
            importance = "low"
        limit = quota[importance]
        if limit is None or taken[importance] < limit:
            taken[importance] += 1
            selected.append(str(calc["id"]))
    logger.debug("tiers: %d tracked, %d selected for LLM verification", len(calcs), len(selected))
    return selected
