"""Amazon Bedrock AgentCore Runtime: the managed path for the same job flow, one invocation per step.

AgentCore calls ``POST /invocations`` (and ``GET /ping``) on port 8080 of a microVM per session. Each invocation is
one step of a job, answered at once; the long work of a step runs in a background thread registered with the SDK's
async task tracking, so ``/ping`` answers ``HealthyBusy`` while it works and the runtime keeps the microVM:

- ``{"action": "start", "request": "...", "inputs": ["s3://bucket/sales.csv"], "columns": "s3://.../defs.json",
  "auto_approve": false, "max_revisions": 3}`` → 202 ``{"job_id", "status": "queued"}``; intake and planning run
  in the background (and the analysis too with ``auto_approve``).
- ``{"action": "review", "job_id": "...", "approve": true}``, ``{..., "approve": false, "feedback": "..."}`` or
  ``{..., "cancel": true}`` → 202; a job that is not awaiting review answers 409 (a running job's cancel is passed
  on to the process that runs it).
- ``{"action": "resume", "job_id": "..."}`` → 202: a job whose microVM ended mid-step continues from its last
  completed stage (once the dead holder's lock is stale); a live one answers 409.
- ``{"action": "status", "job_id": "..."}`` → the job's status, stage, revision, plan, error and report key.

A microVM's disk dies with it, so jobs live in S3 (``INSIGHTLOOM_ARTIFACTS=s3://bucket/prefix``): every step pulls
the job into a local working copy, runs under the job's S3 lock (it holds across microVMs: two reviews of one job
at once run exactly once, the other answers 409), pushes events and stage outputs while it runs, and pushes the
rest before the lock is released. Errors answer with the service's error body ``{"detail", "fix"}``.

Inputs are read with the runtime's own role, which can read every job in the store: an input under the store's
bucket and prefix (another job's ``data/``, its lock or records) is refused. At start-up :func:`main` checks once
that the store answers, so a missing permission or a wrong endpoint exits 2 with the fix instead of failing jobs.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import posixpath
import shutil
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from bedrock_agentcore import BedrockAgentCoreApp
from starlette.middleware import Middleware
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..config import PROVIDERS, Settings, deployment_settings, load_settings
from ..errors import BadInputError, ConfigError, InsightloomError, JobConflict, JobNotFound, ServiceBusy
from ..intake.inputs import COLUMNS_FILE_NAME
from ..joblock import JobLocked
from ..jobs import CANCEL_FILE, JobFolder
from ..runtime import JobRuntime
from ..storage import ArtifactStore, HeldLock, open_store
from ..storage.ids import check_job_id
from ..storage.s3 import S3Store, parse_s3_uri
from ..storage.s3lock import error_code
from ..storage.sync import LiveSync
from ..timeutil import utc_now
from ..workflow import (
    AutoApprove,
    Decision,
    JobOptions,
    JobOutcome,
    create_job,
    drive,
    load_runtime,
    resume,
    review,
    start,
)
from .errors_http import error_body, error_response, internal_body
from .manager import MAX_REQUEST_CHARS, MAX_REVISIONS_LIMIT
from .uploads import DATA_SUFFIXES, safe_name

logger = logging.getLogger(__name__)

MODE = "AgentCore entrypoint"
# AgentCore Runtime requires 0.0.0.0:8080 inside its microVM, where AWS's own SigV4/OAuth authentication guards the
# endpoint. That is the one documented exception to "no token, loopback only", and only this entrypoint makes it.
DEFAULT_HOST = "0.0.0.0"
DEFAULT_PORT = 8080
#: Job steps one microVM runs at once; more answer 503 (a session is one user's: a few jobs at most).
MAX_STEPS = 2
#: How often a step checks that it still holds the job's lock (a lost lock stops the work).
LOST_POLL_S = 1.0
#: Payloads are small (a request and S3 URIs): anything bigger is refused before it is parsed.
MAX_PAYLOAD_BYTES = 1024 * 1024
TERMINAL_WITH_REPORT = ("completed", "needs_review")
#: States a step stopped in when its process ended mid-way.
RESUMABLE = ("queued", "running")
ACTIONS = "start, review, resume or status"


# -- payloads ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StartRequest:
    """A checked ``start`` payload."""

    request: str
    inputs: tuple[str, ...]
    columns: str | None = None
    auto_approve: bool = False
    max_revisions: int | None = None


def _field(payload: dict[str, Any], name: str, kind: type | tuple[type, ...], *, required: bool = True) -> Any:
    """A payload field of the right JSON type (bools are not numbers here), or None when optional and absent."""
    value = payload.get(name)
    if value is None:
        if required:
            raise BadInputError(f"Missing field {name!r} in the payload.", f"send {name!r}; see {__name__}.")
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _types(kind)):
        raise BadInputError(f"Field {name!r} has the wrong type ({type(value).__name__}).", f"see {__name__}.")
    return value


def _types(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def job_id_of(payload: dict[str, Any]) -> str:
    """The payload's ``job_id``; one that is not a job id (``../../etc``) is simply not found, never a path."""
    return check_job_id(_field(payload, "job_id", str))


