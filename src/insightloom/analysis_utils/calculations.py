"""Track every number a script reports in ``calculation_metadata.json``.

Each call writes through to disk (merge by ``id``, later wins, first-appearance order kept) so a script that crashes
half-way still leaves the numbers it already tracked, and a re-run of a script replaces its numbers instead of
duplicating them. Writes are atomic (temp file + rename) under a file lock so a reader never sees half a file.
"""

from __future__ import annotations

import datetime as dt
import decimal
import fcntl
import json
import logging
import math
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from insightloom.analysis_utils.exit_checks import remember
from insightloom.analysis_utils.jobdir import job_dir
from insightloom.fileio import write_json
from insightloom.timeutil import utc_now

logger = logging.getLogger(__name__)

METADATA_FILE = "calculation_metadata.json"
IMPORTANCE = ("high", "medium", "low")
_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


def to_python_type(v: Any) -> Any:
    """Turn numpy/pandas scalars and containers into plain JSON-friendly Python values.

    Why: ``json`` cannot write ``np.int64`` or ``pd.Timestamp``, and scripts naturally produce them.

    Args:
        v: Any value; lists, tuples, dicts, arrays and Series are converted element-wise.

    Returns:
        int, float, str, bool, None, list or dict. NaT and pd.NA become None; a NaN float stays a float so that
        callers can reject it with a precise message.
    """
    if v is None or isinstance(v, (str, bool, int)):
        return v
    if isinstance(v, float):
        return float(v)  # np.float64 is a float subclass, and its repr ("np.float64(5.0)") is no SQL literal
    if v is pd.NaT or v is pd.NA:
        return None
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, (pd.Timestamp, dt.datetime, dt.date)):
        return v.isoformat()
    if isinstance(v, np.datetime64):
        return pd.Timestamp(v).isoformat()
    if isinstance(v, (pd.Timedelta, dt.timedelta)):
        return str(v)
    if isinstance(v, dict):
        return {str(k): to_python_type(x) for k, x in v.items()}
    if isinstance(v, (pd.Series, pd.Index, np.ndarray)):
        return [to_python_type(x) for x in v.tolist()]
    if isinstance(v, (list, tuple, set)):
        return [to_python_type(x) for x in v]
    if hasattr(v, "item"):
        return to_python_type(v.item())
    return str(v)


def _clean_value(calc_id: str, value: Any) -> int | float | str:
    value = to_python_type(value)
    if isinstance(value, bool):
        # JSON Schema does not count booleans as numbers; 0/1 keeps the value comparable with a SQL check.
        return int(value)
    if value is None:
        raise ValueError(f"track_calculation('{calc_id}'): value is missing (None/NaN/NaT); track only real values")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(
            f"track_calculation('{calc_id}'): value {value} is not finite; "
            "guard against empty groups or division by zero before tracking"
        )
    if not isinstance(value, (int, float, str)):
        raise ValueError(f"track_calculation('{calc_id}'): value of type {type(value).__name__} is not a scalar")
    return value


def _clean_columns(calc_id: str, source_columns: Any) -> list[str]:
    if source_columns is None:
        return []
    if isinstance(source_columns, str):
        return [source_columns]
    if not isinstance(source_columns, Iterable):
        raise ValueError(f"track_calculation('{calc_id}'): source_columns must be a list of column names")
    return [str(c) for c in source_columns]


