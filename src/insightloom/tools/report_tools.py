"""Deterministic tools of the Validator, Reporter and Auditor: re-check, render (whole or by section) and audit."""

from __future__ import annotations

import logging

from strands import tool
from strands.types.tools import AgentTool

from ..errors import InsightloomError, RenderRefused
from ..fileio import file_digest
from ..plan import parse_plan
from ..report.audit import audit_report as run_audit
from ..report.render import describe_problem, refuse_if_problems
from ..report.render import render_report as run_render
from ..report.sections import (
    Section,
    assemble,
    delete_section,
    is_deletion,
    load_sections,
    section_from_call,
    split_sections,
    store_sections,
)
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
            summary = validate_job(rt.root)
        except InsightloomError as exc:
            return tool_error(str(exc))
        rt.note_evidence("validated")  # the Tracker ticks the Validator's item on this, not on the file alone
        return summary.to_text()

    return validate_calculations


_SECTION_RETRY = (
    "The report is stored by section: resend only a failing section with render_section(heading, markdown), "
    "then call render_report() with no markdown."
)


def _refusal_text(exc: RenderRefused, *, whole: bool) -> str:
    """The refusal as the Reporter sees it: every refused passage, then what to do (rewrite, never type it)."""
    lines = ["Render refused. Rewrite these passages and call again:"]
    lines += [f"- {describe_problem(problem)}" for problem in getattr(exc, "problems", []) or []]
    if len(lines) == 1:
        lines.append(str(exc))
    lines.append("Only verified calculations can be printed; never type the number as digits instead.")
    if whole:
        lines.append(_SECTION_RETRY)
    return "\n".join(lines)


def _plan_title(rt: JobRuntime) -> str | None:
    """The plan's report title, for a report assembled from sections that has no ``# `` section of its own."""
    if not rt.state.full_plan:
        return None
    return parse_plan(rt.state.full_plan).title.strip() or None


def _render(rt: JobRuntime, markdown: str) -> str:
    result = run_render(markdown, rt.root, status_note=rt.status_note)
    rt.note_evidence("rendered")
    return (
        f"Rendered final_report.docx with {len(result.markers)} cited calculations, "
        f"{len(result.charts)} charts and {result.tables} tables."
    )


def make_render_report(rt: JobRuntime) -> AgentTool:
    @tool(name="render_report")
    def render_report(markdown: str = "") -> str | dict:
        """Render the report into final_report.docx, replacing each {{calc:ID}} by its verified value.

        Args:
            markdown: The whole report in Markdown, numbers only as {{calc:ID}} references. Leave it empty to
                render the sections stored with render_section, in order.
        """
        whole = bool(markdown.strip())
        try:
            if whole:
                store_sections(rt.root, split_sections(markdown), replace_all=True)
            else:
                sections = load_sections(rt.root)
                if not sections:
                    return tool_error(
                        "No sections are stored yet. Fix: call render_section(heading, markdown) for each section "
                        "first, or pass the whole report as render_report(markdown)."
                    )
                markdown = assemble(sections, _plan_title(rt))
            return _render(rt, markdown)
        except RenderRefused as exc:
            return tool_error(_refusal_text(exc, whole=whole))
        except InsightloomError as exc:
            return tool_error(str(exc))

    return render_report


def _order(sections: list[Section]) -> str:
    return "; ".join(section.heading or "(text above the first heading)" for section in sections) or "(none)"


def _deleted(rt: JobRuntime, heading: str, stored: list[Section]) -> str:
    """What ``render_section(heading, "")`` did: the section and its sub-sections are gone, or were never stored."""
    sections = delete_section(rt.root, heading)
    if sections is None:
        return (
            f"No stored section is headed '{heading}', so nothing was deleted (an empty markdown deletes a section). "
            f"Stored sections, in order: {_order(stored)}."
        )
    return (
        f"Deleted section '{heading}' and its sub-sections. Stored sections, in order: {_order(sections)}. "
        "Call render_report() with no markdown when every section is stored."
    )


def make_render_section(rt: JobRuntime) -> AgentTool:
    @tool(name="render_section")
    def render_section(heading: str, markdown: str) -> str | dict:
        """Check one section of the report and store it; render_report() then renders all stored sections.

        Calling it again with the same heading replaces that section and its old sub-sections (a ### sub-section
        left out of the new Markdown is gone), so a refused or audited section is resent alone. An empty markdown
        deletes the section and its sub-sections (use it to rename a heading: delete the old one, store the new
        one). It refuses a section exactly as render_report would (unverified or unknown references, near misses
        such as {calc:x}, typed numbers anywhere, headings included), naming each passage.

        Args:
            heading: The section heading, e.g. "Executive summary" (or "## Executive summary"; "# Title" for the
                title and the text under it).
            markdown: The Markdown under the heading, numbers only as {{calc:ID}} references; empty to delete.
        """
        try:
            stored = load_sections(rt.root)
            new = section_from_call(heading, markdown, stored)
            if is_deletion(new):
                return _deleted(rt, new[0].heading, stored)
            refuse_if_problems("\n".join(section.markdown() for section in new), rt.root)
            sections = store_sections(rt.root, new)
        except RenderRefused as exc:
            return tool_error(_refusal_text(exc, whole=False))
        except InsightloomError as exc:
            return tool_error(str(exc))
        return (
            f"Stored section '{new[0].heading}'. Stored sections, in order: {_order(sections)}. "
            "Call render_report() with no markdown when every section is stored."
        )

    return render_section


def make_audit_report(rt: JobRuntime) -> AgentTool:
    @tool(name="audit_report")
    def audit_report() -> str | dict:
        """Audit final_report.docx for uncited numbers, wrong or undefined markers and uncited calculations."""
        if not rt.job.path("final_report.docx").exists():
            return tool_error("final_report.docx does not exist yet. Fix: the Reporter must render the report first.")
        result = run_audit(rt.root, retry_count=rt.audits, max_retries=rt.settings.max_reporter_retries)
        rt.last_audit = (file_digest(rt.job.path("final_report.docx"), beneath=rt.root), result.verdict)
        rt.audits += 1
        rt.job.update(audits=rt.audits)
        rt.note_evidence("audited")
        return f"Verdict: {result.verdict}\n{result.to_text()}"

    return audit_report
