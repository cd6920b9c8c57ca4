"""Reading and writing the job-folder files validation, render and audit share.

One loader per file, each raising :class:`~insightloom.errors.ValidationError` that names the file and the fix, so
every caller fails the same clear way on a missing or malformed file. Writes are atomic (temp file + replace):
a crash mid-write must not leave a half-written citations.json that the renderer then trusts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from insightloom.errors import UnsafePathError, ValidationError
from insightloom.fileio import open_regular, read_text, write_json

logger = logging.getLogger(__name__)

METADATA_FILE = "calculation_metadata.json"
CITATIONS_FILE = "citations.json"
PROFILE_FILE = "cache/profile.json"
REPORT_FILE = "validation_report.txt"
_REQUIRED = ("id", "value", "description", "formula", "source_file", "source_columns", "importance")
#: The largest cached Parquet file a check may read. Each one is held in memory while the checks run (read once, and
#: hashed in the same pass); Parquet holds a CSV in a third to a fifth of its bytes, so a 5 GB input (the default cap)
#: caches within it.
MAX_PARQUET_BYTES = 2 * 1024 * 1024 * 1024
_SHA256_RE = re.compile(r"[0-9a-f]{64}")
# Resume re-runs intake only when the profile is missing, and refuses a finished job.
_REINTAKE = (
    "re-run intake so the job's cache/ is written again: remove cache/profile.json and any link a script left in "
    "place of cache/ or a file in it, then run `insightloom resume` (a job that stopped) or `insightloom run` on the "
    "same data (a finished job)."
)


def read_json(path: Path, what: str, fix: str, *, beneath: Path) -> Any:
    """Parse a job's JSON file, raising ValidationError naming the file when it is missing, malformed, or a link
    a script planted (it is opened without following links, so another job's file can never be read through it).

    Args:
        path: The file.
        what: Its name in messages.
        fix: What to do when it is missing or malformed.
        beneath: The job folder: no folder between it and ``path`` (``cache/`` for the profile) may be a link.
    """
    try:
        return json.loads(read_text(path, beneath=beneath))
    except FileNotFoundError as exc:
        raise ValidationError(f"{what} not found: {path}", fix) from exc
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
    data = read_json(path, METADATA_FILE, fix, beneath=job_dir)
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
    fix = "Run validation (insightloom verify) to write citations.json."
    data = read_json(path, CITATIONS_FILE, fix, beneath=job_dir)
    if not isinstance(data, dict) or not isinstance(data.get("citations"), list):
        raise ValidationError(f"{path}: missing the 'citations' list", "Re-run validation to rewrite it.")
    return data


@dataclass(frozen=True, eq=False)
class CachedTable:
    """One cached Parquet file that intake recorded, read once for the checks.

    DuckDB reads ``data`` from memory and never the file, so nothing a script does to the file afterwards (a swap
    for a link, a rewrite) reaches a check, and what was hashed is exactly what the checks see.

    Attributes:
        path: The file in the job folder (for messages).
        data: Its bytes.
        sha256: The SHA-256 of ``data``.
    """

    path: Path
    data: bytes
    sha256: str


def load_views(job_dir: Path, *, warn_unrecorded: bool = True) -> dict[str, CachedTable]:
    """Every view name a check may use (tables and aliases) mapped to its cached table, read and verified.

    Only the Parquet files ``cache/profile.json`` records are read: there is no other source of views, so a script
    that replaces ``cache/`` or a file in it with a link (to another job's folder, say) gets its checks refused, not
    answered from someone else's data. Each file is opened from the job folder without following a link at any
    component, must be a regular file of at most :data:`MAX_PARQUET_BYTES`, and is read once; its size and SHA-256
    must match the manifest intake wrote into the profile. A profile from before intake recorded them has nothing
    to compare: its files are still read the same safe way, with a warning that asks for a fresh intake. A file two
    views share is read once; an alias that names an unknown view is skipped with a warning.

    Args:
        job_dir: The job folder.
        warn_unrecorded: Warn when the profile records no hashes. A script's own end-of-script checks pass False:
            the model cannot re-run intake, and the script reads the same cache directly anyway.

    Raises:
        ValidationError: The profile is missing, malformed or a link; or a recorded file is missing, a link, not a
            regular file, too large, outside the job folder, or does not match its manifest. The message names the
            file (and view); the fix says to re-run intake.
    """
    profile_path = job_dir / PROFILE_FILE
    profile = read_json(profile_path, PROFILE_FILE, _REINTAKE, beneath=job_dir)
    tables = profile.get("tables") if isinstance(profile, dict) else None
    if not isinstance(tables, list):
        raise ValidationError(f"{profile_path}: missing the 'tables' list", _REINTAKE)
    views: dict[str, CachedTable] = {}
    read: dict[str, CachedTable] = {}  # by normalised path, so a file two views share is read once
    unhashed: list[str] = []
    for table in tables:
        view, parquet = (table.get("view"), table.get("parquet")) if isinstance(table, dict) else (None, None)
        if not view or not parquet:
            raise ValidationError(f"{profile_path}: a table lacks 'view' or 'parquet'", _REINTAKE)
        path = _in_job(job_dir, str(parquet))
        key = os.path.normpath(path)
        if key not in read:
            sha256, size = _manifest(table, profile_path)
            read[key] = _read_cached(job_dir, path, str(view), sha256, size)
            if sha256 is None:
                unhashed.append(str(view))
        views[str(view)] = read[key]
    if unhashed and warn_unrecorded:
        logger.warning(
            "%s records no SHA-256 for view(s) %s (written before intake recorded them): read without following "
            "links, but not compared with what intake wrote; a fresh intake of the data records them",
            profile_path,
            ", ".join(unhashed),
        )
    for alias, target in (profile.get("aliases") or {}).items():
        if target in views:
            views[str(alias)] = views[target]
        else:
            logger.warning("profile alias %r names unknown view %r; skipped", alias, target)
    return views


def _in_job(job_dir: Path, parquet: str) -> Path:
    """A profile's ``parquet`` entry as a path: relative to the job folder; an absolute one must lie inside it,
    which opening it beneath the job folder checks."""
    path = Path(parquet)
    return path if path.is_absolute() else job_dir / path


def _manifest(table: Mapping[str, Any], profile_path: Path) -> tuple[str | None, int | None]:
    """The ``sha256`` and ``bytes`` intake recorded for a table (None where an older profile has none)."""
    sha256, size = table.get("sha256"), table.get("bytes")
    if sha256 is not None and not (isinstance(sha256, str) and _SHA256_RE.fullmatch(sha256)):
        raise ValidationError(f"{profile_path}: view {table.get('view')!r} has a malformed 'sha256'", _REINTAKE)
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise ValidationError(f"{profile_path}: view {table.get('view')!r} has a malformed 'bytes'", _REINTAKE)
    return sha256, size


def _mismatch(path: Path, view: str, what: str) -> ValidationError:
    return ValidationError(
        f"{path}: the cached table of view {view!r} {what}: it does not match the manifest in {PROFILE_FILE} "
        "(the file changed after intake), so no check reads it.",
        _REINTAKE,
    )


def _read_cached(job_dir: Path, path: Path, view: str, sha256: str | None, size: int | None) -> CachedTable:
    """Read one recorded Parquet file without following links, hash it, and compare it with its manifest."""
    try:
        with open_regular(path, beneath=job_dir, max_bytes=MAX_PARQUET_BYTES) as (handle, actual):
            if size is not None and actual != size:  # refused before a byte is read
                raise _mismatch(path, view, f"holds {actual:,} bytes, not the {size:,} intake wrote")
            data = handle.read(actual)  # bounded by the size at open, even if a script appends meanwhile
    except FileNotFoundError as exc:
        raise ValidationError(f"{path}: the cached table of view {view!r} is missing.", _REINTAKE) from exc
    except UnsafePathError as exc:
        raise ValidationError(f"view {view!r}: {exc.message}", _REINTAKE) from exc
    except OSError as exc:
        raise ValidationError(f"{path}: cannot read the cached table of view {view!r}: {exc}", _REINTAKE) from exc
    digest = hashlib.sha256(data).hexdigest()
    if sha256 is not None and digest != sha256:
        raise _mismatch(path, view, f"has SHA-256 {digest[:12]}..., not the {sha256[:12]}... intake recorded")
    return CachedTable(path, data, digest)


def parquet_manifest(job_dir: Path, parquet: str) -> dict[str, Any]:
    """The manifest entry (``sha256``, ``bytes``) of a Parquet file in the job, read without following links.

    Raises:
        FileNotFoundError: The file does not exist.
        UnsafePathError: It is a link, not a regular file, outside the job folder, or too large.
    """
    with open_regular(_in_job(job_dir, parquet), beneath=job_dir, max_bytes=MAX_PARQUET_BYTES) as (handle, size):
        return {"sha256": hashlib.file_digest(handle, "sha256").hexdigest(), "bytes": size}


def write_profile(
    job_dir: Path,
    tables: Sequence[Mapping[str, Any]],
    aliases: Mapping[str, str] | None = None,
    *,
    language: str = "en",
) -> dict[str, Any]:
    """Write ``cache/profile.json`` for Parquet files already in the job, with each one's manifest.

    Intake writes the profile itself. This is for a job folder built by hand (tests, benchmarks, a cache written
    outside intake), so that it records what checks require: each table's file, SHA-256 and size.

    Args:
        job_dir: The job folder.
        tables: Table entries, each with at least ``view`` and ``parquet`` (job-relative: ``cache/<view>.parquet``).
        aliases: Alias -> view (``data`` and XLSX stems).
        language: The data's language.

    Returns:
        The profile written.
    """
    entries = [{**table, **parquet_manifest(job_dir, str(table["parquet"]))} for table in tables]
    profile = {"tables": entries, "aliases": dict(aliases or {}), "language": language}
    write_json(job_dir / PROFILE_FILE, profile, beneath=job_dir)
    return profile


def table_of_file(job_dir: Path) -> dict[str, str]:
    """Input file name -> the view of its (first) table, so a calculation's ``source_file`` names its table.

    Empty when the profile is missing or unreadable: this only helps describe calculations, never decides status.
    """
    try:
        profile = read_json(job_dir / PROFILE_FILE, PROFILE_FILE, _REINTAKE, beneath=job_dir)
    except ValidationError:
        return {}
    out: dict[str, str] = {}
    for table in profile.get("tables", []) if isinstance(profile, dict) else []:
        if table.get("file") and table.get("view"):
            out.setdefault(str(table["file"]), str(table["view"]))
    return out
