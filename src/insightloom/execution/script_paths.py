"""Where a script may live: inside the job's ``code/`` folder, nowhere else."""

from __future__ import annotations

import logging
from pathlib import Path, PurePosixPath

from insightloom.errors import BadInputError

logger = logging.getLogger(__name__)

CODE_DIR = "code"


def resolve_script_path(job_dir: Path, file_path: str) -> Path:
    """Turn the model's ``file_path`` into an absolute path inside ``<job>/code/``.

    The path is relative to ``code/``; a leading ``code/`` is accepted and not doubled (models often write it).
    Anything that resolves outside ``code/`` (``../../x.py``, an absolute path elsewhere, a symlink pointing out)
    is refused, because scripts are untrusted and the tool writes the file before running it.

    Raises:
        BadInputError: The path is empty, not a ``.py`` file, or escapes the job's ``code/`` folder.
    """
    code_dir = (Path(job_dir) / CODE_DIR).resolve()
    raw = (file_path or "").strip()
    if not raw:
        raise BadInputError("write_and_execute_tool: file_path is empty.", fix="Pass a name such as 'analysis_1.py'.")
    candidate = Path(raw)
    if candidate.is_absolute():
        resolved = candidate.resolve()
    else:
        parts = [p for p in PurePosixPath(raw.replace("\\", "/")).parts if p != "."]
        if parts and parts[0] == CODE_DIR:
            parts = parts[1:]
        if not parts:
            raise BadInputError(
                f"file_path {raw!r} names the code folder, not a script.",
                fix="Pass a file name such as 'analysis_1.py'.",
            )
        resolved = code_dir.joinpath(*parts).resolve()
    if resolved == code_dir or not resolved.is_relative_to(code_dir):
        raise BadInputError(
            f"file_path {raw!r} resolves to {resolved}, outside the job's code folder {code_dir}.",
            fix="Use a plain file name relative to code/, such as 'analysis_1.py' (no '..', no absolute paths).",
        )
    if resolved.suffix != ".py":
        raise BadInputError(f"file_path {raw!r} is not a Python file.", fix="Name the script with a .py suffix.")
    return resolved


def ensure_inside_code(script: Path, job_dir: Path) -> Path:
    """Re-check, at run time, that a script path handed to a runner is inside ``<job>/code/`` and exists.

    Raises:
        BadInputError: The script is outside ``code/`` or missing.
    """
    code_dir = (Path(job_dir) / CODE_DIR).resolve()
    resolved = Path(script).resolve()
    if not resolved.is_relative_to(code_dir) or resolved == code_dir:
        raise BadInputError(
            f"Script {script} is outside the job's code folder {code_dir}.",
            fix="Write scripts under <job>/code/ (use resolve_script_path).",
        )
    if not resolved.is_file():
        raise BadInputError(f"Script {resolved} does not exist.", fix="Write the script before running it.")
    return resolved
