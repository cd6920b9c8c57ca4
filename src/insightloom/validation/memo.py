"""What the host already re-computed, so a job's later validations re-run only what changed.

A job is validated by the Validator's tool and once more before it is called completed (``workflow/recheck.py``).
Between the two, scripts may rewrite the records, but a re-computation depends only on the check (or the claim's test,
SQL and parameters) and the data it reads. So its result is kept under those, with every view's SHA-256 as
:func:`~insightloom.validation.jobfiles.load_views` read it: a changed record or a changed file is re-computed, an
unchanged one is not. The memo lives in the host's memory only; a script's process has its own, and nothing on disk
can put a result in it.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any

from insightloom.validation.jobfiles import CachedTable

#: Results kept (a check's value or a claim's verdict, each small); the oldest are dropped first.
MEMO_ENTRIES = 20_000
#: A check whose value prints longer than this (a string_agg of a column, say) is not kept: it would hold memory.
MEMO_VALUE_CHARS = 4096


def views_key(views: Mapping[str, CachedTable]) -> tuple[tuple[str, str], ...]:
    """The data every re-computation reads: each view name with its file's SHA-256."""
    return tuple(sorted((name, table.sha256) for name, table in views.items()))


def params_key(params: Mapping[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, default=str)


class RecomputeMemo:
    """A bounded map from what a re-computation read to its result."""

    def __init__(self, limit: int = MEMO_ENTRIES) -> None:
        self._limit = limit
        self._results: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()  # `serve` validates several jobs at once

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            result = self._results.get(key)
            if result is not None:
                self._results.move_to_end(key)
            return result

    def put(self, key: Hashable, result: Any) -> None:
        with self._lock:
            self._results[key] = result
            self._results.move_to_end(key)
            while len(self._results) > self._limit:
                self._results.popitem(last=False)

    def __len__(self) -> int:
        return len(self._results)


#: The host's memo (``validate_job`` uses it unless a test passes its own connection factory).
HOST_MEMO = RecomputeMemo()
