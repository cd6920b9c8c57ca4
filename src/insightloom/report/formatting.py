"""The one number-formatting rule, shared by the renderer and the audit.

Rounding differences between the report and the check once triggered needless audit retries, so a printed number is
correct exactly when it equals what :func:`format_value` returns for the cited calculation:

- ``%``: 1 decimal, the sign glued on ("45.2%"); values are stored in percent (45.2 means 45.2%);
- a currency code (three upper-case letters, ISO 4217 style) and ``count``: 0 decimals;
- ``ratio``, no unit, anything else: 2 decimals;
- thousands separators and Python's ``format`` rounding; ``decimals`` overrides the default;
- a currency or other unit text follows the number after a space ("16,431,923 KRW"); ``count`` and ``ratio`` are
  printed bare.
"""

from __future__ import annotations

import decimal
import logging
import math
import re

logger = logging.getLogger(__name__)

_CURRENCY_RE = re.compile(r"^[A-Z]{3}$")
_BARE_UNITS = {"count", "ratio"}


def is_currency(unit: str | None) -> bool:
    """Whether the unit looks like an ISO 4217 currency code (KRW, USD...)."""
    return unit is not None and bool(_CURRENCY_RE.match(unit.strip()))


def default_decimals(unit: str | None) -> int:
    """Decimals the rule prints for a unit when the calculation does not say."""
    text = (unit or "").strip()
    if text == "%":
        return 1
    if text.lower() == "count" or is_currency(text):
        return 0
    return 2


def _number_text(number: float, decimals: int) -> str:
    text = f"{number:,.{decimals}f}"
    # "-0.00" reads as a negative value that does not exist; print the zero plainly.
    if text.startswith("-") and not any(ch in "123456789" for ch in text):
        text = text[1:]
    return text


def format_value(value: object, unit: str | None, decimals: int | None = None) -> str:
    """Format a tracked value the way the report prints it.

    Args:
        value: The calculation's value; strings (and other non-numbers) are returned as they are.
        unit: ``%``, ``count``, ``ratio``, a currency code, free text, or None.
        decimals: Overrides the unit's default number of decimals.

    Returns:
        The printed form, e.g. "45.2%", "16,431,923 KRW", "836", "0.51".
    """
    if isinstance(value, str):
        return value
    if value is None:
        return "n/a"
    if isinstance(value, bool) or not isinstance(value, int | float | decimal.Decimal):
        return str(value)
    number = float(value)
    if not math.isfinite(number):
        return "n/a"
    unit_text = (unit or "").strip()
    places = default_decimals(unit_text) if decimals is None else max(int(decimals), 0)
    text = _number_text(number, places)
    if unit_text == "%":
        return f"{text}%"
    if not unit_text or unit_text.lower() in _BARE_UNITS:
        return text
    return f"{text} {unit_text}"


def cited_text(value: object, unit: str | None, decimals: int | None, marker: str) -> str:
    """The formatted value followed by its citation marker: "45.2% [3]"."""
    return f"{format_value(value, unit, decimals)} {marker}"