def parse_start(payload: dict[str, Any]) -> StartRequest:
    """Check a ``start`` payload.

    Raises:
        BadInputError: A missing or mistyped field, an empty or overlong request, or a bad revision count.
    """
    request = _field(payload, "request", str).strip()
    if not request:
        raise BadInputError("The 'request' field is empty.", "say what you want, e.g. 'Analyze this data'.")
    if len(request) > MAX_REQUEST_CHARS:
        raise BadInputError(f"The 'request' field is over {MAX_REQUEST_CHARS:,} characters.", "shorten it.")
    inputs = _field(payload, "inputs", list)
    if not inputs or not all(isinstance(uri, str) for uri in inputs):
        raise BadInputError("The 'inputs' field must list s3:// URIs of data files.", "send at least one.")
    revisions = _field(payload, "max_revisions", int, required=False)
    if revisions is not None and not 0 <= revisions <= MAX_REVISIONS_LIMIT:
        raise BadInputError(f"max_revisions is {revisions}.", f"send a number from 0 to {MAX_REVISIONS_LIMIT}.")
    return StartRequest(
        request,
        tuple(inputs),
        _field(payload, "columns", str, required=False),
        bool(_field(payload, "auto_approve", bool, required=False)),
        revisions,
    )


def parse_decision(payload: dict[str, Any]) -> Decision:
    """The review decision: ``cancel: true``, ``approve: true``, or ``approve: false`` with ``feedback``.

    Raises:
        BadInputError: No decision, or feedback missing when the plan is not approved.
    """
    if _field(payload, "cancel", bool, required=False):
        return Decision("cancel")
    if _field(payload, "approve", bool):
        return Decision("approve")
    feedback = (_field(payload, "feedback", str, required=False) or "").strip()
    if not feedback:
        raise BadInputError("Missing field 'feedback' for a plan that is not approved.", "say what to change.")
    return Decision("feedback", feedback)


