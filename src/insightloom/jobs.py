"""The job folder: its layout, ``job.json`` status and atomic JSON writes.

A job never shares mutable state with another: everything it knows lives in its own folder and its own objects.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import BadInputError
from .events import EventLog
from .fileio import read_json, write_json, write_text_atomic
from .storage.ids import job_id_of
from .timeutil import compact_utc, utc_now

logger = logging.getLogger(__name__)

JobStatus = Literal["queued", "running", "awaiting_review", "completed", "needs_review", "failed", "cancelled"]
SUBFOLDERS = ("data", "cache", "code", "charts", "transcripts")
CANCEL_FILE = "cancel.request"


def new_job_id() -> str:
    """A sortable, unique id: ``YYYYMMDDTHHMMSSZ-<12 hex>``."""
    return f"{compact_utc()}-{secrets.token_hex(6)}"


def iter_jobs(artifacts: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each job folder under ``artifacts`` with its job.json, oldest first; unreadable ones are skipped.

    The artifacts folder is the host's, but a job.json is its job's: it is read without following a link a script
    planted in its place.
    """
    if not artifacts.is_dir():
        return
    for path in sorted(artifacts.glob("*/job.json")):
        try:
            yield path.parent, read_json(path, beneath=path.parent)
        except (OSError, ValueError, BadInputError):
            logger.warning("skipping %s: job.json is unreadable", path.parent)


@dataclass
class JobFolder:
    """One job's folder and its status file.

    Attributes:
        root: The absolute job folder.
        id: The job id (also when ``--job-dir`` named the folder).
    """

    root: Path
    id: str
    events: EventLog = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        self.events = EventLog(self.root / "events.jsonl", self.id)

    @classmethod
    def create(cls, artifacts: Path, job_dir: Path | None = None) -> JobFolder:
        """Make a new job folder under ``artifacts``, or exactly at ``job_dir``.

        Raises:
            BadInputError: ``job_dir`` exists and is not empty.
        """
        job_id = new_job_id()
        if job_dir is not None:
            root = job_dir.expanduser().resolve()
            if root.exists() and (not root.is_dir() or any(root.iterdir())):
                raise BadInputError(
                    f"--job-dir {root} already exists and is not empty.",
                    "pass a new or empty folder, or leave out --job-dir to use the artifacts folder.",
                )
        else:
            root = (artifacts.expanduser() / job_id).resolve()
        root.mkdir(parents=True, exist_ok=True)
        for name in SUBFOLDERS:
            (root / name).mkdir(exist_ok=True)
        job = cls(root, job_id)
        now = utc_now()
        write_json(
            root / "job.json",
            {"id": job_id, "status": "queued", "stage": None, "created_at": now, "updated_at": now},
            beneath=root,
        )
        return job

    @classmethod
    def open(cls, root: Path) -> JobFolder:
        """Open an existing job folder by its ``job.json``, its id from the folder (:func:`job_id_of`).

        Raises:
            BadInputError: No job.json, an unreadable one, or one whose id disagrees with its folder or is no id
                (a script may rewrite job.json: its id would otherwise name the follow-up's scratch path).
        """
        root = root.expanduser().resolve()
        path = root / "job.json"
        if not path.is_file():
            raise BadInputError(
                f"{root} is not a job folder (no job.json).", "pass a folder made by `insightloom run`."
            )
        try:
            status = read_json(path, beneath=root)
        except (OSError, ValueError) as exc:
            raise BadInputError(
                f"{path} is not readable JSON ({type(exc).__name__}).", "restore the job's job.json from a backup."
            ) from None
        return cls(root, job_id_of(root, status.get("id") if isinstance(status, dict) else None))

    def path(self, *parts: str) -> Path:
        return self.root.joinpath(*parts)

    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = read_json(self.path("job.json"), beneath=self.root)
        return status

    def update(
        self, *, status: JobStatus | None = None, stage: str | None = None, error: str | None = None, **extra: Any
    ) -> None:
        """Update job.json (``extra`` keys such as ``revision`` too); the caller emits the stage event."""
        with self._lock:
            data = self.status()
            data.update(extra)
            if status is not None:
                data["status"] = status
            if stage is not None:
                data["stage"] = stage
            if error is not None:
                data["error"] = error
            elif status is not None and status != "failed":
                data.pop("error", None)
            data["updated_at"] = utc_now()
            write_json(self.path("job.json"), data, beneath=self.root)

    def set_stage(self, stage: str) -> None:
        self.update(status="running", stage=stage)
        self.events.emit("stage", name=stage)

    def request_cancel(self) -> None:
        """Ask whichever process runs this job to stop at its next model or tool call."""
        write_text_atomic(self.path(CANCEL_FILE), utc_now() + "\n", beneath=self.root)

    def cancel_requested(self) -> bool:
        return self.path(CANCEL_FILE).exists()

    def write_json(self, name: str, data: Any) -> None:
        """Write a job file atomically, refusing to follow a symlink a script planted."""
        write_json(self.path(name), data, beneath=self.root)

    def write_text(self, name: str, text: str) -> None:
        """Write a job text file (``plan.md`` ...) atomically, refusing to follow a symlink a script planted."""
        write_text_atomic(self.path(name), text, beneath=self.root)
