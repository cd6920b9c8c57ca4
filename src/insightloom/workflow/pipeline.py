"""One job, start to finish: intake → coordinate → plan → review → supervise → done.

Failures keep every file the job produced; ``job.json`` records the stage and the error.
"""

from __future__ import annotations

import logging
import platform
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Literal

from .. import __version__
from ..agents import build_agent, make_agent_tools
from ..analysis_utils import write_utils_module
from ..config import ROLES, Settings
from ..errors import BadInputError, InsightloomError
from ..fonts import has_cjk
from ..intake import ingest
from ..jobs import JobFolder, read_json
from ..plan import plan_problems
from ..prompting import render_prompt
from ..runtime import JobRuntime
from ..timeutil import utc_now
from ..tools import make_handoff
from .review import Reviewer

logger = logging.getLogger(__name__)

Status = Literal["completed", "needs_review", "failed", "cancelled"]
EXIT_CODES: dict[str, int] = {"completed": 0, "failed": 1, "needs_review": 3, "cancelled": 130}
_PACKAGES = ("strands-agents", "pandas", "numpy", "duckdb", "pyarrow", "python-docx", "matplotlib", "openpyxl", "boto3")
MAX_PLAN_ATTEMPTS = 3


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
    """

    inputs: list[Path]
    request: str
    settings: Settings
    job_dir: Path | None = None
    columns_file: Path | None = None
    cwd: Path = field(default_factory=Path.cwd)


@dataclass
class JobOutcome:
    status: Status
    job_dir: Path
    exit_code: int
    report: Path | None = None
    answer: str | None = None
    error: str | None = None
    seconds: float = 0.0


def request_language(request: str) -> str:
    """The narrative follows the request's language."""
    return "ko" if has_cjk(request) else "en"


