"""Where a script may live: inside the job's ``code/`` folder, nowhere else."""

from __future__ import annotations

import logging
import os
from pathlib import Path, PurePosixPath

from insightloom.errors import BadInputError, UnsafePathError

logger = logging.getLogger(__name__)

CODE_DIR = "code"


def _real_code_dir(job_dir: Path) -> Path:
    """``<job>/code`` as the host made it, refusing a symlink a script may have put in its place."""
    job = Path(job_dir).resolve()  # the job folder itself is the host's; only what is inside it is untrusted
    code_dir = job / CODE_DIR
    if code_dir.is_symlink() or (code_dir.exists() and not code_dir.is_dir()):
        raise UnsafePathError(
            f"{code_dir} is a symbolic link or not a folder, so no script is written or run through it.",
            fix="remove it (a script may have replaced the code folder) and write the script again.",
        )
    return code_dir


def _no_links_below(code_dir: Path, target: Path) -> None:
    current = code_dir
    for part in target.relative_to(code_dir).parts:
        current = current / part
        if current.is_symlink():
            raise UnsafePathError(
                f"{current} is a symbolic link, so the host will not write or run a script through it.",
                fix="use another file name, or remove the link.",
            )


def resolve_script_path(job_dir: Path, file_path: str) -> Path:
    """Turn the model's ``file_path`` into an absolute path inside ``<job>/code/``.

    The path is relative to ``code/``; a leading ``code/`` is accepted and not doubled (models often write it).
    It is checked lexically, never by following links: anything outside ``code/`` (``../../x.py``, an absolute path
    elsewhere) is refused, and so is a ``code/`` folder or a path component that a script replaced with a symbolic
    link, because scripts are untrusted and the tool writes the file before running it.

    Raises:
        BadInputError: The path is empty, not a ``.py`` file, or escapes the job's ``code/`` folder.
        UnsafePathError: ``code/`` or a folder on the way is a symbolic link.
    """
    code_dir = _real_code_dir(job_dir)
    raw = (file_path or "").strip()
    if not raw:
        raise BadInputError("write_and_execute_tool: file_path is empty.", fix="Pass a name such as 'analysis_1.py'.")
    candidate = Path(raw)
    if candidate.is_absolute():
        resolved = Path(os.path.normpath(candidate))
    else:
        parts = [p for p in PurePosixPath(raw.replace("\\", "/")).parts if p != "."]
        if parts and parts[0] == CODE_DIR:
            parts = parts[1:]
        if not parts:
            raise BadInputError(
                f"file_path {raw!r} names the code folder, not a script.",
                fix="Pass a file name such as 'analysis_1.py'.",
            )
        resolved = Path(os.path.normpath(code_dir.joinpath(*parts)))
    if resolved == code_dir or not resolved.is_relative_to(code_dir):
        raise BadInputError(
            f"file_path {raw!r} resolves to {resolved}, outside the job's code folder {code_dir}.",
            fix="Use a plain file name relative to code/, such as 'analysis_1.py' (no '..', no absolute paths).",
        )
    if resolved.suffix != ".py":
        raise BadInputError(f"file_path {raw!r} is not a Python file.", fix="Name the script with a .py suffix.")
    _no_links_below(code_dir, resolved)
    return resolved


def ensure_inside_code(script: Path, job_dir: Path) -> Path:
    """Re-check, at run time, that a script path handed to a runner is inside ``<job>/code/`` and exists.

    Raises:
        BadInputError: The script is outside ``code/`` or missing.
    """
    code_dir = _real_code_dir(job_dir)
    resolved = Path(os.path.normpath(Path(script).absolute()))
    given_job = Path(os.path.normpath(Path(job_dir).absolute()))
    if resolved.is_relative_to(given_job):  # the same job folder named through a link above it
        resolved = code_dir.parent / resolved.relative_to(given_job)
    if not resolved.is_relative_to(code_dir) or resolved == code_dir:
        raise BadInputError(
            f"Script {script} is outside the job's code folder {code_dir}.",
            fix="Write scripts under <job>/code/ (use resolve_script_path).",
        )
    _no_links_below(code_dir, resolved)
    if not resolved.is_file():
        raise BadInputError(f"Script {resolved} does not exist.", fix="Write the script before running it.")
    return resolved
