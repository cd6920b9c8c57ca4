"""Jobs as the service sees them: owned, queued, reviewed, cancelled, recovered after a restart.

Everything a job knows is in its folder (``job.json`` carries the ``owner`` and ``auto_approve`` keys the service
adds), so any process can pick a job up: this server after a restart, or a worker elsewhere. In memory the manager
keeps only the runtimes of jobs that have queued or running work here, so that a cancel can reach a running job and
one job never has two event logs in one process. A job waiting for review has no runtime and holds no worker.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import re
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal

from ..config import PROVIDERS, Settings, resolve_auto_provider
from ..errors import BadInputError, InsightloomError, JobConflict, JobNotFound, QueueFull, ServiceBusy
from ..events import TERMINAL_KINDS
from ..fileio import write_chunks_atomic, write_json
from ..joblock import JobLocked
from ..jobs import CANCEL_FILE, JobFolder
from ..runtime import JobRuntime
from ..storage import ArtifactStore, HeldLock, listed, open_store
from ..storage.ids import JOB_ID_RE, check_relative
from ..storage.local import LocalStore
from ..storage.sync import LiveSync
from ..timeutil import utc_now
from ..workflow import AutoApprove, Decision, JobOptions, create_job, drive, load_runtime, resume, review, stages, start
from ..workflow.pipeline import job_inputs
from .delivery import Verdict, delivery_verdict
from .plan_html import plan_html
from .queue import START_STAGE, JobQueue, ThreadPoolJobQueue, WorkItem
from .service_settings import OPEN_USER, ServiceConfig
from .sse import EventHub
from .sweeper import due_items
from .uploads import Upload

logger = logging.getLogger(__name__)
#: The owners records beside the jobs: the store's ``owners`` kind (``<root>/.owners/<job_id>`` when local).
OWNERS_DIR = ".owners"
#: Where a worker leaves the result of a queued follow-up analysis, by request id (``WorkItem.stage``).
FOLLOWUPS_DIR = "ask/followups"
FOLLOWUP_ID = re.compile(r"[0-9a-f]{32}")
EVENTS_FILE = "events.jsonl"

JOB_ID = JOB_ID_RE
MAX_REQUEST_CHARS = 20_000
_UPLOAD_CHUNK = 1024 * 1024
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
        #: Where job folders live for good: ``root`` itself, or S3 with working copies in ``root``. A single-user
        #: server also shows the jobs the CLI made elsewhere (``--job-dir``), as ``insightloom jobs`` does.
        self.store: ArtifactStore = (
            LocalStore(self.root, registry=settings.jobs_registry)
            if config.open and config.deployment is None and not settings.artifact_store
            else open_store(settings.artifact_store, self.root)
        )
        #: The job folders on this machine (the store itself when it is local): jobs running here are read there.
        self._local: ArtifactStore = self.store if not self.store.remote else LocalStore(self.root)
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
        """Who submitted a job, from the owners record beside the jobs (``.owners/<job_id>`` in the store).

        Not from job.json: analysis scripts may write anywhere in their own job folder, never beside it.
        """
        return (self.store.read_meta("owners", job_id) or "").strip() or None

    def record_owner(self, job_id: str, user: str) -> None:
        self.store.write_meta("owners", job_id, user + "\n")

    def visible_owner(self, job_id: str) -> str | None:
        """Whose job this is on the page and in the API: its owner, or on an open server the local user's.

        A job run from the CLI has no owners record. With no token configured there is a single user, so such a
        job is theirs to list, open and ask about; with tokens it stays nobody's (404 for everyone).
        """
        owner = self.owner_of(job_id)
        return OPEN_USER if owner is None and self.config.open else owner

    def owned(self, job_id: str, user: str) -> dict[str, Any]:
        """``job.json`` of a job that belongs to ``user``; anyone else's job is answered as missing (404)."""
        if self.visible_owner(self.job_dir(job_id).name) != user:
            raise not_found()
        status = self._job_json(job_id, "job.json")
        if not isinstance(status, dict) or "status" not in status:
            raise not_found()
        return status

    def list_jobs(self, user: str) -> list[dict[str, Any]]:
        jobs = []
        for job_id in self.store.job_ids():
            if not JOB_ID.fullmatch(job_id) or self.visible_owner(job_id) != user:
                continue
            status = self._job_json(job_id, "job.json")
            if isinstance(status, dict):  # the id is the store's, never job.json's (a script may rewrite that)
                keys = ("status", "stage", "created_at")
                jobs.append(
                    {"id": job_id, **{k: status.get(k) for k in keys}, "request": self._request_text(job_id)[:200]}
                )
        return sorted(jobs, key=lambda j: j["created_at"] or "", reverse=True)

    def describe(self, job_id: str, user: str) -> dict[str, Any]:
        """What ``GET /jobs/{id}`` answers: status, plan (Markdown and safe HTML), revisions, usage, artifacts."""
        status = self.owned(job_id, user)
        raw_plan = self.store.read_bytes(job_id, "plan.md")
        plan = None if raw_plan is None else raw_plan.decode("utf-8", errors="replace")
        request = self._job_json(job_id, "request.json")
        request = request if isinstance(request, dict) else {}
        artifacts = self.store.list_files(job_id)
        with self._lock:
            live = self._live.get(job_id)
            pending = bool(live and live.review_pending)
        report = "final_report.docx" in artifacts and status["status"] in TERMINAL_KINDS
        return {
            "id": job_id,  # the store's id, never job.json's (a script may rewrite that)
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
            "usage": self._job_json(job_id, "usage.json"),
            "report": "final_report.docx" if report else None,
            "artifacts": artifacts,
        }

    def events_reader(self, job_id: str, user: str) -> Callable[[int], bytes]:
        """What an SSE stream reads ``events.jsonl`` through: the bytes after an offset.

        A job with work in this process is read from its local folder (fresher than a remote store, which gets the
        events when they are synced); any other from the store. Both hold the same append-only file, so one offset
        fits either.
        """
        self.owned(job_id, user)

        def read(offset: int) -> bytes:
            with self._lock:
                here = job_id in self._live
            return (self._local if here else self.store).read_from(job_id, EVENTS_FILE, offset)

        return read

    def artifact(self, job_id: str, user: str, relative: str) -> tuple[BinaryIO, int] | bytes:
        """A listed job file: a local store's regular file opened without following a link (the handle, which the
        caller closes, and its size), a remote store's bytes.

        ``../``, NUL bytes, hidden files, the lock and any symlink on the way are not found.
        """
        self.owned(job_id, user)
        try:
            check_relative(relative)
        except BadInputError:
            raise not_found() from None
        if not listed(relative):
            raise not_found()
        found = (
            self.store.open_file(job_id, relative)
            if isinstance(self.store, LocalStore)
            else self.store.read_bytes(job_id, relative)
        )
        if found is None:
            raise not_found()
        return found

    def _job_json(self, job_id: str, name: str) -> Any:
        """A JSON job file read through the store (never through a link), or None when missing or malformed."""
        return _read_json_bytes(self.store.read_bytes(job_id, name))

    def _request_text(self, job_id: str) -> str:
        data = self._job_json(job_id, "request.json")
        return str(data.get("request", "")) if isinstance(data, dict) else ""

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

        The folder is made here, under the local root, then pushed to the store. When the start cannot be queued
        (the queue is full or its broker is down) nothing is left behind: the folder, its store copy and its owners
        record are deleted, and the error propagates (HTTP 503).

        Raises:
            BadInputError: An empty request or a bad provider or revision count.
            ServiceBusy: The queue is full, or its broker cannot be reached (BrokerUnavailable).
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
                write_chunks_atomic(dest, iter(functools.partial(stream.read, _UPLOAD_CHUNK), b""), beneath=job.root)
                if upload.is_columns:
                    columns = dest
                else:
                    inputs.append(dest)
            rt = create_job(
                JobOptions(inputs=inputs, request=request, settings=settings, columns_file=columns, cwd=self.cwd), job
            )
            rt.job.update(owner=user, auto_approve=auto_approve)  # shown to people; ownership is the owners record
            self.store.push(job.id)
            self.record_owner(job.id, user)
            self._enqueue(WorkItem(job.id, "start", inputs=tuple(p.name for p in inputs), stage=START_STAGE), rt)
        except BaseException:
            self._discard(job)
            raise
        logger.info("job %s submitted by %s", job.id, user)
        return job.id

    def _discard(self, job: JobFolder) -> None:
        """Remove a job that could not be submitted: its folder here, its store copy and its owners record."""
        try:
            self.store.delete_job(job.id)
        except Exception:  # the original error matters more; an unreachable store leaves an unowned copy
            logger.exception("job %s: could not delete the unsubmitted job from the store", job.id)
        shutil.rmtree(job.root, ignore_errors=True)
        logger.info("job %s discarded: it could not be submitted", job.id)

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
            settings, _ = resolve_auto_provider(settings, deployment=self.config.deployment)
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
        item = WorkItem(job_id, "review", decision=decision, feedback=feedback, stage=f"rev{revision}")
        self._enqueue(item, exclusive_review=True)

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
            # Another process runs it and checks this file (a remote store carries it to that worker's copy).
            self.store.write_bytes(job_id, CANCEL_FILE, (utc_now() + "\n").encode())
            return "requested"
        return self._cancel_review(job_id, user)

    def _cancel_review(self, job_id: str, user: str) -> str:
        """End a job that waits for a review, at once: under the job's lock, from a fresh copy, pushed back."""
        try:
            with self.store.lock(job_id):
                live = self._claim(job_id)  # loads (pulls) the job under the lock: no worker changes it meanwhile
                if live is not None:
                    self._cancel_claimed(live)
        except InsightloomError as exc:
            raise JobConflict(f"Job {job_id} cannot be cancelled: {exc.message}", exc.fix) from None
        if live is None:  # work for the job arrived meanwhile: stop that instead
            return self.cancel(job_id, user)
        return "cancelled"

    def _cancel_claimed(self, live: _Live) -> None:
        job_id = live.rt.job.id
        live.rt.lock_held = True  # the store's lock is the job's lock: review() must not take it again
        try:
            review(live.rt, Decision("cancel"))
            self.store.push(job_id)
        finally:
            live.rt.lock_held = False
            self._release(job_id, review_done=False)

    # -- work ------------------------------------------------------------------------------------------------------

    def execute(self, item: WorkItem) -> None:
        """Run one work item (called by a queue worker, here or in another process); a locked job is only logged."""
        try:
            self.run_item(item)
        except JobLocked as exc:
            logger.warning("job %s: %s", item.job_id, exc)

    def run_item(self, item: WorkItem) -> Verdict:
        """Run one work item under the job's lock, once a check made under that lock says it is still due.

        A redelivered or repeated item whose stage the job has passed is acknowledged and does nothing (logged); a
        job whose runner died resumes from the stage it stopped in (:mod:`.delivery`).

        Returns:
            The verdict: ``run``, ``resume`` or ``skip``.

        Raises:
            JobLocked: Another live runner holds the job (a distributed queue retries the item later).
        """
        with self._lock:
            live = self._live.get(item.job_id)
        try:
            with self.store.lock(item.job_id) as held:
                status = _read_json_bytes(self.store.read_bytes(item.job_id, "job.json"))
                if not isinstance(status, dict):
                    logger.warning("job %s: %s acknowledged: the job has no readable job.json", item.job_id, item.key)
                    return "skip"
                verdict, why = delivery_verdict(item, status)  # before any pull: a stale item costs one read
                if verdict == "skip":
                    logger.info("job %s: %s acknowledged, nothing to do: %s", item.job_id, item.key, why)
                    return verdict
                logger.info("job %s: %s → %s (%s)", item.job_id, item.key, verdict, why)
                if item.action == "followup":
                    self._followup(item)
                else:
                    self._work(self._runtime(item.job_id, live), item, verdict, held)
                return verdict
        finally:
            if live is not None:
                self._release(item.job_id, review_done=item.action == "review" and item.decision != "cancel")

    def _runtime(self, job_id: str, live: _Live | None) -> JobRuntime:
        """The job's runtime from its (freshly pulled) folder; an in-process job keeps its cancel flag."""
        if live is not None and not self.store.remote:
            return live.rt
        rt = self._load(job_id)  # pulls: the last holder may have been on another machine
        if live is not None:
            rt.cancel = live.rt.cancel
        return rt

    def _work(self, rt: JobRuntime, item: WorkItem, verdict: Verdict, held: HeldLock) -> None:
        """Run the item (or the resume) with the lock already held, syncing outputs to the store as stages end."""
        rt.lock_held = True
        done = threading.Event()
        watcher = threading.Thread(target=_stop_when_lost, args=(held, rt, done), daemon=True)
        watcher.start()
        try:
            with LiveSync(self.store, item.job_id, rt.job.events, held):
                outcome = resume(rt) if verdict == "resume" else self._run(rt, item)
                if outcome is None and rt.job.status().get("auto_approve") and not rt.cancel.is_set():
                    drive(rt, None, AutoApprove())
                elif rt.job.status().get("status") == "awaiting_review" and rt.job.cancel_requested():
                    review(rt, Decision("cancel"))  # a cancel sent while this ran, which it never saw
        except InsightloomError as exc:
            logger.warning("job %s: %s failed: %s", item.job_id, item.key, exc)
        finally:
            done.set()
            rt.lock_held = False

    def queue_followup(self, job_id: str, question: str) -> str:
        """Queue a follow-up analysis of a finished job for a worker; its request id names the result record."""
        request_id = uuid.uuid4().hex
        self._put(WorkItem(job_id, "followup", stage=request_id, question=question))
        return request_id

    def _followup(self, item: WorkItem) -> None:
        """Run a queued follow-up analysis with the job's lock already held; record its result for the asker."""
        from ..ask.analyze import run_followup

        if not FOLLOWUP_ID.fullmatch(item.stage):
            logger.warning("job %s: follow-up item with a malformed request id dropped", item.job_id)
            return
        job_dir = self.store.pull(item.job_id)
        settings = self.job_settings(None, None)
        try:
            result = run_followup(
                job_dir, item.question, settings=settings, cap_usd=settings.ask_max_cost_usd, lock=nullcontext()
            )
            record: dict[str, Any] = dataclasses.asdict(result)
        except InsightloomError as exc:
            record = {"error": exc.message, "fix": exc.fix}
        write_json(job_dir / FOLLOWUPS_DIR / f"{item.stage}.json", record, beneath=job_dir)
        self.store.push(item.job_id)

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
        inputs = job_inputs(rt)  # from the job folder, never from the message: a broker is not trusted with paths
        columns = rt.job.path("data", "column_definitions.json")
        return start(rt, inputs, columns if columns.is_file() else None)

    def recover(self) -> tuple[list[str], list[str]]:
        """On start: resume this service's jobs that stopped mid-run (their lock is dead); list those awaiting review.

        Reviews that were accepted but had not run yet, and auto-approvals, are queued again. Jobs without an
        owner were started by the CLI and are left to ``insightloom resume``.

        Returns:
            The ids resumed and the ids awaiting review.
        """
        items = due_items(self.store, grace_s=0.0)
        resumed = [item.job_id for item in items if item.action != "review"]
        waiting = []
        for job_id in self.store.job_ids():
            status = _read_json_bytes(self.store.read_bytes(job_id, "job.json"))
            if isinstance(status, dict) and status.get("status") == "awaiting_review" and self.owner_of(job_id):
                waiting.append(job_id)
        for item in items:
            try:
                self._enqueue(item, exclusive_review=item.action == "review")
            except InsightloomError as exc:
                logger.warning("job %s: could not queue %s: %s", item.job_id, item.key, exc)
        if resumed or waiting:
            logger.info("recovered jobs: %d resumed, %d awaiting review", len(resumed), len(waiting))
        return resumed, waiting

    # -- bookkeeping ---------------------------------------------------------------------------------------------------

    def _load(self, job_id: str) -> JobRuntime:
        """The job's runtime from its local folder, brought up to date with the store first."""
        self.job_dir(job_id)  # a malformed id is not found before it reaches the store
        rt = load_runtime(self.store.pull(job_id))
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
                self.store.push(item.job_id)
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


def _stop_when_lost(held: HeldLock, rt: JobRuntime, done: threading.Event) -> None:
    """Cancel the job's work when its lock was taken over (a missed heartbeat): another runner owns it now."""
    while not done.wait(1.0):
        if held.lost.is_set():
            logger.error("job %s: its lock was taken over by another runner; stopping this one", rt.job.id)
            rt.cancel.set()
            return


def _read_json_bytes(raw: bytes | None) -> Any:
    try:
        return json.loads(raw or b"")
    except ValueError:
        return None
