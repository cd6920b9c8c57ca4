"""A claim test's inputs as columns: what ``test.sql`` (or pandas) returned, named after the claim kind's inputs.

Both implementations of the tests (the product's NumPy code and the Validator's SciPy code) read their inputs
through here, so they drop the same rows and group by the same labels. The inputs come in one of two forms:

- **rows**: the kind's ``inputs``, one row per data row (``breakdown, grp, v`` for a driver);
- **summary**: the kind's ``summary``, one row per group (``breakdown, grp, n, mean, m2``), which carries all the
  test needs exactly; a claim over millions of rows then reads a few rows. Rows of one group may repeat: they are
  pooled (counts added, means weighted, sums of squares combined), so a SQL that splits a group still agrees.

The form is told by the number of columns. Values that are not numbers become NaN and are dropped, as are rows with
a NULL label, exactly as ``groupby`` drops them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from insightloom.claims.table import kind_of

#: A float key as large as this prints as digits a float cannot hold exactly, so it is labelled one by one.
_EXACT_INTEGER = 2.0**53


@dataclass(frozen=True)
class Inputs:
    """A claim test's inputs.

    Attributes:
        frame: One column per input, named as the kind's ``inputs`` (or ``summary``), in that order.
        summary: Whether they are the summary form (one row per group).
    """

    frame: pd.DataFrame
    summary: bool = False

    def column(self, name: str) -> pd.Series:
        return self.frame[name]


def _as_frame(rows: Sequence[Sequence[Any]] | pd.DataFrame, width: int) -> pd.DataFrame:
    if isinstance(rows, pd.DataFrame):
        return rows
    data = [tuple(row) if isinstance(row, (list, tuple)) else (row,) for row in rows]
    if not data:
        return pd.DataFrame({index: pd.Series(dtype=object) for index in range(width)})
    return pd.DataFrame.from_records(data)


def input_frame(rows: Sequence[Sequence[Any]] | pd.DataFrame, name: str) -> Inputs:
    """The inputs of the claim test ``name``, in the row or the summary form (told by their width).

    Raises:
        ValueError: Another number of columns (the message names both forms the test takes).
    """
    kind = kind_of(name)
    frame = _as_frame(rows, len(kind.inputs))
    width = frame.shape[1]
    if width == len(kind.inputs):
        return Inputs(frame.set_axis(list(kind.inputs), axis=1), summary=False)
    if kind.summary and width == len(kind.summary):
        return Inputs(frame.set_axis(list(kind.summary), axis=1), summary=True)
    columns = ", ".join(kind.inputs)
    either = f" (or one row per group: {', '.join(kind.summary)})" if kind.summary else ""
    raise ValueError(
        f"the {kind.name} test takes rows of {len(kind.inputs)} column(s) ({columns}){either}, got {width}; "
        f"make the claim's SQL return exactly: {columns}"
    )


def numbers(series: pd.Series) -> np.ndarray:
    """The column as floats; NULL, text that is no number and NaN become NaN."""
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        return np.asarray(series, dtype=float)
    return np.asarray(pd.to_numeric(series, errors="coerce"), dtype=float)


def finite_values(inputs: Inputs, name: str) -> np.ndarray:
    """The finite numbers of one input column, in order."""
    values = numbers(inputs.column(name))
    return values[np.isfinite(values)]


def label(value: Any) -> str | None:
    """A group key as text (SQL and pandas type keys differently); NULL/NaN keys are None, dropped like groupby does."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 3.0 from a float column and 3 from SQL name the same group
    return str(value)


def labels(series: pd.Series) -> pd.Series:
    """:func:`label` of every key, vectorised for float, integer and text columns (None for a missing key)."""
    dtype = series.dtype
    if pd.api.types.is_float_dtype(dtype):
        values = np.asarray(series, dtype=float)
        present = ~np.isnan(values)
        whole = present & np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < _EXACT_INTEGER)
        if (whole == present).all():  # every key a whole number (the usual float key: 3.0 for 3)
            digits = pd.Series(np.where(whole, values, 0).astype(np.int64).astype(str), index=series.index)
            return digits.astype(object).where(present, None)
    elif pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_extension_array_dtype(dtype):
        return series.astype(str).astype(object)
    elif pd.api.types.infer_dtype(series, skipna=True) == "string":
        text = series.astype(object)
        return text.where(text.notna(), None)
    mapped = series.map(label).astype(object)
    return mapped.where(mapped.notna(), None)


