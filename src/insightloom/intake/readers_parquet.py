"""Read a Parquet file into a raw table of text cells (``columnar``), batch by batch.

A Parquet file is compressed and may be dictionary-encoded, so its size says little about what it expands to: the
footer (rows, columns, decompressed size) is checked before any data is read, and text columns are read as
dictionaries, whose expanded size is counted before they are expanded.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from insightloom.errors import BadInputError
from insightloom.intake.columnar import (
    BATCH_ROWS,
    MAX_NESTING,
    ReadLimits,
    TextColumns,
    nesting_error,
    too_large,
    too_wide,
)
from insightloom.intake.readers import RawTable

logger = logging.getLogger(__name__)

#: The most a Parquet file's data may decompress to, as a multiple of the size cap: a number takes 8 bytes in
#: Parquet and as little as 1 byte as text, so a table within the cap as text decompresses to at most 8 times it.
MAX_EXPANSION = 8
_UNREADABLE = (pa.ArrowException, OSError, ValueError)
#: How pandas stores an unnamed index that is not a plain range: it is the frame's index, not a column of data.
_PANDAS_INDEX = re.compile(r"__index_level_\d+__")


def read_parquet(path: Path, limits: ReadLimits) -> RawTable:
    """Read every row of a Parquet file; a struct column becomes one dotted column per field (``customer.city``).

    Raises:
        BadInputError: Not a readable Parquet file, nested deeper than one struct level or holding lists, over
            the columns or size caps, or no rows.
    """
    try:
        footer = pq.ParquetFile(path)
        fields = [f for f in footer.schema_arrow if not _PANDAS_INDEX.fullmatch(f.name)]
        leaves = list(_leaf_columns(path, fields))
        _check_footer(path, footer.metadata, len(leaves), limits)
        # Text columns as dictionaries: a column of one long repeated value stays one value until it is counted.
        text = [name for name, kind in leaves if pa.types.is_string(kind) or pa.types.is_large_string(kind)]
        columns = TextColumns(path, limits)
        reader = pq.ParquetFile(path, read_dictionary=text)
        for batch in reader.iter_batches(batch_size=BATCH_ROWS, columns=[f.name for f in fields]):
            flat = pa.Table.from_batches([batch]).flatten()
            columns.add({name: flat.column(name).combine_chunks() for name in flat.column_names}, flat.num_rows)
    except BadInputError:
        raise
    except _UNREADABLE as exc:
        detail = " ".join(str(exc).split())[:300]
        raise BadInputError(
            f"{path}: not a readable Parquet file ({type(exc).__name__}: {detail}).",
            fix="write it again as Parquet (pandas, pyarrow, DuckDB or Spark), or export the table as CSV.",
        ) from exc
    return columns.raw_table()


def _leaf_columns(path: Path, fields: list[pa.Field]) -> Iterator[tuple[str, pa.DataType]]:
    """The columns after flattening structs one level, as ``Table.flatten`` names them; deeper nesting and lists
    are refused, naming the column."""
    for field in fields:
        if pa.types.is_struct(field.type):
            for child in field.type:
                if pa.types.is_nested(child.type):
                    raise nesting_error(path, f"{field.name}.{child.name}", _nested_kind(child.type, MAX_NESTING + 1))
                yield f"{field.name}.{child.name}", child.type
        elif pa.types.is_nested(field.type):
            raise nesting_error(path, field.name, _nested_kind(field.type, MAX_NESTING))
        else:
            yield field.name, field.type


def _nested_kind(kind: pa.DataType, depth: int) -> str:
    if pa.types.is_struct(kind):
        return f"a struct at nesting depth {depth}"
    return f"a {kind} (a list or map), which is not flattened into columns"


def _check_footer(path: Path, metadata: pq.FileMetaData, columns: int, limits: ReadLimits) -> None:
    """Refuse, from the footer alone, a table too wide, with more cells than a CSV within the cap can hold (one
    delimiter each), or whose data decompresses past ``MAX_EXPANSION`` times the cap."""
    if columns > limits.max_columns:
        raise too_wide(path, columns, limits)
    rows = metadata.num_rows
    if rows * columns > limits.max_bytes:
        raise too_large(path, limits, f"holds {rows:,} rows x {columns:,} columns, more cells than that size holds")
    expanded = sum(
        metadata.row_group(g).column(c).total_uncompressed_size
        for g in range(metadata.num_row_groups)
        for c in range(metadata.num_columns)
    )
    if expanded > MAX_EXPANSION * limits.max_bytes:
        raise too_large(path, limits, f"its data decompresses to {expanded / 1024 / 1024:,.0f} MB")
    logger.debug("%s: %d rows, %d columns, %d bytes decompressed", path.name, rows, columns, expanded)
