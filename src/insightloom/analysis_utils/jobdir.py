"""Locate the job folder and load the cached, parsed tables.

Scripts run in a child process with cwd = job folder and ``INSIGHTLOOM_JOB_DIR`` set. Reading the Parquet cache that
intake wrote means no script re-parses a CSV (and every script sees exactly the data the DuckDB checks see).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pandas as pd

from insightloom.analysis import joins
from insightloom.errors import BadInputError

logger = logging.getLogger(__name__)

JOB_DIR_ENV = "INSIGHTLOOM_JOB_DIR"
DEFAULT_ALIAS = "data"


def job_dir() -> Path:
    """The job folder: ``$INSIGHTLOOM_JOB_DIR`` when set, else the current directory.

    Resolved per call (not cached) so that nothing job-specific is held process-wide.
    """
    env = os.environ.get(JOB_DIR_ENV, "").strip()
    return Path(env).resolve() if env else Path.cwd().resolve()


def read_profile(folder: Path | None = None) -> dict[str, Any]:
    """Read ``cache/profile.json`` of the job.

    Raises:
        BadInputError: The profile is missing or not JSON (intake did not run for this job).
    """
    path = (folder or job_dir()) / "cache" / "profile.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BadInputError(
            f"{path} is missing: the data was never ingested for this job.",
            fix="run intake first (insightloom run ...) or set INSIGHTLOOM_JOB_DIR to the job folder",
        ) from exc
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{path} is not valid JSON ({exc}).", fix="re-run intake for this job") from exc


def resolve_view(view: str | None, profile: dict[str, Any]) -> str:
    """Map an alias (``data``) or view name to the view whose Parquet file exists.

    Args:
        view: A view name or alias; None means the ``data`` alias (the first input).
        profile: The job's data profile.

    Raises:
        BadInputError: The name is neither a view nor an alias; the message lists the valid names.
        JoinRefused: A joined view (``orders+customers``) that the profile's relationships do not allow.
    """
    if joins.is_joined(view):
        return joins.resolve(profile, str(view)).name  # refused with the reason and fix when no key allows it
    aliases: dict[str, str] = profile.get("aliases") or {}
    views = [t.get("view") for t in profile.get("tables", []) if t.get("view")]
    wanted = view or DEFAULT_ALIAS
    if wanted in views:
        return wanted
    if wanted in aliases:
        return aliases[wanted]
    if view is None and views:
        return views[0]
    known = ", ".join(sorted(set(views) | set(aliases)))
    raise BadInputError(f"Unknown table view '{wanted}'.", fix=f"use one of: {known}")


def load_df(view: str | None = None) -> pd.DataFrame:
    """Load a cached table as a DataFrame.

    Args:
        view: View name or alias from the data profile; default the first input (``data``). A joined view
            ``<child>+<parent>`` (the profile's ``relationships``) is the child left-joined to its parent.

    Returns:
        The table exactly as intake parsed it (dates as timestamps, numbers as numbers).

    Raises:
        BadInputError: Unknown view or missing cache file.
        JoinRefused: A joined view the relationships refuse (many-to-many, no foreign key).
    """
    folder = job_dir()
    profile = read_profile(folder)
    name = resolve_view(view, profile)
    if joins.is_joined(name):
        from insightloom.analysis_utils.joins import joined_frame

        return joined_frame(profile, name, load_df)
    table: dict[str, Any] = next((t for t in profile.get("tables", []) if t.get("view") == name), {})
    path = folder / (table.get("parquet") or f"cache/{name}.parquet")
    if not path.is_file():
        raise BadInputError(f"Cached table {path} for view '{name}' is missing.", fix="re-run intake for this job")
    logger.debug("loading view %s from %s", name, path)
    return pd.read_parquet(path)
