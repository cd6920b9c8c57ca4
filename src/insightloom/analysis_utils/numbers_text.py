"""Short number text for chart ticks and labels: ``3.4B``, ``12.5K``, ``0.85``, never a scientific offset.

Chart text is not a cited number (the report's numbers come from tracked calculations), so it only has to read
well. Three significant digits suit most axes, but close ticks such as 2,010 / 2,012 / 2,014 would all read
``2.01K``; :func:`compact_axis` adds digits until every tick label on the axis differs.
"""

from __future__ import annotations

import math
from typing import Any

_SUFFIXES = ((1e9, "B"), (1e6, "M"), (1e3, "K"))
_MAX_DIGITS = 8


def compact_number(value: float, digits: int = 3) -> str:
    """``value`` with a K/M/B suffix and ``digits`` significant digits (``compact_number(12_500)`` -> ``12.5K``)."""
    number = float(value)
    if not math.isfinite(number):
        return str(number)
    for size, suffix in _SUFFIXES:
        if abs(number) >= size:
            return f"{number / size:.{digits}g}{suffix}"
    return f"{number:.{digits}g}"


def distinct_labels(values: list[float], digits: int = 3) -> list[str]:
    """Compact labels for ``values`` with the fewest significant digits (at least ``digits``) that keep them apart."""
    labels = [compact_number(v, digits) for v in values]
    wanted = len(set(values))
    while len(set(labels)) < wanted and digits < _MAX_DIGITS:
        digits += 1
        labels = [compact_number(v, digits) for v in values]
    return labels


def compact_axis(axis: Any, *, integer: bool = False) -> None:
    """Format a matplotlib axis (``ax.xaxis``/``ax.yaxis``) with compact, mutually distinct tick labels.

    ``integer`` is for whole-number data (counts, rows per group, a histogram's frequencies): ticks then sit on
    whole numbers only, so a count axis never reads ``2.5``.
    """
    from matplotlib.ticker import Formatter, MaxNLocator

    if integer:
        axis.set_major_locator(MaxNLocator(integer=True))

    class _Compact(Formatter):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return compact_number(x)

        def format_ticks(self, values: Any) -> list[str]:
            return distinct_labels([float(v) for v in values])

    axis.set_major_formatter(_Compact())
