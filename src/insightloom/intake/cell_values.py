"""The present values of one text column, as coercion reads them: every cell, or each distinct value once.

Most columns of a large table repeat a few values (dates, categories, small counts), so coercion classifies the
distinct values, each once with the number of cells holding it, and maps the typed values back to the rows. Every rule
reads shares through ``count``/``share`` (weighted by the counts), samples through ``head`` (the column's first cells
in row order) and otherwise only asks all/any/max questions of the values, so both forms decide alike; a test holds
them to it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

#: How many of a column's first cells are looked at to choose the distinct-values form.
DISTINCT_PROBE = 16_384
#: The distinct-values form is used when at most this share of the probed cells are distinct.
DISTINCT_PROBE_SHARE = 0.5
#: The length of ``head()``: the sample the cheap pre-checks read.
HEAD = 500


def arrow_text(text: pd.Series) -> pa.ChunkedArray | None:
    """The column's Arrow strings (no copy), or None when it is not Arrow-backed text."""
    if not (isinstance(text.dtype, pd.StringDtype) and text.dtype.storage == "pyarrow"):
        return None
    return pa.chunked_array(pa.array(text.array))


def _few_distinct(values: pa.ChunkedArray) -> bool:
    probe = values.slice(0, DISTINCT_PROBE)
    present = len(probe) - probe.null_count
    return present > 0 and pc.count_distinct(probe).as_py() <= present * DISTINCT_PROBE_SHARE


class CellValues:
    """The present values of a column: every present cell, or each distinct value once with its count.

    Attributes:
        values: The values, with no missing entry. In the distinct form each value appears once, in the order of
            its first cell, under a fresh RangeIndex; otherwise these are the cells under the column's index.
        counts: Per value, how many cells hold it (distinct form), else None (one cell each).
        codes: Per row of the column, the position of its value in ``values``, -1 for a missing cell (distinct form),
            else None.
        index: The column's index, for ``expand``.
        total: How many cells hold a value.
    """

    def __init__(
        self,
        values: pd.Series,
        *,
        index: pd.Index | None = None,
        counts: np.ndarray | None = None,
        codes: np.ndarray | None = None,
    ) -> None:
        self.values = values
        self.index = values.index if index is None else index
        self.counts = counts
        self.codes = codes
        self.total = len(values) if counts is None else int(counts.sum())
        self._head: pd.Series | None = None

    @classmethod
    def of(cls, text: pd.Series, *, distinct: bool | None = None) -> CellValues:
        """The present values of ``text`` (missing cells are NA).

        Args:
            text: The column, as text.
            distinct: Force the distinct form (True) or every cell (False); None chooses from the first cells.
        """
        arrow = arrow_text(text)
        if distinct is None:
            distinct = arrow is not None and _few_distinct(arrow)
        if not distinct:
            return cls(text.dropna(), index=text.index)
        if arrow is None:
            arrow = pa.chunked_array([pa.array(text.astype(object).where(text.notna(), None), type=pa.large_string())])
        encoded = pc.dictionary_encode(arrow.combine_chunks())  # one array, so one dictionary
        codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
        counts = np.bincount(codes + 1, minlength=len(encoded.dictionary) + 1)[1:]  # slot 0 counts missing cells
        values = pd.Series(encoded.dictionary, dtype=text.dtype, name=text.name)  # named as the cells are
        return cls(values, index=text.index, counts=counts, codes=codes)

    @property
    def distinct(self) -> bool:
        """Whether these are the distinct values (with counts), not every cell."""
        return self.codes is not None

    def count(self, mask: pd.Series) -> int:
        """How many cells hold a value where ``mask`` (aligned with ``values``) is true."""
        flags = mask.to_numpy(dtype=bool, na_value=False)
        return int(flags.sum()) if self.counts is None else int(self.counts[flags].sum())

    def share(self, mask: pd.Series) -> float:
        """The share of cells holding a value where ``mask`` is true (the mean of the mask over the cells)."""
        return self.count(mask) / self.total

    def head(self) -> pd.Series:
        """The first ``HEAD`` present cells in row order: the sample of the cheap pre-checks."""
        if self._head is None:
            if self.codes is None:
                self._head = self.values.head(HEAD)
            else:
                rows = np.flatnonzero(self.codes >= 0)[:HEAD]
                self._head = self.values.take(self.codes[rows]).reset_index(drop=True)
        return self._head

    def where(self, mask: pd.Series) -> CellValues:
        """The values where ``mask`` is true, with their counts (for counting; it cannot ``expand``)."""
        keep = mask.to_numpy(dtype=bool, na_value=False)
        if self.counts is None:
            return CellValues(self.values[keep])
        return CellValues(self.values[keep].reset_index(drop=True), counts=self.counts[keep])

    def drop(self, mask: pd.Series) -> CellValues:
        """These values without those where ``mask`` is true: their cells become missing."""
        gone = mask.to_numpy(dtype=bool, na_value=False)
        if not gone.any():
            return self
        if self.codes is None or self.counts is None:
            return CellValues(self.values[~gone], index=self.index)
        lookup = np.full(len(self.values) + 1, -1, dtype=self.codes.dtype)  # the last slot maps a missing cell
        lookup[:-1][~gone] = np.arange(int((~gone).sum()))
        return CellValues(
            self.values[~gone].reset_index(drop=True),
            index=self.index,
            counts=self.counts[~gone],
            codes=lookup[self.codes],
        )

    def expand(self, typed: pd.Series) -> pd.Series:
        """One typed value per row from one per entry of ``values`` (aligned with it); missing cells are NA."""
        if self.codes is None:
            return typed.reindex(self.index)
        taken = pd.api.extensions.take(typed.to_numpy(), self.codes, allow_fill=True)
        return pd.Series(taken, index=self.index, name=typed.name)
