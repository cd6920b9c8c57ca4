"""Jobs as the service sees them: owned, queued, reviewed, cancelled, recovered after a restart.

Everything a job knows is in its folder (``job.json`` carries the ``owner`` and ``auto_approve`` keys the service
adds), so any process can pick a job up: this server after a restart, or a worker elsewhere. In memory the manager
keeps only the runtimes of jobs that have queued or running work here, so that a cancel can reach a running job and
one job never has two event logs in one process. A job waiting for review has no runtime and holds no worker.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import shutil
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from ..config import PROVIDERS, Settings, resolve_auto_provider
from ..errors import BadInputError, InsightloomError, JobConflict, JobNotFound, QueueFull, ServiceBusy
from ..events import TERMINAL_KINDS
from ..fileio import iter_real_files, write_text_atomic
from ..joblock import LOCK_FILE, JobLocked, lock_alive
from ..jobs import JobFolder, iter_jobs, read_json
from ..runtime import JobRuntime
from ..workflow import AutoApprove, Decision, JobOptions, create_job, drive, load_runtime, resume, review, stages, start
from .plan_html import plan_html
from .queue import JobQueue, ThreadPoolJobQueue, WorkItem
from .service_settings import ServiceConfig
from .sse import EventHub
from .uploads import Upload

logger = logging.getLogger(__name__)
OWNERS_DIR = ".owners"

JOB_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{12}")
MAX_REQUEST_CHARS = 20_000
MAX_REVISIONS_LIMIT = 10
ACTIVE = ("queued", "running")


def not_found() -> JobNotFound:
    return JobNotFound("No such job.")


@dataclass
class _Live:
    """A job with work queued or running in this process."""

    rt: JobRuntime
    items: int = 0
    review_pending: bool = False


class JobManager:
    """Owns the artifacts root for the service: submissions, reviews, cancels, downloads and recovery.

    Args:
        settings: The server's settings; each job gets a copy with its own provider and revision limit.
        config: Server-only settings (pool size, keepalive...).
        cwd: Where skills in ``./skills`` are looked up for the jobs.
    """

    def __init__(self, settings: Settings, config: ServiceConfig, *, cwd: Path | None = None) -> None:
        self.settings = settings
        self.config = config
        self.root = settings.artifacts.expanduser().resolve()
        self.cwd = cwd or Path.cwd()
        self.hub = EventHub()
        self.stopping = threading.Event()
        self.queue: JobQueue | None = None
        self._lock = threading.Lock()
        self._live: dict[str, _Live] = {}

    # -- lifecycle ------------------------------------------------------------------------------------------------

    def open(self, queue: JobQueue | None = None) -> None:
        """Start taking work (with an in-process pool unless another queue is given) and recover stopped jobs."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.queue = queue or ThreadPoolJobQueue(
            self.execute, workers=self.config.workers, max_queued=self.config.max_queued
        )
        self.recover()

    def begin_stop(self) -> None:
        """End the SSE streams so the server's connections can close."""
        self.stopping.set()
        self.hub.notify_all()

    def close(self) -> None:
        self.begin_stop()
        if self.queue is not None:
            self.queue.close()

    def running(self) -> int:
        """Work items running in this process now."""
        return int(getattr(self.queue, "running", 0))

    # -- lookup -----------------------------------------------------------------------------------------------------

    def job_dir(self, job_id: str) -> Path:
        """The folder of a well-formed job id (ids are unguessable; a malformed one is simply not found)."""
        if not JOB_ID.fullmatch(job_id):
            raise not_found()
        return self.root / job_id

    def owner_of(self, job_id: str) -> str | None:
        """Who submitted a job, from the owners folder beside the jobs.

        Not from job.json: analysis scripts may write anywhere in their own job folder, never in the artifacts root.
        """
        try:
            return (self.root / OWNERS_DIR / job_id).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def record_owner(self, job_id: str, user: str) -> None:
        write_text_atomic(self.root / OWNERS_DIR / job_id, user + "\n")

    def owned(self, job_id: str, user: str) -> dict[str, Any]:
        """``job.json`` of a job that belongs to ``user``; anyone else's job is answered as missing (404)."""
        if self.owner_of(self.job_dir(job_id).name) != user:
            raise not_found()
        try:
            return read_json(self.job_dir(job_id) / "job.json")
        except (OSError, ValueError):
            raise not_found() from None

    def list_jobs(self, user: str) -> list[dict[str, Any]]:
        jobs = []
        for folder, status in iter_jobs(self.root):
            if JOB_ID.fullmatch(folder.name) and self.owner_of(folder.name) == user:
                keys = ("id", "status", "stage", "created_at")
                jobs.append({**{k: status.get(k) for k in keys}, "request": _request_text(folder)[:200]})
        return sorted(jobs, key=lambda j: j["created_at"] or "", reverse=True)

    def describe(self, job_id: str, user: str) -> dict[str, Any]:
        """What ``GET /jobs/{id}`` answers: status, plan (Markdown and safe HTML), revisions, usage, artifacts."""
        status = self.owned(job_id, user)
        root = self.job_dir(job_id)
        plan = _read_text(root / "plan.md")
        usage = _read_json(root / "usage.json")
        request = _read_json(root / "request.json") or {}
        with self._lock:
            live = self._live.get(job_id)
            pending = bool(live and live.review_pending)
        report = root / "final_report.docx"
        return {
            "id": status["id"],
            "status": status["status"],
            "stage": status.get("stage"),
            "created_at": status.get("created_at"),
            "updated_at": status.get("updated_at"),
            "error": status.get("error"),
            "request": request.get("request"),
            "language": request.get("language", "en"),
            "plan": plan,
            "plan_html": plan_html(plan) if plan else None,
            "revisions": int(status.get("revision", 0)),
            "max_revisions": status.get("max_revisions"),
            "auto_approve": bool(status.get("auto_approve")),
            "review_pending": pending,
            "usage": usage,
            "report": "final_report.docx" if report.is_file() and status["status"] in TERMINAL_KINDS else None,
            "artifacts": list_artifacts(root),
        }

    def events_path(self, job_id: str, user: str) -> Path:
        self.owned(job_id, user)
        return self.job_dir(job_id) / "events.jsonl"

    def artifact(self, job_id: str, user: str, relative: str) -> Path:
        """A real file inside the job folder; ``../``, NUL bytes and any symlink on the way are not found."""
        self.owned(job_id, user)
        root = self.job_dir(job_id).resolve()
        parts = Path(relative).parts
        if "\x00" in relative or not parts or any(p in ("..", "/") for p in parts):
            raise not_found()
        target = root.joinpath(*parts)
        current = root
        for part in parts:  # a script may have planted a link anywhere in its folder: never follow one
            current = current / part
            if current.is_symlink():
                raise not_found()
        if not target.is_file() or not _listed(target.relative_to(root)):
            raise not_found()
        return target

    # -- actions ----------------------------------------------------------------------------------------------------

    def submit(
        self,
        user: str,
        files: Iterable[tuple[Upload, IO[bytes]]],
        request: str,
        *,
        provider: str | None = None,
        auto_approve: bool = False,
        max_revisions: int | None = None,
    ) -> str:
        """Create a job from uploads, record its owner and queue its start; returns the job id.

        The uploads go straight into the job's ``data/`` folder, where intake leaves them in place: a server that
        stops before intake ran resumes the job from there.

        Raises:
            BadInputError: An empty request or a bad provider or revision count.
            ServiceBusy: The queue is full.
        """
        request = request.strip()
        if not request:
            raise BadInputError("The 'request' field is empty.", "say what you want, e.g. 'Analyze this data'.")
        if len(request) > MAX_REQUEST_CHARS:
            raise BadInputError(f"The 'request' field is over {MAX_REQUEST_CHARS:,} characters.", "shorten it.")
        settings = self.job_settings(provider, max_revisions)
        job = JobFolder.create(self.root)
        try:
            inputs, columns = [], None
            for upload, stream in files:
                dest = job.path("data", upload.name)
                with dest.open("wb") as out:
                    shutil.copyfileobj(stream, out)
                if upload.is_columns:
                    columns = dest
                else:
                    inputs.append(dest)
            rt = create_job(
                JobOptions(inputs=inputs, request=request, settings=settings, columns_file=columns, cwd=self.cwd), job
            )
            self.record_owner(job.id, user)
            rt.job.update(owner=user, auto_approve=auto_approve)  # shown to people; ownership is the owners folder
        except BaseException:
            shutil.rmtree(job.root, ignore_errors=True)
            raise
        self._enqueue(WorkItem(job.id, "start", inputs=tuple(p.name for p in inputs)), rt)
        logger.info("job %s submitted by %s", job.id, user)
        return job.id

    def job_settings(self, provider: str | None, max_revisions: int | None) -> Settings:
        """The server settings with this job's provider and revision limit (a copy: jobs never share settings)."""
        settings = dataclasses.replace(self.settings, artifacts=self.root)
        try:
            if provider:
                if provider not in PROVIDERS:
                    raise BadInputError(f"Unknown provider {provider!r}.", f"use one of {', '.join(PROVIDERS)}.")
                settings = settings.with_provider(provider)
            if max_revisions is not None:
                if not 0 <= max_revisions <= MAX_REVISIONS_LIMIT:
                    raise BadInputError(
                        f"max_revisions is {max_revisions}.", f"send a number from 0 to {MAX_REVISIONS_LIMIT}."
                    )
                settings = dataclasses.replace(settings, max_revisions=max_revisions)
            settings, _ = resolve_auto_provider(settings)
        except BadInputError:
            raise
        except InsightloomError as exc:
            raise BadInputError(exc.message, exc.fix) from None
        return settings

    def review(self, job_id: str, user: str, *, approve: bool, feedback: str = "") -> None:
        """Queue a review decision.

        Raises:
            JobConflict: The job is not awaiting review, a review is already being applied, or feedback comes
                after the last allowed revision.
        """
        status = self.owned(job_id, user)
        if status["status"] != "awaiting_review":
            raise JobConflict(f"Job {job_id} is not awaiting review (it is {status['status']}).")
        revision, limit = int(status.get("revision", 0)), int(status.get("max_revisions", 0))
        if not approve and revision >= limit:
            raise JobConflict(
                f"No revisions left: {limit} were allowed and this is revision {revision}.", "approve or cancel."
            )
        decision: Literal["approve", "feedback"] = "approve" if approve else "feedback"
        self._enqueue(WorkItem(job_id, "review", decision=decision, feedback=feedback), exclusive_review=True)

    def cancel(self, job_id: str, user: str) -> str:
        """Stop a job: its runtime's cancel flag if it has work here, else cancel its pending review at once.

        Returns:
            ``requested`` (a running or queued job stops at its next safe point) or ``cancelled``.

        Raises:
            JobConflict: The job has ended.
        """
        status = self.owned(job_id, user)
        with self._lock:
            live = self._live.get(job_id)
            if live is not None:
                live.rt.cancel.set()
        if live is not None:
            # The flag stops running work at its next model or tool call; this item, queued behind that work,
            # ends the job if the work stopped at a plan review instead (it does nothing if the job has ended).
            self._enqueue(WorkItem(job_id, "review", decision="cancel"))
            return "requested"
        if status["status"] != "awaiting_review":
            if status["status"] not in ACTIVE:
                raise JobConflict(f"Job {job_id} cannot be cancelled: it already ended ({status['status']}).")
            JobFolder.open(self.root / job_id).request_cancel()  # another process runs it: it checks this file
            return "requested"
        live = self._claim(job_id)
        if live is None:  # work for the job arrived meanwhile: stop that instead
            return self.cancel(job_id, user)
        try:
            review(live.rt, Decision("cancel"))
        except InsightloomError as exc:
            raise JobConflict(f"Job {job_id} cannot be cancelled: {exc.message}", exc.fix) from None
        finally:
            self._release(job_id, review_done=False)
        return "cancelled"

    # -- work ------------------------------------------------------------------------------------------------------

    def execute(self, item: WorkItem) -> None:
        """Run one work item (called by a queue worker, here or in another process)."""
        with self._lock:
            live = self._live.get(item.job_id)
        rt = live.rt if live is not None else self._load(item.job_id)
        try:
            outcome = self._run(rt, item)
            if outcome is None and rt.job.status().get("auto_approve") and not rt.cancel.is_set():
                drive(rt, None, AutoApprove())
        except JobLocked as exc:
            logger.warning("job %s: %s", item.job_id, exc)
        except InsightloomError as exc:
            logger.warning("job %s: %s failed: %s", item.job_id, item.action, exc)
        finally:
            if live is not None:
                self._release(item.job_id, review_done=item.action == "review" and item.decision != "cancel")

    def _run(self, rt: JobRuntime, item: WorkItem) -> object:
        if item.action == "review":
            if item.decision != "cancel" and rt.job.status().get("pending_review"):
                rt.job.update(pending_review=None)
            cancel = rt.cancel.is_set() or item.decision == "cancel"
            if cancel and rt.job.status()["status"] != "awaiting_review":
                return "nothing to cancel"  # the job stopped or ended before this item's turn
            return review(rt, Decision("cancel") if cancel else Decision(item.decision, item.feedback))
        if rt.cancel.is_set():
            stages.finish(rt, "cancelled")
            return "cancelled"
        if item.action == "resume":
            return resume(rt)
        inputs = [rt.job.path("data", name) for name in item.inputs]
        columns = rt.job.path("data", "column_definitions.json")
        return start(rt, inputs, columns if columns.is_file() else None)

    def recover(self) -> tuple[list[str], list[str]]:
        """On start: resume this service's jobs that stopped mid-run (their lock is dead); list those awaiting review.

        Reviews that were accepted but had not run yet, and auto-approvals, are queued again. Jobs without an
        ``owner`` were started by the CLI and are left to ``insightloom resume``.

        Returns:
            The ids resumed and the ids awaiting review.
        """
        resumed, waiting = [], []
        for folder, status in iter_jobs(self.root):
            if not JOB_ID.fullmatch(folder.name) or self.owner_of(folder.name) is None:
                continue
            if status["status"] in ACTIVE and not lock_alive(folder):
                self._enqueue(WorkItem(folder.name, "resume"))
                resumed.append(folder.name)
            elif status["status"] == "awaiting_review":
                waiting.append(folder.name)
                pending = status.get("pending_review")
                if not pending and status.get("auto_approve"):
                    pending = {"decision": "approve"}
                if pending:
                    item = WorkItem(folder.name, "review", pending["decision"], pending.get("feedback", ""))
                    self._enqueue(item, exclusive_review=True)
        if resumed or waiting:
            logger.info("recovered jobs: %d resumed, %d awaiting review", len(resumed), len(waiting))
        return resumed, waiting

    # -- bookkeeping ---------------------------------------------------------------------------------------------------

    def _load(self, job_id: str) -> JobRuntime:
        rt = load_runtime(self.job_dir(job_id))
        self.hub.attach(rt.job.events)
        return rt

    def _put(self, item: WorkItem) -> None:
        assert self.queue is not None, "JobManager.open() was not called"
        try:
            self.queue.put(item)
        except QueueFull as exc:
            raise ServiceBusy(f"The server is busy ({exc}).", "try again in a minute.") from None

    def _enqueue(self, item: WorkItem, rt: JobRuntime | None = None, *, exclusive_review: bool = False) -> None:
        if not getattr(self.queue, "in_process", False):
            self._put(item)  # workers elsewhere load the job from its folder
            return
        with self._lock:
            known = item.job_id in self._live
        if not known and rt is None:
            rt = self._load(item.job_id)  # outside the lock: it reads the job folder
        with self._lock:
            live = self._live.get(item.job_id)
            if live is None:
                assert rt is not None
                live = self._live[item.job_id] = _Live(rt)
            if exclusive_review:
                if live.review_pending:
                    raise JobConflict(f"A review of job {item.job_id} is already being applied.")
                live.review_pending = True
            live.items += 1
        try:
            if exclusive_review:  # on disk too: a server stopped before the item ran queues it again at start
                live.rt.job.update(pending_review={"decision": item.decision, "feedback": item.feedback})
            self._put(item)
        except InsightloomError:
            self._release(item.job_id, review_done=exclusive_review)
            raise

    def _claim(self, job_id: str) -> _Live | None:
        """Hold a job with no work here, for an action done at once; None if work for it arrived meanwhile."""
        rt = self._load(job_id)
        with self._lock:
            if job_id in self._live:
                return None
            live = self._live[job_id] = _Live(rt, items=1)
            return live

    def _release(self, job_id: str, *, review_done: bool) -> None:
        with self._lock:
            live = self._live.get(job_id)
            if live is None:
                return
            live.items -= 1
            if review_done:
                live.review_pending = False
            if live.items <= 0:
                del self._live[job_id]


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _read_json(path: Path) -> Any:
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def _request_text(folder: Path) -> str:
    data = _read_json(folder / "request.json")
    return str(data.get("request", "")) if isinstance(data, dict) else ""


def _listed(relative: Path) -> bool:
    """Artifacts exclude the lock and hidden or temporary files (atomic writes use ``.name.tmp`` files)."""
    return relative.name != LOCK_FILE and not any(part.startswith(".") for part in relative.parts)


def list_artifacts(root: Path) -> list[str]:
    """The job's real files, as paths relative to its folder (symlinks, to files or folders, are never listed)."""
    found = (path.relative_to(root) for path in iter_real_files(root))
    return sorted(p.as_posix() for p in found if _listed(p))