def build_record(
    calc_id: str,
    value: Any,
    description: str,
    formula: str,
    source_file: str,
    source_columns: Any,
    importance: str,
    *,
    check: str | None = None,
    unit: str | None = None,
    decimals: int | None = None,
    recipe: dict[str, Any] | None = None,
    basis: dict[str, Any] | None = None,
    join: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Validate and normalise one calculation record (see :func:`track_calculation`)."""
    if not isinstance(calc_id, str) or not _ID_RE.match(calc_id):
        raise ValueError(
            f"track_calculation: id {calc_id!r} is invalid; use ASCII letters, digits and '_' (e.g. total_revenue)"
        )
    level = str(importance).strip().lower()
    if level not in IMPORTANCE:
        raise ValueError(f"track_calculation('{calc_id}'): importance {importance!r} must be one of high, medium, low")
    if check is not None and not isinstance(check, str):
        raise ValueError(f"track_calculation('{calc_id}'): check must be a SQL string or None")
    decimals = to_python_type(decimals)
    if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0):
        raise ValueError(f"track_calculation('{calc_id}'): decimals must be a non-negative integer or None")
    record: dict[str, Any] = {
        "id": calc_id,
        "value": _clean_value(calc_id, value),
        "description": str(description),
        "formula": str(formula),
        "source_file": str(source_file),
        "source_columns": _clean_columns(calc_id, source_columns),
        "importance": level,
        "check": check.strip() if isinstance(check, str) and check.strip() else None,
        "unit": str(unit) if unit not in (None, "") else None,
        "decimals": decimals,
    }
    if recipe is not None:
        if not isinstance(recipe, dict):
            raise ValueError(f"track_calculation('{calc_id}'): recipe must be a dict of JSON values or None")
        record["recipe"] = to_python_type(recipe)
    if basis is not None and join is None:  # a basis names one table's statistic; a joined value has none
        if not isinstance(basis, dict) or not isinstance(basis.get("op"), str):
            raise ValueError(f"track_calculation('{calc_id}'): basis must be a dict with an 'op' or None")
        record["basis"] = to_python_type(basis)
    if join is not None:
        record["join"] = to_python_type(join)
    return record


def _with_joins(check: str | None, recipe: dict[str, Any] | None) -> tuple[str | None, dict[str, Any] | None]:
    """A check naming a joined view (``"orders+customers"``) gets the view's definition, and the record its join;
    a check-less number whose recipe reads a joined view records the join too."""
    from insightloom.analysis.joins import is_joined
    from insightloom.analysis_utils.jobdir import read_profile
    from insightloom.analysis_utils.joins import expand_joined_views, join_record, may_name_joined, views_in

    recipe_view = (recipe or {}).get("view")
    if not may_name_joined(check or "") and not is_joined(recipe_view):
        return check, None  # the common case reads no profile
    profile = read_profile()
    names = views_in(check or "", profile) or ([str(recipe_view)] if is_joined(recipe_view) else [])
    if not names:
        return check, None
    return (expand_joined_views(check, profile) if check else check), join_record(names, profile)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    lock = path.with_name(f".{path.name}.lock")  # hidden: a coordination file, not an artifact
    with open(lock, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        logger.warning("%s is not valid JSON; starting a fresh list", path)
        return []
    calcs = data.get("calculations") if isinstance(data, dict) else None
    return [c for c in calcs or [] if isinstance(c, dict) and c.get("id")]


def merge_calculations(existing: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge by id: a later record replaces an earlier one in place, so first-appearance order is kept."""
    merged: dict[str, dict[str, Any]] = {}
    for record in [*existing, *new]:
        merged[record["id"]] = record
    return list(merged.values())


def _write_records(records: list[dict[str, Any]], folder: Path | None = None) -> Path:
    path = (folder or job_dir()) / METADATA_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        calcs = merge_calculations(_read(path), records)
        write_json(path, {"generated_at": utc_now(), "calculations": calcs})
    return path


def track_calculation(
    calc_id: str,
    value: Any,
    description: str,
    formula: str,
    source_file: str,
    source_columns: Any,
    importance: str,
    *,
    check: str | None = None,
    unit: str | None = None,
    decimals: int | None = None,
    recipe: dict[str, Any] | None = None,
    basis: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Record one reported number and write it through to ``calculation_metadata.json``.

    Args:
        calc_id: Stable ASCII id (``total_revenue``), referenced in findings as ``{{calc:total_revenue}}``.
        value: The number (or label) in its stored unit: a share of 45.2% is 45.2. numpy/pandas scalars are fine.
        description: What the number is, for the references list.
        formula: How it was computed, in words or pandas.
        source_file: The input file the number comes from.
        source_columns: Columns it was computed from.
        importance: ``high``, ``medium`` or ``low`` (decides the Validator's tiers).
        check: DuckDB SQL returning one row and one column with the same value, over the profile's views. It runs
            when the script ends (or at :func:`flush_checks`), with the other checks, and a mismatch fails the script.
            A quoted joined view (``FROM "orders+customers"``) is defined for it from the profile's relationships,
            and the record keeps the join (``join``).
        unit: ``%``, ``count``, ``ratio``, a currency code or free text.
        decimals: Display decimals when the default for the unit is not enough.
        recipe: Optional machine-readable description of the computation (``{"op": "std", "view": ...,
            "column": ...}``) for a number without a check: the Validator re-derives it from this, independently.
        basis: What was computed, as fields (``{"op": "mean", "columns": [...], "group": ..., "filters": [...],
            "params": {...}, "part": "value"}``): follow-up answers match questions on it.

    Returns:
        The stored record.

    Raises:
        ValueError: Bad id, importance or decimals, or a value that is missing, NaN or infinite.
        JoinRefused: The check names a joined view the profile's relationships refuse.
    """
    check, join = _with_joins(check, recipe)
    record = build_record(
        calc_id,
        value,
        description,
        formula,
        source_file,
        source_columns,
        importance,
        check=check,
        unit=unit,
        decimals=decimals,
        recipe=recipe,
        basis=basis,
        join=join,
    )
    folder = job_dir()
    path = _write_records([record], folder)
    remember(folder, record)  # its check runs when the script ends (or at flush_checks())
    logger.debug("tracked %s = %r in %s", calc_id, record["value"], path)
    return record


def load_calculations(folder: Path | None = None) -> list[dict[str, Any]]:
    """The calculations recorded so far in the job folder (empty when none)."""
    return _read((folder or job_dir()) / METADATA_FILE)


def save_calculation_metadata() -> str:
    """Make sure ``calculation_metadata.json`` exists and is current; return its path.

    Tracking already writes through, so this only refreshes ``generated_at`` (and creates an empty file when nothing
    was tracked), which keeps scripts written for the reference system working unchanged.
    """
    return str(_write_records([]))
