"""Confinement of model-given paths to the job folder."""

from __future__ import annotations

from pathlib import Path

from ..errors import BadInputError


def inside_job(root: Path, path: str) -> Path:
    """Resolve ``path`` (relative to the job folder, or absolute) and refuse anything outside the job.

    Raises:
        BadInputError: The path resolves outside the job folder (``..``, absolute elsewhere, or a symlink out).
    """
    root = root.resolve()
    candidate = Path(path)
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if resolved != root and root not in resolved.parents:
        raise BadInputError(f"Path {path!r} is outside the job folder.", "use a path relative to the job folder.")
    return resolved
