"""The Validator's comparison rule, in one place.

DESIGN: a re-computed value and a tracked value match when |Δ| < 0.01 in their stored unit (or, for huge values,
within float64 summation error, 1e-12 relative); strings must match exactly; a number and a numeric string compare
as numbers. The check path and the LLM-verification path both call :func:`values_match`, so the two can never
disagree on what "verified" means.
"""

from __future__ import annotations

import datetime as dt
import decimal
import logging
import math
from dataclasses import dataclass

logger = logging.getLogger(__name__)

TOLERANCE = 0.01
#: Two routes summing 10^15-sized doubles in another order differ in the last bits (0.1 on 1.1e15): still one
#: value. Far below anything a report prints.
FLOAT_RELATIVE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing a tracked value with a re-computed one.

    Attributes:
        match: True when the two values agree under the rule.
        reason: Why they do not agree (empty when they match).
    """

    match: bool
    reason: str = ""


def as_number(value: object) -> float | None:
    """The value as a float when it is a number or a numeric string, else None.

    Thousands separators are accepted in strings ("16,431,923") because a model re-computing a value by hand may
    print it that way; booleans count as 0/1 like in SQL.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float | decimal.Decimal):
        return float(value)
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _as_datetime(value: object) -> dt.datetime | None:
    # Dates are stored as timestamps, so "2025-01-01" and "2025-01-01 00:00:00" name the same instant.
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str) and len(value) >= 10 and value[:4].isdigit() and value[4] == "-":
        try:
            return dt.datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def values_match(tracked: object, recomputed: object) -> Comparison:
    """Compare a tracked value with its independent re-computation.

    Args:
        tracked: The value the Coder tracked (number or string).
        recomputed: The value the check (or the Validator's script) produced.

    Returns:
        A :class:`Comparison`; its reason names both values when they differ.
    """
    if recomputed is None:
        return Comparison(False, "the re-computation returned NULL")
    left, right = as_number(tracked), as_number(recomputed)
    if left is not None and right is not None:
        if math.isnan(left) or math.isnan(right):
            return Comparison(False, f"not a number: tracked {tracked!r}, re-computed {recomputed!r}")
        if math.isinf(left) or math.isinf(right):
            same = left == right
            return Comparison(same, "" if same else f"tracked {tracked!r} != re-computed {recomputed!r}")
        delta = abs(left - right)
        if delta < TOLERANCE or delta <= FLOAT_RELATIVE_TOLERANCE * max(abs(left), abs(right)):
            return Comparison(True)
        return Comparison(False, f"tracked {tracked!r} differs from re-computed {recomputed!r} by {delta:.6g}")
    if isinstance(tracked, str) and isinstance(recomputed, str) and tracked == recomputed:
        return Comparison(True)
    left_dt, right_dt = _as_datetime(tracked), _as_datetime(recomputed)
    if left_dt is not None and right_dt is not None and left_dt == right_dt:
        return Comparison(True)
    return Comparison(False, f"tracked {tracked!r} != re-computed {recomputed!r}")


def json_safe(value: object) -> object:
    """A value that ``json.dump`` accepts and that keeps its meaning (for ``check_value`` in citations.json)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)