def pooled(keys: pd.Series, n: np.ndarray, mean: np.ndarray, m2: np.ndarray) -> pd.DataFrame:
    """Per label: the count ``n``, the mean and ``m2`` (the sum of squared deviations from the mean), pooled over
    the rows of each label, labels sorted.

    A data row is ``n`` 1, its value as ``mean`` and ``m2`` 0: the pooled ``m2`` is then the two-pass sum of squares.
    Rows with a None label, a non-positive or missing count or a missing mean are left out.
    """
    keep = keys.notna().to_numpy() & np.isfinite(n) & (n > 0) & np.isfinite(mean) & np.isfinite(m2)
    if not keep.any():
        return pd.DataFrame({"n": [], "mean": [], "m2": []}, dtype=float)
    key = pd.Series(keys.to_numpy()[keep], dtype=object)
    count, value, squares = n[keep], mean[keep], m2[keep]
    codes, uniques = pd.factorize(key, sort=True)
    totals = np.bincount(codes, weights=count)
    means = np.bincount(codes, weights=count * value) / totals
    spread = np.bincount(codes, weights=squares + count * (value - means[codes]) ** 2)
    return pd.DataFrame({"n": totals, "mean": means, "m2": spread}, index=pd.Index(uniques, dtype=object))


def row_moments(keys: pd.Series, values: np.ndarray) -> pd.DataFrame:
    """:func:`pooled` of data rows: one value each."""
    return pooled(keys, np.ones(len(values)), values, np.zeros(len(values)))


def summary_moments(inputs: Inputs, spread: str) -> pd.DataFrame:
    """:func:`pooled` of summary rows; ``spread`` is ``m2`` or ``var`` (the sample variance, ``m2 / (n - 1)``; a
    group of one has none)."""
    frame = inputs.frame
    n, mean = numbers(frame["n"]), numbers(frame["mean"])
    raw = numbers(frame[spread])
    m2 = raw if spread == "m2" else raw * (n - 1)
    return pooled(labels(frame["grp"]), n, mean, np.where((n == 1) & np.isnan(m2), 0.0, m2))


def group_moments(inputs: Inputs, spread: str = "m2") -> pd.DataFrame:
    """Per group of a ``grp, v`` (or summary) input: n, mean and m2."""
    if inputs.summary:
        return summary_moments(inputs, spread)
    return row_moments(labels(inputs.column("grp")), numbers(inputs.column("v")))


def breakdown_names(inputs: Inputs) -> pd.Series:
    """Each driver input row's breakdown, as text (a NULL breakdown is named "None", as ``str(None)`` names it)."""
    column = inputs.column("breakdown").astype(object)
    return column.where(column.notna(), "None").astype(str)


def breakdown_moments(inputs: Inputs) -> tuple[list[str], dict[str, pd.DataFrame]]:
    """A driver's inputs: every breakdown named (in name order), and per breakdown with values, its groups' moments."""
    names = breakdown_names(inputs)
    found: dict[str, pd.DataFrame] = {}
    for name, part in inputs.frame.groupby(names, sort=True):
        moments = group_moments(Inputs(part, inputs.summary))
        if len(moments):
            found[str(name)] = moments
    return sorted(names.unique()), found


def values_by_group(inputs: Inputs) -> dict[str, np.ndarray]:
    """A ``grp, v`` row input's finite values per label (what SciPy's two-sample tests take)."""
    keys, values = labels(inputs.column("grp")), numbers(inputs.column("v"))
    keep = keys.notna().to_numpy() & np.isfinite(values)
    frame = pd.DataFrame({"g": keys.to_numpy()[keep], "v": values[keep]})
    return {str(key): part.to_numpy(dtype=float) for key, part in frame.groupby("g", sort=True)["v"]}
