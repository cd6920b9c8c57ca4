"""Columns of a large table typed and profiled side by side, on threads.

Typing and profiling one column reads no other, and their heavy steps (Arrow kernels, NumPy sorts) release the
GIL, so a table of millions of cells is worked on as many columns at a time as there are cores. A small table
stays on the calling thread, where threads would only add their start-up. Results keep the columns' order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

#: Below this many cells a table is worked on column after column.
MIN_PARALLEL_CELLS = 1_000_000
#: At most this many columns at a time, whatever the cores (each holds a column's copies in memory).
MAX_WORKERS = 4

_In = TypeVar("_In")
_Out = TypeVar("_Out")


def map_columns(work: Callable[[_In], _Out], columns: Sequence[_In], *, cells: int) -> list[_Out]:
    """``[work(c) for c in columns]``, on threads when the table has ``cells`` of at least ``MIN_PARALLEL_CELLS``.

    The first exception a column raises is raised here, as the serial loop would raise it.
    """
    workers = min(len(columns), MAX_WORKERS, os.cpu_count() or 1)
    if cells < MIN_PARALLEL_CELLS or workers < 2:
        return [work(c) for c in columns]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="intake-column") as pool:
        return list(pool.map(work, columns))
