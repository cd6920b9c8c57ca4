"""Load ``column_definitions.json``: optional per-column descriptions that carry units and meaning.

The file is a JSON list of ``{"column_name": str, "column_desc": str}``. A malformed file is a user error worth
stopping for (exit 2), because a silently ignored definition would drop units such as KRW from the report.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from insightloom.errors import BadInputError

logger = logging.getLogger(__name__)

_FIX = 'Make it a JSON list like [{"column_name": "Amount", "column_desc": "Order amount (unit: KRW)"}].'


def load_column_definitions(path: Path) -> dict[str, str]:
    """Read the definitions file into ``{column_name: column_desc}``.

    Args:
        path: The ``column_definitions.json`` file.

    Returns:
        Descriptions keyed by column name (stripped). Later duplicates win, with a warning.

    Raises:
        BadInputError: Missing, empty, not JSON, not a list, or an entry lacks a string ``column_name`` /
            ``column_desc`` (the message names the entry index and field).
    """
    if not path.is_file():
        raise BadInputError(f"{path}: column definitions file not found.", fix="Check the path, or omit it.")
    raw = path.read_bytes()
    if not raw.strip():
        raise BadInputError(f"{path}: column definitions file is empty.", fix=_FIX)
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{path}: column definitions are not UTF-8 text ({exc.reason}).", fix=_FIX) from exc
    except json.JSONDecodeError as exc:
        raise BadInputError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}.", fix=_FIX
        ) from exc
    except RecursionError as exc:  # the file is a list of flat objects: thousands of nested brackets are not that
        raise BadInputError(f"{path}: the JSON is nested too deeply to be column definitions.", fix=_FIX) from exc
    if not isinstance(data, list):
        raise BadInputError(f"{path}: top level must be a list of column entries, got {type(data).__name__}.", fix=_FIX)
    return _entries(path, data)


def _entries(path: Path, data: list[object]) -> dict[str, str]:
    out: dict[str, str] = {}
    for i, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise BadInputError(f"{path}: entry [{i}] must be an object, got {type(entry).__name__}.", fix=_FIX)
        for field in ("column_name", "column_desc"):
            if field not in entry:
                raise BadInputError(f"{path}: entry [{i}] is missing field '{field}'.", fix=_FIX)
            if not isinstance(entry[field], str):
                raise BadInputError(
                    f"{path}: entry [{i}] field '{field}' must be a string, got {type(entry[field]).__name__}.",
                    fix=_FIX,
                )
        name = entry["column_name"].strip()
        if not name:
            raise BadInputError(f"{path}: entry [{i}] field 'column_name' is empty.", fix=_FIX)
        if name in out:
            logger.warning("%s: column %r defined twice; using the later description", path, name)
        out[name] = entry["column_desc"].strip()
    return out
