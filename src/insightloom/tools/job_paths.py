"""Confinement of model-given paths to the job folder."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BadInputError


def _outside(path: str) -> BadInputError:
    return BadInputError(f"Path {path!r} is outside the job folder.", "use a path relative to the job folder.")


def inside_job(root: Path, path: str) -> Path:
    """Resolve ``path`` (relative to the job folder, or absolute) and refuse anything outside the job.

    For checking the arguments of a sandboxed command, which follows links itself; a file the host opens goes
    through :func:`job_path` and the no-follow API instead, since resolving first and opening later is a race.

    Raises:
        BadInputError: The path resolves outside the job folder (``..``, absolute elsewhere, or a symlink out).
    """
    root = root.resolve()
    candidate = Path(path)
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if resolved != root and root not in resolved.parents:
        raise _outside(path)
    return resolved


def job_path(root: Path, path: str) -> Path:
    """``path`` (relative to the job folder, or absolute inside it) as a path below ``root``, checked lexically.

    No link is followed or even looked at: whoever opens the result does it with
    :func:`insightloom.fileio.read_window` (or another no-follow helper), which refuses a link at every component
    in the same walk that opens the file, so nothing can be swapped between a check and the open.

    Raises:
        BadInputError: The path leaves the job folder (``..``, absolute elsewhere) or holds a NUL byte.
    """
    if "\0" in path:
        raise BadInputError(f"Path {path!r} holds a NUL byte.", "pass the file's name as it is listed.")
    base = os.path.abspath(root)
    candidate = os.path.normpath(os.path.join(base, path))  # an absolute ``path`` replaces ``base``
    anchors = [base]
    if os.path.isabs(path):  # it may name the job's real location, past a link above the job folder
        anchors.append(os.path.realpath(base))
    for anchor in anchors:
        if candidate == anchor or candidate.startswith(anchor.rstrip(os.sep) + os.sep):
            return Path(base, os.path.relpath(candidate, anchor))
    raise _outside(path)