def _versions() -> dict[str, str]:
    out = {"insightloom": __version__, "python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _write_start_files(job: JobFolder, opts: JobOptions) -> None:
    job.write_json(
        "request.json",
        {
            "request": opts.request,
            "inputs": [str(p) for p in opts.inputs],
            "columns_file": str(opts.columns_file) if opts.columns_file else None,
            "created_at": utc_now(),
        },
    )
    job.write_json(
        "run_info.json",
        {
            "job_id": job.id,
            "versions": _versions(),
            "models": {
                role: {
                    "provider": opts.settings.spec(role).provider,
                    "model_id": opts.settings.spec(role).model_id,
                    "max_tokens": opts.settings.spec(role).max_tokens,
                    "cache": opts.settings.spec(role).cache,
                }
                for role in ROLES
            },
            "config": opts.settings.to_dict(),
            "request": opts.request,
        },
    )


def _intake(rt: JobRuntime, opts: JobOptions) -> None:
    rt.job.set_stage("intake")
    rt.profile = ingest(opts.inputs, rt.root, columns_file=opts.columns_file, max_file_mb=opts.settings.max_file_mb)
    write_utils_module(rt.job.path("code"))


def _coordinate(rt: JobRuntime) -> str | None:
    """Returns the Coordinator's direct answer, or None when it handed off to the Planner."""
    rt.job.set_stage("coordinate")
    tables = rt.profile.tables if rt.profile else []
    summary = "; ".join(f"{t.file} ({t.rows} rows, {len(t.columns)} columns)" for t in tables)
    prompt = render_prompt(
        "coordinator",
        rt.settings.prompts_dir,
        request=rt.request,
        data_summary=summary,
        max_tokens=rt.settings.spec("coordinator").max_tokens,
    )
    agent = build_agent("coordinator", rt, prompt, [make_handoff(rt)])
    answer = str(agent(rt.request)).strip()
    return None if rt.handoff else answer


def _ask_planner(rt: JobRuntime, name: str, **values: object) -> str:
    base = {
        "request": rt.request,
        "data_profile": rt.profile.to_prompt() if rt.profile else "",
        "language": rt.language,
        "max_tokens": rt.settings.spec("planner").max_tokens,
    }
    prompt = render_prompt(name, rt.settings.prompts_dir, **{**base, **values})
    problems: list[str] = []
    for _ in range(MAX_PLAN_ATTEMPTS):
        agent = build_agent("planner", rt, prompt)
        ask = (
            "Write the plan." if not problems else "Your plan broke these rules; write it again: " + "; ".join(problems)
        )
        plan = str(agent(ask)).strip()
        problems = plan_problems(plan)
        if not problems:
            return plan + "\n"
    raise InsightloomError(
        f"The Planner did not produce a valid plan: {'; '.join(problems)}.", "try again, or rephrase the request."
    )


def _set_plan(rt: JobRuntime, plan: str) -> None:
    rt.state.set_plan(plan)
    rt.job.path("plan.md").write_text(plan, encoding="utf-8")


def _plan_and_review(rt: JobRuntime, reviewer: Reviewer) -> bool:
    """Plan, then loop through review; False when the reviewer cancels."""
    rt.job.set_stage("plan")
    plan = _ask_planner(rt, "planner")
    _set_plan(rt, plan)
    rt.job.set_stage("review")
    max_revisions = rt.settings.max_revisions
    revision = 0
    while True:
        rt.job.update(status="awaiting_review")
        rt.job.events.emit("plan_review_request", plan=plan, revision=revision, max_revisions=max_revisions)
        decision = reviewer.review(plan, revision, max_revisions)
        rt.job.update(status="running")
        if decision.action == "approve":
            return True
        if decision.action == "cancel":
            return False
        if revision >= max_revisions:
            raise BadInputError(f"No revisions left after {max_revisions}.", "approve the plan or cancel.")
        revision += 1
        rt.job.set_stage("plan")
        plan = _ask_planner(rt, "planner_revise", previous_plan=plan, feedback=decision.feedback, revision=revision)
        _set_plan(rt, plan)
        rt.job.set_stage("review")
        rt.job.events.emit("plan_revised", plan=plan, revision=revision)


def _supervise(rt: JobRuntime) -> None:
    rt.job.set_stage("supervise")
    prompt = render_prompt(
        "supervisor",
        rt.settings.prompts_dir,
        full_plan=rt.state.full_plan,
        max_reporter_retries=rt.settings.max_reporter_retries,
        max_tokens=rt.settings.spec("supervisor").max_tokens,
    )
    agent = build_agent("supervisor", rt, prompt, make_agent_tools(rt))
    agent("Execute the approved plan, one section at a time, until every item is checked.")


def _record_metrics(rt: JobRuntime, seconds: float) -> None:
    """Add run figures to run_info.json: wall time, scripts run and their total time, model calls per agent."""
    info = read_json(rt.job.path("run_info.json"))
    scripts = rt.extras.get("scripts", [])
    usage = rt.ledger.to_dict()["agents"]
    info["metrics"] = {
        "wall_seconds": round(seconds, 3),
        "scripts_run": len(scripts),
        "script_seconds": round(sum(s["seconds"] for s in scripts), 3),
        "model_calls": {role: usage[role]["calls"] for role in ROLES},
    }
    rt.job.write_json("run_info.json", info)


def _export_pdf(rt: JobRuntime) -> None:
    """A PDF beside the DOCX where LibreOffice is installed; its absence is not an error."""
    from ..report.pdf import docx_to_pdf

    try:
        docx_to_pdf(rt.job.path("final_report.docx"))
    except (OSError, InsightloomError) as exc:
        logger.warning("PDF export failed: %s", exc)


def _final_status(rt: JobRuntime) -> tuple[Status, str | None]:
    docx = rt.job.path("final_report.docx")
    if not docx.exists():
        return "failed", "The Supervisor finished without a rendered report (final_report.docx is missing)."
    audit = rt.job.path("audit_findings.json")
    verdict = read_json(audit)["verdict"] if audit.exists() else None
    if verdict == "pass":
        return "completed", None
    return "needs_review", None


def _finish(rt: JobRuntime, status: Status, *, report: Path | None = None, error: str | None = None) -> None:
    """Record the terminal status; failed and cancelled jobs keep the stage they stopped in."""
    if status == "failed":
        rt.job.update(status=status, error=error)
        rt.job.events.emit("failed", error=error or "unknown error")
        return
    if status == "cancelled":
        rt.job.update(status=status)
        rt.job.events.emit("cancelled")
        return
    rt.job.update(status=status, stage="done")
    rt.job.events.emit("stage", name="done")
    rel = report.relative_to(rt.root).as_posix() if report else None
    rt.job.events.emit(status, report=rel)


def run_job(opts: JobOptions, reviewer: Reviewer, *, job: JobFolder | None = None) -> JobOutcome:
    """Run one job to a terminal status.

    Args:
        opts: What to run.
        reviewer: Who approves the plan.
        job: An already created job folder (the CLI creates it first to print progress for it).

    Raises:
        BadInputError: The job folder cannot be created (the only error raised before a job exists).
    """
    started = time.perf_counter()
    job = job or JobFolder.create(opts.settings.artifacts, opts.job_dir)
    rt = JobRuntime.create(job, opts.settings, opts.request, request_language(opts.request), opts.cwd)
    rt.state.save()
    rt.ledger.save()
    _write_start_files(job, opts)
    stage = "intake"
    try:
        _intake(rt, opts)
        stage = "coordinate"
        answer = _coordinate(rt)
        if answer is not None:
            _finish(rt, "completed")
            return JobOutcome("completed", job.root, 0, answer=answer, seconds=time.perf_counter() - started)
        stage = "plan"
        if not _plan_and_review(rt, reviewer):
            _finish(rt, "cancelled")
            return JobOutcome("cancelled", job.root, 130, seconds=time.perf_counter() - started)
        stage = "supervise"
        _supervise(rt)
        status, error = _final_status(rt)
        report = job.path("final_report.docx") if status != "failed" else None
        if report is not None:
            _export_pdf(rt)
        _record_metrics(rt, time.perf_counter() - started)
        _finish(rt, status, report=report, error=error)
        return JobOutcome(
            status, job.root, EXIT_CODES[status], report=report, error=error, seconds=time.perf_counter() - started
        )
    except KeyboardInterrupt:
        rt.cancel.set()
        _finish(rt, "cancelled")
        return JobOutcome("cancelled", job.root, 130, seconds=time.perf_counter() - started)
    except InsightloomError as exc:
        message = f"{exc} (stage: {job.status().get('stage') or stage})"
        rt.job.events.emit("error", message=message)
        _finish(rt, "failed", error=message)
        code = exc.exit_code if isinstance(exc, BadInputError) else 1
        return JobOutcome("failed", job.root, code, error=message, seconds=time.perf_counter() - started)
    except Exception as exc:
        logger.exception("job %s failed", job.id)
        message = f"{type(exc).__name__}: {exc} (stage: {job.status().get('stage') or stage})"
        rt.job.events.emit("error", message=message)
        _finish(rt, "failed", error=message)
        return JobOutcome("failed", job.root, 1, error=message, seconds=time.perf_counter() - started)
