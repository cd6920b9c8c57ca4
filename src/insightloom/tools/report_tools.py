"""Deterministic tools of the Validator, Reporter and Auditor: re-check, render and audit."""

from __future__ import annotations

import logging

from strands import tool
from strands.types.tools import AgentTool

from ..errors import InsightloomError, RenderRefused
from ..report.audit import audit_report as run_audit
from ..report.render import describe_problem
from ..report.render import render_report as run_render
from ..runtime import JobRuntime
from ..validation import validate_job
from .tool_results import tool_error

logger = logging.getLogger(__name__)


def make_validate_calculations(rt: JobRuntime) -> AgentTool:
    @tool(name="validate_calculations")
    def validate_calculations() -> str | dict:
        """Re-compute every tracked calculation's SQL check with DuckDB and write citations.json.

        The result also lists the unchecked calculations the tiers selected for your own verification script, each
        with its table, columns, formula and recipe; record what you re-compute with record_verification(...).
        """
        try:
            return validate_job(rt.root).to_text()
        except InsightloomError as exc:
            return tool_error(str(exc))

    return validate_calculations


def _refusal_text(exc: RenderRefused) -> str:
    """The refusal as the Reporter sees it: every refused reference, then what to do (rewrite, never type it)."""
    lines = ["Render refused. Rewrite these passages without the references (or with verified ones) and call again:"]
    lines += [f"- {describe_problem(problem)}" for problem in getattr(exc, "problems", []) or []]
    if len(lines) == 1:
        lines.append(str(exc))
    lines.append("Only verified calculations can be printed; never type the number as digits instead.")
    return "\n".join(lines)


def make_render_report(rt: JobRuntime) -> AgentTool:
    @tool(name="render_report")
    def render_report(markdown: str) -> str | dict:
        """Render the report Markdown into final_report.docx, replacing each {{calc:ID}} by its verified value.

        Args:
            markdown: The whole report in Markdown, numbers only as {{calc:ID}} references.
        """
        try:
            result = run_render(markdown, rt.root, status_note=rt.status_note)
        except RenderRefused as exc:
            return tool_error(_refusal_text(exc))
        except InsightloomError as exc:
            return tool_error(str(exc))
        return (
            f"Rendered final_report.docx with {len(result.markers)} cited calculations, "
            f"{len(result.charts)} charts and {result.tables} tables."
        )

    return render_report


def make_audit_report(rt: JobRuntime) -> AgentTool:
    @tool(name="audit_report")
    def audit_report() -> str | dict:
        """Audit final_report.docx for uncited numbers, wrong or undefined markers and uncited calculations."""
        if not rt.job.path("final_report.docx").exists():
            return tool_error("final_report.docx does not exist yet. Fix: the Reporter must render the report first.")
        result = run_audit(rt.root, retry_count=rt.audits, max_retries=rt.settings.max_reporter_retries)
        rt.audits += 1
        rt.job.update(audits=rt.audits)
        return f"Verdict: {result.verdict}\n{result.to_text()}"

    return audit_report
