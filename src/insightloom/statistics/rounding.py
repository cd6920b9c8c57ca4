"""The one rounding rule: to the requested decimals, half away from zero (2.345 -> 2.35, -2.345 -> -2.35).

Python's ``round`` rounds half to even and works on the binary float (``round(2.675, 2)`` is 2.67); the product
rounds the shortest decimal text of the float instead, as a person reading the value would.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal


def round_half_away(value: float, decimals: int) -> Decimal:
    """``value`` rounded to ``decimals`` places, half away from zero (``ROUND_HALF_UP`` acts on the magnitude).

    Raises:
        ValueError: ``value`` is NaN or infinite, or ``decimals`` is negative.
    """
    if not math.isfinite(value):
        raise ValueError(f"cannot round {value!r}")
    if decimals < 0:
        raise ValueError(f"decimals must be 0 or more, not {decimals}")
    return Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def format_rounded(value: float, decimals: int) -> str:
    """The value rounded half away from zero and printed with exactly ``decimals`` places and thousands commas."""
    rounded = round_half_away(value, decimals)
    if rounded == 0:
        rounded = abs(rounded)  # no "-0.00"
    return f"{rounded:,.{decimals}f}"