def split_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/key`` → (bucket, key).

    Raises:
        BadInputError: Not an s3:// URI of an object.
    """
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    if not uri.startswith("s3://") or not bucket or not key or key.endswith("/") or "\x00" in uri:
        raise BadInputError(f"{uri!r} is not an s3:// URI of an object.", "pass inputs as s3://bucket/key.")
    return bucket, key


def check_outside_store(uri: str, store_uri: str) -> None:
    """Refuse an input object under the job store's bucket and prefix (any job's files, locks and records).

    The key is compared as given and with ``.``/``..`` parts and doubled slashes folded, in case anything on the way
    normalizes it. A store that is not in S3 holds nothing an ``s3://`` input could name.

    Raises:
        BadInputError: ``uri`` names an object inside the store.
    """
    if not store_uri.startswith("s3://"):
        return
    bucket, key = split_s3_uri(uri)
    store_bucket, prefix = parse_s3_uri(store_uri)
    if bucket.lower() != store_bucket.lower():
        return
    base = f"{prefix}/" if prefix else ""
    folded = posixpath.normpath("/" + key).lstrip("/")
    if key.startswith(base) or folded.startswith(base):
        elsewhere = f"e.g. to s3://{store_bucket}/inputs/" if prefix else "in another bucket"
        raise BadInputError(
            f"{uri} is inside this service's job store ({store_uri}); jobs read only their own inputs.",
            f"upload the inputs outside {store_uri}/ ({elsewhere}) and send those URIs.",
        )


def input_names(uris: Sequence[str]) -> list[str]:
    """The names the input objects get in the job's ``data/`` folder: safe base names, unique, data files only.

    Raises:
        BadInputError: An object that is not a .csv or .xlsx file.
    """
    names: list[str] = []
    taken = {COLUMNS_FILE_NAME}
    for uri in uris:
        base = PurePosixPath(split_s3_uri(uri)[1]).name
        suffix = PurePosixPath(base).suffix.lower()
        if suffix not in DATA_SUFFIXES:
            raise BadInputError(f"{uri}: unsupported file type {suffix or '(none)'!r}.", "send .csv or .xlsx data.")
        name, stem, n = safe_name(base, suffix), safe_name(base, suffix)[: -len(suffix)], 2
        while name.lower() in taken:
            name, n = f"{stem}_{n}{suffix}", n + 1
        taken.add(name.lower())
        names.append(name)
    return names


# -- the steps --------------------------------------------------------------------------------------------------------


class AgentCoreJobs:
    """The job steps behind the entrypoint, over an artifact store whose working copies live on this microVM.

    Args:
        app: The AgentCore app whose async task tracking makes ``/ping`` say ``HealthyBusy`` while steps run.
        settings: Resolved settings (no ``auto`` provider left); each job gets a copy.
        store: Where the jobs live (S3 in a deployment: see :func:`require_remote`).
        s3: A boto3 S3 client for the input objects (default: one from the environment's session).
        max_steps: Steps run at once in this process; more answer 503.
    """

    def __init__(
        self,
        app: BedrockAgentCoreApp,
        settings: Settings,
        store: ArtifactStore,
        *,
        s3: Any | None = None,
        max_steps: int = MAX_STEPS,
    ) -> None:
        self.app = app
        self.settings = settings
        self.store = store
        self.max_steps = max_steps
        self._s3 = s3
        self._lock = threading.Lock()
        self._running = 0
        self.threads: list[threading.Thread] = []

    def handle(self, payload: Any) -> Response:
        """One invocation: the step's JSON, or the error body with its status (never a traceback)."""
        try:
            if not isinstance(payload, dict):
                raise BadInputError("The payload must be a JSON object.", f"send {{'action': ...}}; see {__name__}.")
            action = payload.get("action")
            if action == "start":
                return JSONResponse(self.start(parse_start(payload)), status_code=202)
            if action == "review":
                return JSONResponse(self.review(job_id_of(payload), parse_decision(payload)), status_code=202)
            if action == "resume":
                return JSONResponse(self.resume(job_id_of(payload)), status_code=202)
            if action == "status":
                return JSONResponse(self.status(job_id_of(payload)))
            raise BadInputError(f"Unknown action {action!r}.", f"use {ACTIONS}.")
        except InsightloomError as exc:
            return error_response(exc)
        except Exception:
            logger.exception("invocation failed")
            return JSONResponse(internal_body(), status_code=500)

    # -- actions --------------------------------------------------------------------------------------------------

    def start(self, req: StartRequest) -> dict[str, Any]:
        """Create the job from its S3 inputs, push it, and run intake → plan (→ the rest with auto-approve).

        Raises:
            BadInputError: An input (or the columns file) is inside the job store, unreadable or too large.
        """
        for uri in (*req.inputs, *([req.columns] if req.columns else [])):
            check_outside_store(uri, self.store.uri)
        self._reserve()
        with ExitStack() as stack:
            stack.callback(self._free)
            settings = self.settings
            if req.max_revisions is not None:
                settings = dataclasses.replace(settings, max_revisions=req.max_revisions)
            settings = dataclasses.replace(settings, artifacts=self.store.root)
            job = JobFolder.create(self.store.root)
            try:
                rt, inputs, columns = self._create(job, req, settings)
                held = stack.enter_context(self.store.lock(job.id))
                self.store.push(job.id)
            except BaseException:
                self._discard(job)
                raise

            def step() -> None:
                _continue(rt, start(rt, inputs, columns), req.auto_approve)

            self._background(rt, held, step, stack.pop_all(), "start")
        logger.info("job %s started", job.id)
        return {"job_id": job.id, "status": "queued", "next": {"action": "status", "job_id": job.id}}

    def review(self, job_id: str, decision: Decision) -> dict[str, Any]:
        """Check that the job awaits review and apply the decision in the background.

        Raises:
            JobNotFound: No such job in the store.
            JobConflict: The job is not awaiting review, has no revisions left, or another process works on it.
        """

        def plan(rt: JobRuntime) -> Callable[[], None]:
            _check_reviewable(rt, decision)
            auto = bool(rt.job.status().get("auto_approve")) and decision.action != "cancel"
            return lambda: _continue(rt, review(rt, decision), auto)

        try:
            self._step(job_id, "review", plan, "wait until its status is awaiting_review, then review it.")
        except _HeldElsewhere:
            if decision.action != "cancel":
                raise
            return self._request_cancel(job_id)
        return {"job_id": job_id, "status": "running", "decision": decision.action}

    def resume(self, job_id: str) -> dict[str, Any]:
        """Continue a job that stopped mid-step (its microVM ended) from its last completed stage.

        Its lock must be free: a dead holder's S3 lock is taken over once its heartbeat is a minute old.

        Raises:
            JobNotFound: No such job in the store.
            JobConflict: The job is not queued or running, or a live process still works on it.
        """

        def plan(rt: JobRuntime) -> Callable[[], None]:
            state = rt.job.status().get("status")
            if state not in RESUMABLE:
                raise JobConflict(f"Job {job_id} is {state}, not stopped mid-step.", "poll its status; review it.")
            auto = bool(rt.job.status().get("auto_approve"))
            return lambda: _continue(rt, resume(rt), auto)

        fix = (
            "poll its status; if its runtime session ended, try again in a minute (a lock whose heartbeat is a "
            "minute old is taken over)."
        )
        rt = self._step(job_id, "resume", plan, fix)
        return {"job_id": job_id, "status": "running", "stage": rt.job.status().get("stage")}

    def status(self, job_id: str) -> dict[str, Any]:
        """The job's state as the store has it (not this microVM's working copy, which may be stale or absent)."""
        status = self._job_json(job_id)
        plan = self.store.read_bytes(job_id, "plan.md")
        state = status.get("status")
        return {
            "job_id": job_id,
            "status": state,
            "stage": status.get("stage"),
            "revision": int(status.get("revision", 0)),
            "max_revisions": status.get("max_revisions"),
            "plan": plan.decode("utf-8", "replace") if plan is not None else None,
            "error": status.get("error"),
            "review_reason": status.get("review_reason"),
            "report": f"{self.store.uri.rstrip('/')}/{job_id}/final_report.docx"
            if state in TERMINAL_WITH_REPORT
            else None,
            "locked": self.store.lock_alive(job_id),
        }

    # -- helpers --------------------------------------------------------------------------------------------------

    def _step(self, job_id: str, name: str, plan: Callable[[JobRuntime], Callable[[], None]], fix: str) -> JobRuntime:
        """Take the job's lock, pull it, and run in the background the step that ``plan`` makes of its runtime.

        ``plan`` checks the job's state under the lock and raises to refuse (the lock is then released at once).

        Raises:
            JobNotFound: No such job in the store.
            _HeldElsewhere: A live process (here or on another microVM) holds the job's lock; ``fix`` says what to do.
        """
        self._job_json(job_id)
        self._reserve()
        with ExitStack() as stack:
            stack.callback(self._free)
            try:
                held = stack.enter_context(self.store.lock(job_id))
            except JobLocked:
                raise _HeldElsewhere(f"Job {job_id} is being worked on by another process.", fix) from None
            rt = load_runtime(self.store.pull(job_id))
            self._background(rt, held, plan(rt), stack.pop_all(), name)
        return rt

    def _create(
        self, job: JobFolder, req: StartRequest, settings: Settings
    ) -> tuple[JobRuntime, list[Path], Path | None]:
        """Fetch the inputs into ``data/`` (intake leaves them there) and write the job's start files."""
        max_bytes = int(settings.max_file_mb * 1024 * 1024)
        inputs = [
            self._fetch(uri, job.path("data", name), max_bytes)
            for uri, name in zip(req.inputs, input_names(req.inputs), strict=True)
        ]
        columns = self._fetch(req.columns, job.path("data", COLUMNS_FILE_NAME), max_bytes) if req.columns else None
        rt = create_job(JobOptions(inputs=inputs, request=req.request, settings=settings, columns_file=columns), job)
        rt.job.update(auto_approve=req.auto_approve)
        return rt, inputs, columns

    def _fetch(self, uri: str, dest: Path, max_bytes: int) -> Path:
        """Download one input object (into a folder made just now, so no script could have planted a link there).

        Raises:
            BadInputError: The object is missing, unreadable with the runtime's role, or over the size limit.
        """
        from botocore.exceptions import BotoCoreError, ClientError

        bucket, key = split_s3_uri(uri)
        try:
            size = int(self.s3.head_object(Bucket=bucket, Key=key)["ContentLength"])
            if size > max_bytes:
                raise BadInputError(
                    f"{uri} is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.0f} MB limit.",
                    "send a smaller extract, or raise max_file_mb.",
                )
            self.s3.download_file(bucket, key, str(dest))
        except (ClientError, BotoCoreError) as exc:
            raise BadInputError(
                f"{uri} cannot be read ({type(exc).__name__}).",
                "check the URI, and that the runtime's role has s3:GetObject on it.",
            ) from None
        return dest

    @property
    def s3(self) -> Any:
        if self._s3 is None:
            import boto3

            self._s3 = boto3.session.Session().client("s3")
        return self._s3

    def _job_json(self, job_id: str) -> dict[str, Any]:
        raw = self.store.read_bytes(job_id, "job.json")
        try:
            status = json.loads(raw) if raw is not None else None
        except ValueError:
            status = None
        if not isinstance(status, dict):
            raise JobNotFound("No such job.", "pass the job_id that the start action answered.")
        return status

    def _request_cancel(self, job_id: str) -> dict[str, Any]:
        """A cancel for a job that another process runs: that process polls the store's ``cancel.request``."""
        self.store.write_bytes(job_id, CANCEL_FILE, (utc_now() + "\n").encode("utf-8"))
        return {"job_id": job_id, "status": "cancel_requested", "decision": "cancel"}

    def _discard(self, job: JobFolder) -> None:
        """Remove a job whose start failed, so no half-made job is left in the store or here."""
        try:
            self.store.delete_job(job.id)
        except Exception:
            logger.exception("job %s: could not delete the failed start from the store", job.id)
        shutil.rmtree(job.root, ignore_errors=True)

    def _reserve(self) -> None:
        """Count a step against :attr:`max_steps` (the caller frees it, or hands that to the step's thread).

        Raises:
            ServiceBusy: This process already runs as many steps as it may.
        """
        with self._lock:
            if self._running >= self.max_steps:
                raise ServiceBusy(
                    f"This runtime session is busy with {self.max_steps} job steps.",
                    "try again in a minute, or use another runtime session.",
                )
            self._running += 1

    def _free(self) -> None:
        with self._lock:
            self._running -= 1

    def _background(
        self, rt: JobRuntime, held: HeldLock, step: Callable[[], None], owned: ExitStack, name: str
    ) -> None:
        """Run ``step`` in a thread, tracked as an SDK async task, that closes ``owned`` (the lock, the slot) after."""
        task_id = self.app.add_async_task(f"{name} {rt.job.id}", {"job_id": rt.job.id})
        thread = threading.Thread(
            target=self._run_step, args=(rt, held, step, owned, task_id), name=f"agentcore-{name}-{rt.job.id}"
        )
        try:
            thread.start()
        except BaseException:
            self.app.complete_async_task(task_id)
            owned.close()
            raise
        self.threads = [t for t in self.threads if t.is_alive()] + [thread]

    def _run_step(
        self, rt: JobRuntime, held: HeldLock, step: Callable[[], None], owned: ExitStack, task_id: int
    ) -> None:
        done = threading.Event()
        threading.Thread(target=_stop_when_lost, args=(rt, held, done), daemon=True).start()
        # The store's lock is the job's lock: the workflow must not also take job.lock in the working copy, a file
        # the job's scripts can write (a planted "live" lock there would refuse every later step).
        rt.lock_held = True
        try:
            with owned, LiveSync(self.store, rt.job.id, rt.job.events, held):  # its final push, then the lock
                step()
                self._late_cancel(rt, held)
        except Exception:
            logger.exception("job %s: the step failed", rt.job.id)
        finally:
            rt.lock_held = False
            done.set()
            self.app.complete_async_task(task_id)  # last: /ping says HealthyBusy until the job is in the store

    def _late_cancel(self, rt: JobRuntime, held: HeldLock) -> None:
        """Apply a cancel that came while the step ran but after its last look, before the lock is released.

        A cancel for a job another process runs is only a ``cancel.request`` file (see :meth:`_request_cancel`): a
        step that reached the plan review without seeing it would leave the job waiting, the cancel lost. The store
        is read too, as the live sync copies the file into the working copy only every few seconds.
        """
        if held.lost.is_set() or rt.job.status().get("status") != "awaiting_review":
            return
        if rt.job.cancel_requested() or self.store.read_bytes(rt.job.id, CANCEL_FILE) is not None:
            logger.info("job %s: cancel requested during the step; cancelling its plan review", rt.job.id)
            review(rt, Decision("cancel"))


class _HeldElsewhere(JobConflict):
    """A live process holds the job's lock (409)."""


def _continue(rt: JobRuntime, outcome: JobOutcome | None, auto_approve: bool) -> None:
    """After a step that left a plan awaiting review: approve it at once for an auto-approved job (not cancelled)."""
    if outcome is None and auto_approve and not rt.cancel.is_set():
        drive(rt, None, AutoApprove())


def _check_reviewable(rt: JobRuntime, decision: Decision) -> None:
    status = rt.job.status()
    if status.get("status") != "awaiting_review":
        raise JobConflict(f"Job {rt.job.id} is not awaiting review (it is {status.get('status')}).")
    revision, limit = int(status.get("revision", 0)), int(status.get("max_revisions", 0))
    if decision.action == "feedback" and revision >= limit:
        raise JobConflict(
            f"No revisions left: {limit} were allowed and this is revision {revision}.", "approve or cancel."
        )


def _stop_when_lost(rt: JobRuntime, held: HeldLock, done: threading.Event) -> None:
    """Cancel the work when another holder took the job's lock over (this process missed its heartbeats)."""
    while not done.wait(LOST_POLL_S):
        if held.lost.is_set():
            logger.warning("job %s: lost its lock to another holder; stopping", rt.job.id)
            rt.cancel.set()
            return


class InvocationBody:
    """ASGI middleware: an ``/invocations`` body that is not JSON, or is too large, answers with the error body.

    The SDK would answer those itself, in its own shape; callers read one shape, ``{"detail", "fix"}``.
    """

    def __init__(self, app: ASGIApp, *, limit_bytes: int = MAX_PAYLOAD_BYTES) -> None:
        self.app = app
        self.limit_bytes = limit_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/invocations":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size, more = size + len(chunks[-1]), bool(message.get("more_body"))
            if size > self.limit_bytes:
                error = BadInputError(f"The payload is over {self.limit_bytes:,} bytes.", "send S3 URIs, not data.")
                await JSONResponse(error_body(error), status_code=413)(scope, receive, send)
                return
        body = b"".join(chunks)
        try:
            json.loads(body)
        except ValueError:  # UnicodeDecodeError too
            error = BadInputError("The payload is not JSON.", f"send a JSON object; see {__name__}.")
            await JSONResponse(error_body(error), status_code=400)(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


# -- the app and the process ------------------------------------------------------------------------------------------


def create_agentcore_app(settings: Settings, store: ArtifactStore, *, s3: Any | None = None) -> BedrockAgentCoreApp:
    """The AgentCore app: ``/invocations`` runs job steps over ``store``, ``/ping`` tracks them.

    Args:
        settings: Resolved settings (see :func:`~insightloom.config.deployment_settings`).
        store: The jobs' store; :func:`main` requires S3 (:func:`require_remote`).
        s3: A boto3 S3 client for the input objects (default: from the environment).
    """
    app = BedrockAgentCoreApp(middleware=[Middleware(InvocationBody)])
    jobs = AgentCoreJobs(app, settings, store, s3=s3)
    app.state.jobs = jobs

    @app.entrypoint
    def invoke(payload: Any) -> Response:
        return jobs.handle(payload)

    return app


def require_remote(store: ArtifactStore) -> ArtifactStore:
    """The store, if it outlives this microVM.

    Raises:
        ConfigError: A local folder, which dies with the microVM.
    """
    if not store.remote:
        raise ConfigError(
            f"The AgentCore entrypoint needs jobs in S3, not in the local folder {store.uri} (a microVM's disk dies "
            "with it).",
            "set INSIGHTLOOM_ARTIFACTS=s3://<bucket>/<prefix> (the runtime's role needs access to that prefix).",
        )
    return store


def check_reachable(store: ArtifactStore) -> ArtifactStore:
    """The store, once one listing of its prefix answered (an S3 store; other stores have nothing to reach).

    Raises:
        ConfigError: S3 refused the listing (no such bucket, access denied, bad credentials) or did not answer.
    """
    if not isinstance(store, S3Store):
        return store
    from botocore.exceptions import BotoCoreError, ClientError

    prefix = f"{store.prefix}/" if store.prefix else ""
    try:
        store.client.list_objects_v2(Bucket=store.bucket, Prefix=prefix, MaxKeys=1)
    except (ClientError, BotoCoreError) as exc:
        code = error_code(exc) if isinstance(exc, ClientError) else None
        jobs = f"arn:aws:s3:::{store.bucket}/{prefix}*"
        raise ConfigError(
            f"The job store {store.uri} cannot be reached ({code or type(exc).__name__}).",
            f"check INSIGHTLOOM_ARTIFACTS (the bucket must exist) and the S3 endpoint, and that the runtime's role "
            f"has s3:ListBucket on arn:aws:s3:::{store.bucket} and s3:GetObject, s3:PutObject and s3:DeleteObject "
            f"on {jobs}.",
        ) from None
    return store


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="insightloom-agentcore", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"bind address (default {DEFAULT_HOST}, as AgentCore needs)"
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument("--provider", choices=PROVIDERS, help="model provider for every agent (default: the config's)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Check the settings and the store, then serve; a refusal exits 2 with the fix, before binding."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("bedrock_agentcore").propagate = False  # it logs JSON lines of its own (for CloudWatch)
    try:
        settings = load_settings(None)
        settings = deployment_settings(settings.with_provider(args.provider) if args.provider else settings, MODE)
        store = check_reachable(require_remote(open_store(settings.artifact_store, settings.artifacts)))
    except InsightloomError as exc:
        print(f"error: {exc.message}" + (f" Fix: {exc.fix}" if exc.fix else ""), file=sys.stderr)
        return exc.exit_code
    logger.info("AgentCore entrypoint on %s:%d, jobs in %s", args.host, args.port, store.uri)
    create_agentcore_app(settings, store).run(port=args.port, host=args.host)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
