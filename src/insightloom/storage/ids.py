"""Checks on the names a store turns into paths and keys: job ids and paths relative to a job folder.

A job id or a relative path may come from an HTTP request, an AgentCore payload or a queued message, so each is
checked before it becomes part of a local path or an S3 key (``"../../etc"`` must never be joined onto anything).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import BadInputError, JobNotFound

#: What :func:`insightloom.jobs` names a job folder: a UTC timestamp and 12 hex digits.
JOB_ID_RE = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{12}")


def check_job_id(job_id: str) -> str:
    """Return ``job_id`` when it is well formed.

    Raises:
        JobNotFound: It is not a job id (no job can have it, so it is reported like a missing job).
    """
    if not isinstance(job_id, str) or not JOB_ID_RE.fullmatch(job_id):
        raise JobNotFound(f"{str(job_id)[:80]!r} is not a job id.", "job ids look like 20260101T120000Z-0123456789ab.")
    return job_id


def check_relative(relative: str) -> str:
    """Return ``relative`` (a posix path inside a job folder) when it cannot name anything outside the folder.

    Raises:
        BadInputError: It is empty, absolute, has an empty, ``.`` or ``..`` part, a backslash or a NUL.
    """
    parts = relative.split("/") if isinstance(relative, str) else [""]
    if not relative or "\0" in relative or "\\" in relative or any(part in ("", ".", "..") for part in parts):
        raise BadInputError(
            f"{str(relative)[:200]!r} is not a path inside a job folder.",
            "name a job file by its posix path relative to the job folder, e.g. report/final_report.md.",
        )
    return relative


def job_id_of(root: Path, recorded: object) -> str:
    """The id of the job in the folder ``root``: where the store keeps it, never job.json's word alone.

    The artifacts store names each job folder by its id, and no script can rename its own folder, so a folder
    named like an id IS the job's id and job.json (which any script of the job can rewrite) must agree with it. A
    ``--job-dir`` folder may have any name: its job.json's id is taken, and it must still be a well-formed id, so
    that it can never name a path (``/tmp/x``, ``../other``) or put control characters in a log line.

    Args:
        root: The job folder.
        recorded: The ``id`` its job.json holds (anything a script may have written there).

    Raises:
        BadInputError: The recorded id disagrees with the folder's name, or is not a job id (the message names
            job.json and says how to repair it).
    """
    path = root / "job.json"
    named = root.name if JOB_ID_RE.fullmatch(root.name) else None
    if named is not None:
        if recorded != named:
            raise BadInputError(
                f"{path} gives the job id {str(recorded)[:80]!r}, but its folder says {named}: a script may have "
                "rewritten it, so the job is refused.",
                f'set "id" in {path} back to "{named}" (the folder\'s name).',
            )
        return named
    if not isinstance(recorded, str) or not JOB_ID_RE.fullmatch(recorded):
        raise BadInputError(
            f"{path} gives {str(recorded)[:80]!r} as the job id, which is not a job id: a script may have rewritten "
            "it, so the job is refused.",
            f'set "id" in {path} back to the id printed when the job started (like 20260101T120000Z-0123456789ab).',
        )
    return recorded
