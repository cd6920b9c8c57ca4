"""Read a JSON array of records (``.json``) or JSON Lines (``.jsonl``, ``.ndjson``) into a raw table of text cells.

Each record is one row and each field one column; a field holding an object becomes one dotted column per inner
field (``customer.city``). Anything deeper, and lists, are refused naming the record and the field
(``columnar.MAX_NESTING``). Records need not share their fields: a field a record lacks is missing in its row.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from insightloom.errors import BadInputError
from insightloom.intake.columnar import BATCH_ROWS, MAX_NESTING, ReadLimits, TextColumns, nesting_error
from insightloom.intake.readers import RawTable

logger = logging.getLogger(__name__)

_BOM = b"\xef\xbb\xbf"
_ARRAY_FIX = (
    'make it a JSON array of records, [{"region": "North", "sales": 10}, ...], or JSON Lines (.jsonl) with one '
    "record (an object) per line."
)
_TOO_DEEP = "values nested hundreds of levels deep"
_LINES_FIX = "write one JSON object per line (JSON Lines), or save the records as one JSON array in a .json file."


def read_json_table(path: Path, limits: ReadLimits) -> RawTable:
    """Read the records of a .json array or a JSON Lines file.

    Raises:
        BadInputError: Not UTF-8, invalid JSON (naming the line), not an array of objects, nested too deeply,
            over the columns or size caps, or no records.
    """
    records = _lines(path) if path.suffix.lower() in (".jsonl", ".ndjson") else _array(path)
    columns = TextColumns(path, limits)
    for batch in _batches(records):
        flat = [_flatten(path, number, record) for number, record in batch]
        names = dict.fromkeys(name for row in flat for name in row)  # every field, in order of appearance
        columns.add({name: [row.get(name) for row in flat] for name in names}, len(flat))
    if not columns.rows:
        raise BadInputError(f"{path}: has no records.", fix="export the data again including its rows.")
    return columns.raw_table()


def _array(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    data = path.read_bytes().removeprefix(_BOM)
    try:
        top = json.loads(data)
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from exc
    except json.JSONDecodeError as exc:
        lines = exc.msg == "Extra data" and data.lstrip().startswith(b"{")
        fix = "it holds one object per line: rename it .jsonl (JSON Lines)." if lines else _ARRAY_FIX
        raise BadInputError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}.", fix) from exc
    except RecursionError as exc:
        raise nesting_error(path, None, _TOO_DEEP) from exc
    if not isinstance(top, list):
        raise BadInputError(f"{path}: the top level is {_kind(top)}, not an array of records.", fix=_ARRAY_FIX)
    for number, record in enumerate(top, start=1):
        if not isinstance(record, dict):
            raise BadInputError(f"{path}: record {number:,} is {_kind(record)}, not an object.", fix=_ARRAY_FIX)
        yield number, record


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """One record per non-blank line, read a line at a time: a JSON Lines file is never held whole."""
    with path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            text = line.removeprefix(_BOM) if number == 1 else line
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except UnicodeDecodeError as exc:
                raise _not_utf8(path, exc, line=number) from exc
            except json.JSONDecodeError as exc:
                raise BadInputError(f"{path}: line {number:,} is not valid JSON ({exc.msg}).", _LINES_FIX) from exc
            except RecursionError as exc:
                raise nesting_error(path, None, _TOO_DEEP, record=number) from exc
            if not isinstance(record, dict):
                raise BadInputError(f"{path}: line {number:,} is {_kind(record)}, not an object.", fix=_LINES_FIX)
            yield number, record


def _batches(records: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    it = iter(records)
    while batch := list(islice(it, BATCH_ROWS)):
        yield batch


def _flatten(path: Path, number: int, record: dict[str, Any]) -> dict[str, object]:
    """A record's plain values, an inner object's fields as ``outer.inner``; deeper objects and lists refused."""
    flat: dict[str, object] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            for inner, cell in value.items():
                name = f"{key}.{inner}"
                if isinstance(cell, (dict, list)):
                    raise nesting_error(path, name, _what(cell, MAX_NESTING + 1), record=number)
                flat[name] = cell
        elif isinstance(value, list):
            raise nesting_error(path, key, _what(value, MAX_NESTING), record=number)
        else:
            flat[key] = value
    return flat


def _what(value: object, depth: int) -> str:
    return f"an object at nesting depth {depth}" if isinstance(value, dict) else "a list"


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "true or false", type(None): "null"}
    return names.get(type(value), "a number")


def _not_utf8(path: Path, exc: UnicodeDecodeError, *, line: int | None = None) -> BadInputError:
    where = f" line {line:,}" if line is not None else ""
    return BadInputError(
        f"{path}:{where} is not UTF-8 text ({exc.reason} at byte {exc.start}).",
        fix="save it as UTF-8, the encoding JSON is written in.",
    )
