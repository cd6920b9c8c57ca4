"""One job through its stages: create → start (to review) → review (revise or run) → done, and resume.

The same three calls serve the CLI (a reviewer answers at once) and the service (a review arrives over HTTP,
perhaps after a restart). Failures keep every file; ``job.json`` records the stage and the error.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import ROLES, AgentModelSpec, Settings
from ..contracts import check_document
from ..errors import BadInputError, InsightloomError, JobCancelled
from ..fileio import is_regular_file, list_regular_files, read_json
from ..fonts import has_cjk
from ..joblock import JobLock, JobLocked
from ..jobs import JobFolder
from ..models.params import inference_params
from ..runtime import JobRuntime, evidence_counts
from ..state import SharedState
from ..telemetry import UsageLedger
from . import stages
from .prewarm import prewarm
from .review import Decision, Reviewer

if TYPE_CHECKING:
    from ..intake import DataProfile
    from ..intake.database import DatabaseSource

logger = logging.getLogger(__name__)

EXIT_CODES: dict[str, int] = {"completed": 0, "failed": 1, "needs_review": 3, "cancelled": 130}


@dataclass
class JobOptions:
    """What to run.

    Attributes:
        inputs: Data files (already expanded from folders).
        request: The user's request in plain language.
        settings: Resolved settings (no ``auto`` provider left).
        job_dir: Exact job folder, else one under ``settings.artifacts``.
        columns_file: Optional column definitions JSON.
        cwd: Where the user ran from (for ``./skills``).
        source: A database to snapshot instead of files (``inputs`` is then empty); request.json records it.
        tables: The tables to read from each SQLite input (``--table``); all of them when empty.
    """

    inputs: list[Path]
    request: str
    settings: Settings
    job_dir: Path | None = None
    columns_file: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)
    source: DatabaseSource | None = None
    tables: tuple[str, ...] = ()


@dataclass
class JobOutcome:
    status: stages.Status
    job_dir: Path
    exit_code: int
    report: Path | None = None
    answer: str | None = None
    error: str | None = None
    seconds: float = 0.0


def request_language(request: str) -> str:
    """The narrative follows the request's language."""
    return "ko" if has_cjk(request) else "en"


def model_summary(spec: AgentModelSpec) -> dict[str, Any]:
    """What run_info.json records of an agent's model: provider, id, output room, caching and the temperature sent."""
    summary: dict[str, Any] = {key: getattr(spec, key) for key in ("provider", "model_id", "max_tokens", "cache")}
    summary["temperature"] = None if spec.provider == "offline" else inference_params(spec).get("temperature")
    return summary


def create_job(opts: JobOptions, job: JobFolder | None = None) -> JobRuntime:
    """Make the job folder and its start files.

    Raises:
        BadInputError: The job folder cannot be created (``--job-dir`` not empty).
    """
    job = job or JobFolder.create(opts.settings.artifacts, opts.job_dir)
    rt = JobRuntime.create(job, opts.settings, opts.request, request_language(opts.request), opts.cwd)
    rt.state.save()
    rt.ledger.save()
    models = {role: model_summary(opts.settings.spec(role)) for role in ROLES}
    request: dict[str, Any] = {
        "request": opts.request,
        "language": rt.language,
        "inputs": [str(p) for p in opts.inputs],
        "columns_file": str(opts.columns_file) if opts.columns_file else None,
        "tables": list(opts.tables),
        "cwd": str(opts.cwd),
    }
    if opts.source is not None:
        request["source"] = opts.source.to_request()  # the URL as vetted: never a password
    stages.write_start_files(job, request, opts.settings.to_dict(), models)
    return rt


