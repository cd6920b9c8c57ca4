"""Shared by the Parquet, JSON and SQLite readers: typed cells become the text a CSV export of the table holds.

A new source goes through the CSV's own typing path (``coerce``): every cell is written as its CSV text, column at
a time with Arrow's kernels where the column has one type, so a table's profile (dtypes, roles, semantics) is the
same whichever format carried it, and no format gets typing rules of its own. The text is built batch by batch,
under the limits a CSV has: the columns cap, and the file-size cap applied to the table's size as CSV text, so a
small compressed file cannot expand into gigabytes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from insightloom.errors import BadInputError, JobCancelled
from insightloom.intake.coerce import NA_TOKENS
from insightloom.intake.inputs import MAX_COLUMNS, MAX_FILE_ENV
from insightloom.intake.readers import (
    RawTable,
    check_cell_lengths,
    check_labels,
    clean_label,
    strip_control_chars,
    unique_names,
)

logger = logging.getLogger(__name__)

#: Rows read, typed as text and counted at a time: a few MB of text, whatever the table's size.
BATCH_ROWS = 65_536
#: How deep a record may nest: its own fields (1) and the fields of an object inside one (2), which become dotted
#: columns such as ``customer.city``. Deeper objects and lists have no single column to go to.
MAX_NESTING = 2
_NESTING_FIX = (
    "flatten it before intake so that each record holds plain values or objects of plain values (for example with "
    "pandas.json_normalize or jq, or in the program that wrote it), or export the table as CSV."
)
# Missing in every column, as the CSV reader reads them (``readers._NA_VALUES``).
_NA_TEXT = pa.array(["", *NA_TOKENS], pa.string())
_WHOLE_NUMBER = r"^-?\d+$"


@dataclass(frozen=True)
class ReadLimits:
    """The limits every reader of a non-CSV source applies, from the same settings as the CSV path.

    Attributes:
        max_file_mb: The file-size cap (setting ``max_file_mb``), applied to the table's size as CSV text too.
        max_columns: The widest table accepted.
        cancelled: Polled between batches; True stops the read with JobCancelled.
    """

    max_file_mb: float = 5120.0
    max_columns: int = MAX_COLUMNS
    cancelled: Callable[[], bool] | None = None

    @property
    def max_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)


def part_label(table: str | None) -> str:
    """How messages name a table inside a file (``table 'orders'``), or nothing for a one-table file."""
    return f"table {table!r}" if table is not None else ""


def too_large(path: Path, limits: ReadLimits, what: str, *, table: str | None = None) -> BadInputError:
    """The error for a table whose CSV text would be over the file-size cap."""
    where = f" {part_label(table)}" if table is not None else ""
    return BadInputError(
        f"{path}:{where} {what}, over the max_file_mb limit of {limits.max_file_mb:g} MB (the cap applies to the "
        "table's size as CSV text, so a compressed file cannot expand past it).",
        fix=f"pass a smaller extract (fewer rows or columns), or raise the max_file_mb setting (env {MAX_FILE_ENV}).",
    )


def too_wide(path: Path, columns: int, limits: ReadLimits, *, table: str | None = None) -> BadInputError:
    where = f" {part_label(table)}" if table is not None else ""
    return BadInputError(
        f"{path}:{where} the table has {columns:,} columns, over the cap of {limits.max_columns:,} columns.",
        fix="keep only the columns the analysis needs, or reshape the table to long form (one row per item and "
        "measure), and run again.",
    )


def nesting_error(path: Path, field: str | None, what: str, *, record: int | None = None) -> BadInputError:
    """The error for a value nested deeper than ``MAX_NESTING`` (or a list), naming the field and the depth."""
    where = f" record {record:,}," if record is not None else ""
    holder = f"field {field!r}" if field is not None else "the file"
    return BadInputError(
        f"{path}:{where} {holder} holds {what}; intake reads records nested at most {MAX_NESTING} levels "
        "deep (a record's fields, and the fields of an object inside one, read as dotted columns such as "
        "'customer.city'), and no lists.",
        fix=_NESTING_FIX,
    )


def arrow_text(values: pa.Array) -> pa.Array:
    """A typed Arrow column as the CSV text of its cells, column at a time.

    Floats keep a decimal point (``2.0``, as Python and pandas write them), so a float column stays float when
    every value is whole; dates and timestamps are ISO text, which the typing path reads back as the same instant.

    Raises:
        pa.ArrowInvalid: Binary cells that are not UTF-8 text.
    """
    kind = values.type
    if pa.types.is_dictionary(kind):
        return pc.take(arrow_text(values.dictionary), values.indices)
    if pa.types.is_string(kind):
        return values
    if pa.types.is_floating(kind):
        text = pc.cast(values, pa.string())
        whole = pc.match_substring_regex(text, _WHOLE_NUMBER)
        return pc.if_else(whole, pc.binary_join_element_wise(text, ".0", ""), text)
    try:
        return pc.cast(values, pa.string())
    except pa.ArrowNotImplementedError:  # a type Arrow cannot cast to text: Python's spelling of each cell
        return pa.array([_cell_text(v) for v in values.to_pylist()], pa.string())


def python_text(values: Sequence[object]) -> pa.Array:
    """Python cells (JSON or SQLite values) as CSV text: through Arrow when the column has one type, else cell by
    cell, since a JSON field or a SQLite column may hold numbers in some rows and text in others."""
    try:
        typed = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, UnicodeEncodeError):
        return pa.array([_cell_text(v) for v in values], pa.string())
    return arrow_text(typed)


def _cell_text(v: object) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"  # as Arrow writes a boolean column
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, str):
        return v.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate (JSON "\ud800") has no UTF-8 form
    return str(v)


class TextColumns:
    """A table's columns as text, built batch by batch, within the limits.

    A column first seen in a later batch is missing in the rows before it, and a column absent from a batch is
    missing in its rows (JSON records need not share their fields).
    """

    def __init__(self, path: Path, limits: ReadLimits, *, table: str | None = None) -> None:
        self.path, self.limits, self.table = path, limits, table
        self.rows = 0
        self._chunks: dict[str, list[pa.Array]] = {}
        self._bytes = 0

    def add(self, batch: Mapping[str, pa.Array | Sequence[object]], rows: int) -> None:
        """Append ``rows`` rows: typed Arrow columns or Python cells, each becoming text once its size is known to
        fit.

        Raises:
            BadInputError: Too many columns, over the size cap, or binary cells that are not text.
            JobCancelled: The job was cancelled.
        """
        if self.limits.cancelled is not None and self.limits.cancelled():
            raise JobCancelled(f"Reading {self.path.name} stopped: the job was cancelled.", "start it again if needed.")
        for name, values in batch.items():
            chunks = self._chunks.get(name)
            if chunks is None:
                if len(self._chunks) >= self.limits.max_columns:
                    raise too_wide(self.path, len(self._chunks) + 1, self.limits, table=self.table)
                chunks = self._chunks[name] = [pa.nulls(self.rows, pa.string())] if self.rows else []
            chunks.append(self._text(name, values))
        for name, chunks in self._chunks.items():
            if name not in batch:
                chunks.append(pa.nulls(rows, pa.string()))
        self.rows += rows
        self._charge(rows * len(self._chunks))  # a delimiter or line break per cell, as in the CSV

    def _text(self, name: str, values: pa.Array | Sequence[object]) -> pa.Array:
        try:
            if isinstance(values, pa.Array) and pa.types.is_dictionary(values.type):
                # A few distinct values can stand for gigabytes of text: counted before they are expanded.
                words = arrow_text(values.dictionary)
                self._charge(pc.sum(pc.take(pc.binary_length(words), values.indices)).as_py() or 0)
                text = pc.take(words, values.indices)
            else:
                text = arrow_text(values) if isinstance(values, pa.Array) else python_text(values)
                self._charge(pc.sum(pc.binary_length(text)).as_py() or 0)
        except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
            where = f" {part_label(self.table)}" if self.table is not None else ""
            raise BadInputError(
                f"{self.path}:{where} column {name!r} holds binary data that is not UTF-8 text.",
                fix="store the column as text (or leave it out of the table you pass); intake reads numbers, "
                "dates and text.",
            ) from exc
        return pc.if_else(pc.is_in(text, value_set=_NA_TEXT), pa.scalar(None, pa.string()), text)

    def _charge(self, size: int) -> None:
        self._bytes += size
        if self._bytes > self.limits.max_bytes:
            what = f"the table passes {self._bytes / 1024 / 1024:,.0f} MB as CSV text by row {self.rows:,}"
            raise too_large(self.path, self.limits, what, table=self.table)

    def raw_table(self) -> RawTable:
        """The columns as a RawTable of text cells, named as the CSV reader names a header.

        Raises:
            BadInputError: No rows, a column name over its cap, or a cell over its cap.
        """
        where = f" {part_label(self.table)}" if self.table is not None else ""
        if not self.rows or not self._chunks:
            raise BadInputError(f"{self.path}:{where} has no rows.", fix="Export the data again including its rows.")
        labels = [clean_label(name) for name in self._chunks]
        check_labels(self.path, labels, part=part_label(self.table))
        names = unique_names([label or f"column_{i + 1}" for i, label in enumerate(labels)])
        chunks = self._chunks.values()
        frame = pd.DataFrame(
            {name: pa.chunked_array(parts, pa.string()).to_pandas() for name, parts in zip(names, chunks, strict=True)}
        )
        check_cell_lengths(self.path, frame, first_row=1, part=part_label(self.table))
        frame, removed = strip_control_chars(frame)
        if removed:
            logger.warning("%s%s: removed %d control character(s) from cells", self.path.name, where, removed)
        logger.info("read %s%s: %d rows, %d columns", self.path.name, where, *frame.shape)
        return RawTable(frame, table=self.table, control_chars_removed=removed)
