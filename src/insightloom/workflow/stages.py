"""The stages of a job, each a step that reads and writes the job folder.

Stages are small and restartable: everything a later stage needs is on disk, so a job can stop between any two of
them (waiting for review, or killed) and continue in another process.
"""

from __future__ import annotations

import functools
import logging
import platform
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .. import __version__
from ..agents import build_agent, make_agent_tools
from ..analysis_utils import write_utils_module
from ..config import ROLES
from ..errors import InsightloomError, UnsafePathError
from ..execution import get_runner, isolation_level
from ..fileio import is_regular_file, read_text
from ..intake import ingest
from ..jobs import JobFolder, read_json
from ..plan import normalise_plan, plan_problems
from ..prompting import render_prompt
from ..report.usability import Degenerate, degenerate_reasons
from ..runtime import JobRuntime
from ..timeutil import utc_now
from ..tools import make_handoff
from .recheck import recheck_delivery
from .supervising import run_rounds

if TYPE_CHECKING:
    from ..intake.database import DatabaseSource

logger = logging.getLogger(__name__)

Status = Literal["completed", "needs_review", "failed", "cancelled"]
_PACKAGES = ("strands-agents", "pandas", "numpy", "duckdb", "pyarrow", "python-docx", "matplotlib", "openpyxl", "boto3")
MAX_PLAN_ATTEMPTS = 3