def load_runtime(job_dir: Path, settings: Settings | None = None) -> JobRuntime:
    """Rebuild a job's runtime from its folder, with the settings it was started with unless given others."""
    job = JobFolder.open(job_dir)
    request = _job_document(job, "request.json", "request")
    settings = settings or Settings.from_dict(_run_config(job))
    rt = JobRuntime.create(
        job, settings, request["request"], request.get("language", "en"), Path(request.get("cwd") or Path.cwd())
    )
    rt.state = SharedState.load(job.path("shared_state.json"))
    rt.ledger = UsageLedger.load(job.path("usage.json"))
    profile = job.path("cache", "profile.json")
    if profile.exists():
        rt.profile = _load_profile(profile, job.root)
    status = job.status()
    rt.audits = int(status.get("audits", 0))
    rt.evidence = evidence_counts(status.get("evidence"))  # a resumed job keeps what its tools did before
    return rt


_RESTART_FIX = (
    "restore the file from a backup of the job folder, or start the job again with `insightloom run` (the folder's "
    "other files are kept)."
)


def _read_job_json(job: JobFolder, name: str) -> Any:
    path = job.path(name)
    try:
        return read_json(path, beneath=job.root)
    except FileNotFoundError as exc:
        raise BadInputError(f"{path}: missing, so the job cannot be resumed.", fix=_RESTART_FIX) from exc
    except InsightloomError:
        raise  # a planted link: its own error says so, and what to do
    except (OSError, ValueError) as exc:
        raise BadInputError(f"{path}: cannot be read as JSON ({exc}).", fix=_RESTART_FIX) from exc


def _job_document(job: JobFolder, name: str, schema: str) -> dict[str, Any]:
    """A job file read for a resume and held to its contract, so a damaged one is a named error, not a KeyError."""
    document = _read_job_json(job, name)
    check_document(schema, document, str(job.path(name)), fix=_RESTART_FIX)
    return dict(document)


def _run_config(job: JobFolder) -> dict[str, Any]:
    info = _read_job_json(job, "run_info.json")
    config = info.get("config") if isinstance(info, dict) else None
    if not isinstance(config, dict):
        raise BadInputError(f"{job.path('run_info.json')}: holds no 'config' object.", fix=_RESTART_FIX)
    return config


def our_error(exc: BaseException) -> BaseException:
    """The insightloom error inside Strands' wrappers (EventLoopException), else the exception itself."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, InsightloomError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return exc


def _guarded(rt: JobRuntime, started: float, step: Callable[[], JobOutcome | None]) -> JobOutcome | None:
    """Run a step under the job's lock; turn errors and Ctrl-C into a terminal status that keeps the files."""
    held: AbstractContextManager[object] = nullcontext() if rt.lock_held else JobLock(rt.root)
    try:
        with held:
            try:
                return step()
            except Exception as exc:
                unwrapped = our_error(exc)
                if unwrapped is exc:
                    raise
                raise unwrapped from exc
    except JobLocked:
        raise
    except (KeyboardInterrupt, JobCancelled):
        rt.cancel.set()
        stages.finish(rt, "cancelled")
        return JobOutcome("cancelled", rt.root, 130, seconds=time.perf_counter() - started)
    except InsightloomError as exc:
        return _failed(rt, started, str(exc), exc.exit_code if isinstance(exc, BadInputError) else 1)
    except Exception as exc:
        logger.exception("job %s failed", rt.job.id)
        return _failed(rt, started, f"{type(exc).__name__}: {exc}", 1)


def _failed(rt: JobRuntime, started: float, message: str, code: int) -> JobOutcome:
    message = f"{message} (stage: {rt.job.status().get('stage')})"
    rt.job.events.emit("error", message=message)
    stages.finish(rt, "failed", error=message)
    return JobOutcome("failed", rt.root, code, error=message, seconds=time.perf_counter() - started)


def _run_supervisor(rt: JobRuntime, started: float) -> JobOutcome:
    prewarm()  # the Validator's SciPy and the follow-up index, imported while the scripts run
    stages.supervise(rt)
    status, error = stages.final_status(rt)
    report = rt.job.path("final_report.docx") if status != "failed" else None
    if report is not None:
        stages.export_pdf(rt)
    stages.record_metrics(rt, time.perf_counter() - started)
    stages.finish(rt, status, report=report, error=error)
    return JobOutcome(
        status, rt.root, EXIT_CODES[status], report=report, error=error, seconds=time.perf_counter() - started
    )


