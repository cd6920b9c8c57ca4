"""Reading and writing the job-folder files validation, render and audit share.

One loader per file, each raising :class:`~insightloom.errors.ValidationError` that names the file and the fix, so
every caller fails the same clear way on a missing or malformed file. Writes are atomic (temp file + replace):
a crash mid-write must not leave a half-written citations.json that the renderer then trusts.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Literal, overload

from insightloom.errors import UnsafePathError, ValidationError
from insightloom.fileio import read_text

logger = logging.getLogger(__name__)

METADATA_FILE = "calculation_metadata.json"
CITATIONS_FILE = "citations.json"
PROFILE_FILE = "cache/profile.json"
REPORT_FILE = "validation_report.txt"
_REQUIRED = ("id", "value", "description", "formula", "source_file", "source_columns", "importance")


def read_json(path: Path, what: str, fix: str) -> Any:
    """Parse a job's JSON file, raising ValidationError naming the file when it is missing, malformed, or a link
    a script planted (it is opened without following links, so another job's file can never be read through it)."""
    if not path.is_file():
        raise ValidationError(f"{what} not found: {path}", fix)
    try:
        return json.loads(read_text(path, beneath=path.parent))
    except UnsafePathError as exc:
        raise ValidationError(exc.message, exc.fix) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationError(f"{what} is not valid JSON ({path}): {exc}", fix) from exc


def load_calculations(job_dir: Path) -> list[dict[str, Any]]:
    """The tracked calculations, in tracking order, after checking required fields and unique ids.

    Raises:
        ValidationError: The file is missing, malformed, lacks a field, or repeats an id.
    """
    path = job_dir / METADATA_FILE
    fix = "Track numbers with track_calculation() and save_calculation_metadata() before validating."
    data = read_json(path, METADATA_FILE, fix)
    calcs = data.get("calculations") if isinstance(data, dict) else None
    if not isinstance(calcs, list):
        raise ValidationError(f"{path}: missing the 'calculations' list", fix)
    seen: set[str] = set()
    for index, calc in enumerate(calcs):
        if not isinstance(calc, dict):
            raise ValidationError(f"{path}: calculations[{index}] is not an object", fix)
        missing = [key for key in _REQUIRED if key not in calc]
        if missing:
            name = calc.get("id", f"#{index}")
            raise ValidationError(f"{path}: calculation {name!r} lacks field(s) {', '.join(missing)}", fix)
        calc_id = str(calc["id"])
        if calc_id in seen:
            raise ValidationError(
                f"{path}: calculation id {calc_id!r} appears twice",
                "Track each number under its own id (track_calculation merges by id).",
            )
        seen.add(calc_id)
    return calcs


@overload
def load_citations(job_dir: Path) -> dict[str, Any]: ...
@overload
def load_citations(job_dir: Path, *, required: Literal[True]) -> dict[str, Any]: ...
@overload
def load_citations(job_dir: Path, *, required: bool) -> dict[str, Any] | None: ...
def load_citations(job_dir: Path, *, required: bool = True) -> dict[str, Any] | None:
    """citations.json as a dict, or None when it does not exist and ``required`` is False."""
    path = job_dir / CITATIONS_FILE
    if not path.is_file() and not required:
        return None
    data = read_json(path, CITATIONS_FILE, "Run validation (insightloom verify) to write citations.json.")
    if not isinstance(data, dict) or not isinstance(data.get("citations"), list):
        raise ValidationError(f"{path}: missing the 'citations' list", "Re-run validation to rewrite it.")
    return data


def load_views(job_dir: Path) -> dict[str, Path]:
    """Every view name a check may use (tables and aliases) mapped to its Parquet file.

    Reads ``cache/profile.json``. Without one, falls back to ``cache/<view>.parquet`` files so a hand-built job
    folder still validates; an alias that names an unknown view is skipped with a warning.
    """
    profile_path = job_dir / PROFILE_FILE
    views: dict[str, Path] = {}
    if not profile_path.is_file():
        for parquet in sorted((job_dir / "cache").glob("*.parquet")):
            views[parquet.stem] = parquet
        if views:
            logger.warning("%s missing; using the Parquet files in cache/ as views", profile_path)
        return views
    profile = read_json(profile_path, PROFILE_FILE, "Re-run intake so cache/profile.json is rewritten.")
    for table in profile.get("tables", []):
        view, parquet = table.get("view"), table.get("parquet")
        if not view or not parquet:
            raise ValidationError(
                f"{profile_path}: a table lacks 'view' or 'parquet'", "Re-run intake to rewrite the profile."
            )
        path = Path(parquet)
        path = path if path.is_absolute() else job_dir / path
        if path.is_symlink() or not path.resolve().is_relative_to(job_dir.resolve()):
            raise ValidationError(
                f"{path}: the cached table is a symbolic link or outside the job folder, so checks will not read it.",
                "re-run intake (insightloom resume) so the job's own cache/ is rewritten.",
            )
        views[str(view)] = path
    for alias, target in (profile.get("aliases") or {}).items():
        if target in views:
            views[str(alias)] = views[target]
        else:
            logger.warning("profile alias %r names unknown view %r; skipped", alias, target)
    return views


def table_of_file(job_dir: Path) -> dict[str, str]:
    """Input file name -> the view of its (first) table, so a calculation's ``source_file`` names its table.

    Empty when the profile is missing or unreadable: this only helps describe calculations, never decides status.
    """
    path = job_dir / PROFILE_FILE
    try:
        profile = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    out: dict[str, str] = {}
    for table in profile.get("tables", []) if isinstance(profile, dict) else []:
        if table.get("file") and table.get("view"):
            out.setdefault(str(table["file"]), str(table["view"]))
    return out
