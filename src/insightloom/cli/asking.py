"""``insightloom ask``: which jobs a question searches, how the answer streams, and what the exit code says."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from ..ask.sessions import FINISHED, SESSION_RE
from ..errors import BadInputError, JobConflict
from ..jobs import JobFolder, iter_jobs

EXIT_ANSWERED, EXIT_BAD_INPUT, EXIT_ABSTAINED = 0, 2, 3
#: How a citation's fragment is previewed after the answer.
PREVIEW_CHARS = 160


def check_session(name: str, option: str = "--session") -> str:
    """A valid session name.

    Raises:
        BadInputError: It is not one.
    """
    if not SESSION_RE.match(name):
        raise BadInputError(
            f"{option} {name!r} is not a session name.", "use letters, digits, '.', '_' or '-' (64 characters at most)."
        )
    return name


def finished_job(path: Path) -> Path:
    """The folder of a job that finished with a report.

    Raises:
        BadInputError: ``path`` is not a job folder.
        JobConflict: The job has not finished (or failed, or was cancelled).
    """
    job = JobFolder.open(path)
    state = job.status().get("status")
    if state not in FINISHED:
        fix = (
            f"run `insightloom resume {job.root}` to finish it, then ask again."
            if state in ("queued", "running", "awaiting_review")
            else "ask about a job that completed."
        )
        raise JobConflict(f"Job {job.id} is {state}: only a job that finished with a report can be asked about.", fix)
    return job.root


def finished_jobs_in(artifacts: Path) -> list[Path]:
    """Every finished job folder under an artifacts folder, oldest first.

    Raises:
        BadInputError: The folder is missing or holds no finished job.
    """
    if not artifacts.is_dir():
        raise BadInputError(f"--jobs-from {artifacts} is not a folder.", "pass the artifacts folder the jobs ran in.")
    found = [root for root, status in iter_jobs(artifacts) if status.get("status") in FINISHED]
    if not found:
        raise BadInputError(
            f"{artifacts} holds no finished jobs.", "run a job there first (`insightloom run ... --yes`)."
        )
    return found


def split_arguments(args: list[str], jobs_from: Path | None) -> tuple[list[Path], str]:
    """``JOB_DIR... QUESTION`` → the job folders (plus ``--jobs-from``'s) and the question.

    Raises:
        BadInputError: No question, no job, or a job that can't be asked about.
    """
    if not args or not args[-1].strip():
        raise BadInputError("No question given.", 'put it last: insightloom ask JOB_DIR "What was revenue in March?"')
    question = args[-1].strip()
    dirs = [finished_job(Path(arg)) for arg in args[:-1]]
    if jobs_from is not None:
        dirs += finished_jobs_in(jobs_from)
    if not dirs:
        raise BadInputError(
            "No job to ask about.", "name a job folder before the question, or pass --jobs-from ARTIFACTS."
        )
    return list(dict.fromkeys(dirs)), question


class AnswerPrinter:
    """Writes the answer to ``out`` piece by piece as ``ask`` hands it over (only once it passed its checks)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.streamed: list[str] = []

    def __call__(self, text: str) -> None:
        self.streamed.append(text)
        self.out.write(text)
        self.out.flush()

    def finish(self, answer: str) -> None:
        """End the answer on its own line; the whole answer is written when it was not streamed as it is."""
        draft = "".join(self.streamed)
        if draft and not draft.endswith("\n"):
            self.out.write("\n")
        if draft.split() != answer.split():
            self.out.write(answer.rstrip("\n") + "\n")
        self.out.flush()


def citation_lines(citations: list[dict[str, Any]]) -> list[str]:
    """One line per cited fragment: ``[F3] <source> / <section>: <text preview>``, led by its job when several are."""
    several = len({cite.get("job_id") for cite in citations}) > 1
    lines = []
    for cite in citations:
        where = " / ".join(str(cite[key]) for key in ("source", "section") if cite.get(key))
        text = " ".join(str(cite.get("text", "")).split())
        if len(text) > PREVIEW_CHARS:
            text = text[: PREVIEW_CHARS - 1] + "…"
        job = f"{cite.get('job_id')} · " if several else ""
        lines.append(f"[{cite.get('id', '?')}] {job}{where}: {text}")
    return lines