def _from_intake(
    rt: JobRuntime,
    inputs: list[Path],
    columns_file: Path | None,
    started: float,
    source: DatabaseSource | None = None,
) -> JobOutcome | None:
    stages.intake(rt, inputs, columns_file, source=source)
    return _from_coordinate(rt, started)


def _from_coordinate(rt: JobRuntime, started: float) -> JobOutcome | None:
    answer = stages.coordinate(rt)
    if answer is not None:
        stages.finish(rt, "completed")
        return JobOutcome("completed", rt.root, 0, answer=answer, seconds=time.perf_counter() - started)
    return _from_plan(rt)


def _from_plan(rt: JobRuntime) -> JobOutcome | None:
    stages.plan(rt)
    rt.job.set_stage("review")
    stages.request_review(rt, 0)
    return None


def _revise(rt: JobRuntime, feedback: str, revision: int) -> JobOutcome | None:
    """Write plan revision ``revision`` from the reviewer's feedback and ask for its review.

    job.json keeps ``revising`` (the revision and its feedback) until the new plan awaits review, so a runner that
    dies mid-revision is resumed with the same feedback, from the plan stage.
    """
    rt.job.update(status="running", revising={"revision": revision, "feedback": feedback})  # one write, as above
    plan = stages.revise(rt, feedback, revision)
    rt.job.set_stage("review")
    rt.job.events.emit("plan_revised", plan=plan, revision=revision)
    stages.request_review(rt, revision)
    return None


def start(
    rt: JobRuntime, inputs: list[Path], columns_file: Path | None = None, source: DatabaseSource | None = None
) -> JobOutcome | None:
    """Intake, coordinate and plan. Returns a terminal outcome, or None when the plan awaits review."""
    started = time.perf_counter()
    return _guarded(rt, started, lambda: _from_intake(rt, inputs, columns_file, started, source))


def review(rt: JobRuntime, decision: Decision) -> JobOutcome | None:
    """Apply a review decision. Returns a terminal outcome, or None when a revised plan awaits review.

    Raises:
        BadInputError: The job is not awaiting review, or feedback came after the last allowed revision.
    """
    status = rt.job.status()
    if status.get("status") != "awaiting_review":
        raise BadInputError(
            f"Job {rt.job.id} is not awaiting review (it is {status.get('status')}).",
            "review only when a plan_review_request is pending.",
        )
    revision = int(status.get("revision", 0))
    if decision.action == "feedback" and revision >= rt.settings.max_revisions:
        raise BadInputError(
            f"No revisions left: {rt.settings.max_revisions} were allowed.", "approve the plan or cancel the job."
        )
    started = time.perf_counter()

    def step() -> JobOutcome | None:
        if decision.action == "cancel":
            rt.job.update(status="running")
            stages.finish(rt, "cancelled")
            return JobOutcome("cancelled", rt.root, 130)
        if decision.action == "feedback":
            return _revise(rt, decision.feedback, revision + 1)
        # One write records the approval with the status: a runner that dies next resumes at supervise only then.
        rt.job.update(status="running", approved_revision=revision)
        return _run_supervisor(rt, started)

    return _guarded(rt, started, step)


def resume(rt: JobRuntime) -> JobOutcome | None:
    """Continue a job that stopped (killed, failed or restarted) from its last completed stage.

    Only the stage that was interrupted runs again: a job stopped in ``plan`` keeps its intake and the Coordinator's
    hand-off, one stopped in ``supervise`` keeps its plan and every checked calculation.

    Args:
        rt: The job's runtime, from :func:`load_runtime`.

    Returns:
        A terminal outcome, or None when the job (still) awaits review.

    Raises:
        BadInputError: The job is finished, or its lock is held by a live process (JobLocked).
    """
    status = rt.job.status()
    if status["status"] in ("completed", "needs_review", "cancelled"):
        raise BadInputError(f"Job {rt.job.id} already ended as {status['status']}.", "start a new job with `run`.")
    if status["status"] == "awaiting_review":
        return None
    started = time.perf_counter()
    return _guarded(rt, started, lambda: _resume_step(rt, status, started))