def _versions() -> dict[str, str]:
    out = {"insightloom": __version__, "python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def write_start_files(job: JobFolder, request: dict, settings_config: dict, models: dict) -> None:
    """request.json and run_info.json: what was asked, with which versions, models and config."""
    job.write_json("request.json", {**request, "created_at": utc_now()})
    job.write_json(
        "run_info.json",
        {
            "job_id": job.id,
            "versions": _versions(),
            "models": models,
            "config": settings_config,
            "request": request["request"],
            "isolation_level": isolation_level(),
        },
    )


def intake(
    rt: JobRuntime, inputs: list[Path], columns_file: Path | None, *, source: DatabaseSource | None = None
) -> None:
    """Files are parsed; the database the user named (``source``, from the command line) is snapshotted.

    A resumed job only reads its snapshot again (``source`` in request.json): request.json sits in the job folder,
    which the job's scripts can write, so a resume never connects to whatever database it names.
    """
    rt.job.set_stage("intake")
    connect = source is not None
    source = source or _database_source(rt)

    def cancelled() -> bool:
        return rt.cancel.is_set() or rt.job.cancel_requested()

    if source is not None:
        from ..intake.database import SnapshotLimits, ingest_database

        settings = rt.settings
        rt.profile = ingest_database(
            source,
            rt.root,
            limits=SnapshotLimits(settings.max_snapshot_rows, settings.max_snapshot_mb, settings.sql_timeout_s),
            columns_file=columns_file,
            on_progress=functools.partial(rt.job.events.emit, "progress"),
            cancelled=cancelled,
            connect=connect,
        )
    else:
        # The tables come from request.json, so a resumed intake reads the same ones as the first.
        tables = [str(t) for t in read_json(rt.job.path("request.json"), beneath=rt.root).get("tables") or []]
        rt.profile = ingest(
            inputs,
            rt.root,
            columns_file=columns_file,
            max_file_mb=rt.settings.max_file_mb,
            cancelled=cancelled,
            tables=tables,
            memory_budget_mb=rt.settings.memory_budget_mb,
            max_job_mb=rt.settings.max_job_mb,
            on_progress=functools.partial(rt.job.events.emit, "progress"),
        )
    write_utils_module(rt.job.path("code"))


def _database_source(rt: JobRuntime) -> DatabaseSource | None:
    """The database request.json names (``source``), or None for a job on files."""
    from ..intake.database import DatabaseSource

    path = rt.job.path("request.json")
    if not is_regular_file(path, beneath=rt.root):
        return None
    source = read_json(path, beneath=rt.root).get("source")
    return (
        DatabaseSource.from_request(source) if isinstance(source, dict) and source.get("kind") == "database" else None
    )


def coordinate(rt: JobRuntime) -> str | None:
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
    # One agent for every attempt: a retry's conversation holds the rejected plan, so the Planner fixes that plan.
    agent = build_agent("planner", rt, prompt)
    problems: list[str] = []
    for _ in range(MAX_PLAN_ATTEMPTS):
        ask = (
            "Write the plan."
            if not problems
            else "Your plan above broke these rules: "
            + "; ".join(problems)
            + ". Write the whole plan again, in the plan format, with these fixed and nothing else changed."
        )
        plan = str(agent(ask)).strip()
        problems = plan_problems(plan)
        if not problems:
            return normalise_plan(plan)  # one canonical format for the Tracker and every agent
    raise InsightloomError(
        f"The Planner did not produce a valid plan: {'; '.join(problems)}.", "try again, or rephrase the request."
    )


def set_plan(rt: JobRuntime, plan: str) -> None:
    rt.state.set_plan(plan)
    rt.job.write_text("plan.md", plan)


def plan(rt: JobRuntime) -> str:
    rt.job.set_stage("plan")
    text = _ask_planner(rt, "planner")
    set_plan(rt, text)
    return text


def revise(rt: JobRuntime, feedback: str, revision: int) -> str:
    rt.job.set_stage("plan")
    text = _ask_planner(rt, "planner_revise", previous_plan=rt.state.full_plan, feedback=feedback, revision=revision)
    set_plan(rt, text)
    return text


def request_review(rt: JobRuntime, revision: int) -> None:
    """Ask for a decision on the current plan; the job then waits on disk, holding no worker.

    The caller has entered the ``review`` stage already, so that ``plan_revised`` sits right before this request.
    """
    rt.job.update(
        status="awaiting_review",
        stage="review",
        revision=revision,
        max_revisions=rt.settings.max_revisions,
        revising=None,
    )
    rt.job.events.emit(
        "plan_review_request", plan=rt.state.full_plan, revision=revision, max_revisions=rt.settings.max_revisions
    )


def supervise(rt: JobRuntime) -> None:
    rt.job.set_stage("supervise")
    prompt = render_prompt(
        "supervisor",
        rt.settings.prompts_dir,
        full_plan=rt.state.full_plan,
        max_reporter_retries=rt.settings.max_reporter_retries,
        max_tokens=rt.settings.spec("supervisor").max_tokens,
    )
    agent = build_agent("supervisor", rt, prompt, make_agent_tools(rt))
    runner = get_runner(rt.settings.runner)
    runner.prestart(rt.root)  # the job's sandboxed server starts while the first model calls are made
    try:
        run_rounds(rt, agent)
    finally:
        runner.release(rt.root)


def record_metrics(rt: JobRuntime, seconds: float) -> None:
    """Add run figures to run_info.json: wall time, scripts run and their total time, model calls per agent."""
    info = read_json(rt.job.path("run_info.json"), beneath=rt.root)
    scripts = rt.scripts
    usage = rt.ledger.to_dict()["agents"]
    info["metrics"] = {
        "wall_seconds": round(seconds, 3),
        "scripts_run": len(scripts),
        "script_seconds": round(sum(s["seconds"] for s in scripts), 3),
        "model_calls": {role: usage[role]["calls"] for role in ROLES},
    }
    rt.job.write_json("run_info.json", info)


def export_pdf(rt: JobRuntime) -> None:
    """A PDF beside the DOCX where LibreOffice is installed; its absence is not an error."""
    from ..report.pdf import docx_to_pdf

    try:
        docx_to_pdf(rt.job.path("final_report.docx"))
    except (OSError, InsightloomError) as exc:
        logger.warning("PDF export failed: %s", exc)


REVIEW_NOTES = {
    "en": {
        "audit": "Needs review: after the Reporter's retries the audit still found numbers without a matching "
        "citation (see audit_findings.json).",
        "unaudited": "Needs review: this report was not audited.",
        "values": "Needs review: some numbers this report cites did not match their independent re-computation when "
        "they were checked again (see validation_report.txt).",
    },
    "ko": {
        "audit": "검토 필요: Reporter가 재시도한 뒤에도 감사에서 올바른 인용이 없는 수치가 발견되었습니다"
        "(audit_findings.json 참고).",
        "unaudited": "검토 필요: 이 보고서는 감사를 거치지 않았습니다.",
        "values": "검토 필요: 이 보고서가 인용한 일부 수치가 다시 검증할 때 독립 재계산과 일치하지 않았습니다"
        "(validation_report.txt 참고).",
    },
}


def _review_reasons(rt: JobRuntime) -> list[str]:
    """Why the finished report needs a human: the final audit did not pass (or the Auditor never ran), or a number
    the report cites failed its final re-computation (:func:`recheck_delivery`).

    A ``needs_review`` number the report does not cite is only logged: the reader never sees it.
    """
    from ..validation import blocking_reviews

    verdict = recheck_delivery(rt)
    reasons = [] if verdict == "pass" else ["audit" if verdict else "unaudited"]
    try:
        blocking, uncited = blocking_reviews(rt.root)
    except InsightloomError as exc:
        logger.warning("cannot read citations.json: %s", exc)
        blocking, uncited = [], []
    if uncited:
        logger.info("needs_review but not cited by the report (not blocking): %s", ", ".join(uncited))
    if blocking:
        reasons.append("values")
    return reasons


def _profile_dict(rt: JobRuntime) -> dict[str, Any]:
    """The data profile as a dict: the one intake built, else ``cache/profile.json`` (a resumed job)."""
    if rt.profile is not None:
        return rt.profile.to_dict()
    try:
        data = read_json(rt.job.path("cache/profile.json"), beneath=rt.root)
    except (OSError, ValueError, UnsafePathError) as exc:  # planted as a link or FIFO: judged as no profile
        logger.warning("cannot read the data profile: %s", exc)
        return {}
    return data if isinstance(data, dict) else {}


def _degenerate(rt: JobRuntime) -> list[Degenerate]:
    reasons = degenerate_reasons(
        _profile_dict(rt), rt.root, minimum=rt.settings.min_verified_numbers, language=rt.language
    )
    for reason in reasons:
        logger.warning("job %s: degenerate report (%s)", rt.job.id, reason.kind)
    return reasons


def _stamp_report(rt: JobRuntime, note: str) -> None:
    """Re-render the last report.md with the note under the title. Nothing else changes, so no re-audit."""
    from ..report.render import MARKDOWN_NAME, render_report

    try:
        markdown = read_text(rt.job.path(MARKDOWN_NAME), beneath=rt.root)
    except FileNotFoundError:
        logger.warning("no %s to re-render; the needs_review note is only in job.json", MARKDOWN_NAME)
        return
    except (OSError, UnicodeDecodeError, InsightloomError) as exc:
        logger.warning("could not read %s to put the needs_review note into the report: %s", MARKDOWN_NAME, exc)
        return
    try:
        render_report(markdown, rt.root, status_note=note)
    except (OSError, InsightloomError) as exc:
        logger.warning("could not put the needs_review note into the report: %s", exc)


def final_status(rt: JobRuntime) -> tuple[Status, str | None]:
    """The terminal status after the Supervisor finished, and its message.

    ``completed`` needs a rendered report whose audit passed, no cited calculation left ``needs_review`` and no
    sign of a degenerate success (no measure, numeric-looking text columns, too few verified numbers). Otherwise
    the job ends ``needs_review``: the message says why, and the report gets the same note under its title (in the
    report's language) before the PDF is exported, so the status is visible in the document itself.
    """
    docx = rt.job.path("final_report.docx")
    if not is_regular_file(docx, beneath=rt.root):  # a link or FIFO a script left there is no rendered report
        return "failed", "The Supervisor finished without a rendered report (final_report.docx is missing)."
    notes = REVIEW_NOTES.get(rt.language, REVIEW_NOTES["en"])
    reasons = [notes[reason] for reason in _review_reasons(rt)] + [reason.note for reason in _degenerate(rt)]
    if not reasons:
        return "completed", None
    note = " ".join(reasons)
    rt.status_note = note  # a later render in this job keeps the note too
    _stamp_report(rt, note)
    return "needs_review", note


def index_knowledge(job_dir: Path) -> None:
    """Index the finished job's knowledge for follow-up questions; a failure only costs a lazy rebuild later."""
    from ..ask.fragments import index_job

    try:
        index_job(job_dir)
    except (OSError, ValueError, InsightloomError) as exc:
        logger.warning("could not index the job's knowledge for questions: %s", exc)


def finish(rt: JobRuntime, status: Status, *, report: Path | None = None, error: str | None = None) -> None:
    """Record the terminal status; failed and cancelled jobs keep the stage they stopped in.

    For ``needs_review``, ``error`` is the reason (from :func:`final_status`); job.json keeps it as ``review_reason``
    since nothing failed.
    """
    if status == "failed":
        rt.job.update(status=status, error=error)
        rt.job.events.emit("failed", error=error or "unknown error")
        return
    if status == "cancelled":
        rt.job.update(status=status)
        rt.job.events.emit("cancelled")
        return
    extra = {"review_reason": error} if status == "needs_review" and error else {}
    index_knowledge(rt.root)
    rt.job.update(status=status, stage="done", **extra)
    rt.job.events.emit("stage", name="done")
    rel = report.relative_to(rt.root).as_posix() if report else None
    rt.job.events.emit(status, report=rel)