def resume_stage(status: dict[str, Any], has_profile: bool) -> str:
    """The stage a stopped job continues from: the one it was in, or the first one whose inputs are missing.

    ``review`` while running is either an approval being applied (recorded as ``approved_revision``: go on to
    supervise) or a plan that was written but not yet put up for review (ask for the review again): a plan nobody
    approved never runs. A revision in flight is recorded as ``revising``.
    """
    stage = status.get("stage")
    if stage in (None, "intake") or not has_profile:
        return "intake"
    if status.get("revising"):
        return "revise"
    if stage == "review":
        approved = status.get("approved_revision")
        return "supervise" if approved is not None and approved == status.get("revision", 0) else "request_review"
    return str(stage)


def _resume_step(rt: JobRuntime, status: dict[str, Any], started: float) -> JobOutcome | None:
    stage = resume_stage(status, rt.profile is not None)
    logger.info("job %s: resuming from %s (it stopped in %s)", rt.job.id, stage, status.get("stage"))
    rt.job.update(status="running")
    if stage == "supervise":
        return _run_supervisor(rt, started)
    if stage == "request_review":
        stages.request_review(rt, int(status.get("revision", 0) or 0))
        return None
    if stage == "revise":
        revising = status["revising"]
        return _revise(rt, str(revising.get("feedback", "")), int(revising.get("revision", 1)))
    if stage == "plan":
        return _from_plan(rt)
    if stage == "coordinate":
        return _from_coordinate(rt, started)
    data = job_inputs(rt)
    columns = rt.job.path("data", "column_definitions.json")
    return _from_intake(rt, data, columns if is_regular_file(columns, beneath=rt.root) else None, started)


def _load_profile(path: Path, job_root: Path) -> DataProfile:
    """``cache/profile.json`` read without following a link a script planted; unreadable: BadInputError naming it."""
    from ..intake import DataProfile

    try:
        return DataProfile.from_dict(read_json(path, beneath=job_root))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BadInputError(f"{path}: cannot read the data profile ({exc}).", fix="Run intake again.") from exc


def job_inputs(rt: JobRuntime) -> list[Path]:
    """The job's copies of its inputs, in the order first given (the first one is the ``data`` alias).

    Listed without following links: a link a script planted in ``data/`` (or in its place) is no input.
    """
    given = [Path(p).name for p in read_json(rt.job.path("request.json"), beneath=rt.root).get("inputs", [])]
    data = rt.job.path("data")
    names = list_regular_files(data, beneath=rt.root)
    copies = {name: data / name for name in names if name != "column_definitions.json"}
    rank = {name: index for index, name in enumerate(given)}
    return sorted(copies.values(), key=lambda p: (rank.get(p.name, len(rank)), p.name))


def drive(rt: JobRuntime, outcome: JobOutcome | None, reviewer: Reviewer) -> JobOutcome:
    """Answer review requests with ``reviewer`` until the job reaches a terminal status."""
    while outcome is None:
        status = rt.job.status()
        try:
            decision = reviewer.review(rt.state.full_plan, int(status.get("revision", 0)), rt.settings.max_revisions)
        except KeyboardInterrupt:
            decision = Decision("cancel")
        outcome = review(rt, decision)
    return outcome


def run_job(opts: JobOptions, reviewer: Reviewer, *, job: JobFolder | None = None) -> JobOutcome:
    """Run one job to a terminal status, asking ``reviewer`` about each plan."""
    started = time.perf_counter()
    rt = create_job(opts, job)
    outcome = drive(rt, start(rt, opts.inputs, opts.columns_file, opts.source), reviewer)
    outcome.seconds = time.perf_counter() - started
    return outcome
