"""Deterministic tools of the Validator, Reporter and Auditor: re-check, render (whole or by section), repair, audit.

The Reporter's tools share a :class:`ReportMemory` within one Reporter call, so ``patch_report()`` with no argument
repairs what the last refusal named.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from strands import tool
from strands.types.tools import AgentTool

from ..errors import InsightloomError, RenderRefused
from ..fileio import file_digest, is_regular_file, read_text
from ..plan import parse_plan
from ..report.audit import FINDINGS_FILE
from ..report.audit import audit_report as run_audit
from ..report.conclusions import conclusions
from ..report.render import MARKDOWN_NAME, describe_problem, refuse_if_problems
from ..report.render import render_report as run_render
from ..report.repair import describe_changes, patch_report, repair_refused
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
from ..report.summary_table import summary_table, table_refusal, with_summary_table
from ..runtime import JobRuntime
from ..validation import validate_job
from .tool_results import tool_error

logger = logging.getLogger(__name__)

#: Render attempts of one patch_report call: each refusal is repaired in turn, until the report renders.
PATCH_ROUNDS = 3


@dataclass
class ReportMemory:
    """What the Reporter's tools remember within one Reporter call.

    Attributes:
        refusal: The text of the last render refusal ("" after a successful render).
    """

    refusal: str = ""


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
    lines.append(
        "Only verified calculations and claims can be printed; never type the number as digits, nor a claim word "
        "without its {{claim:ID}}, instead."
    )
    if whole:
        lines.append(_SECTION_RETRY)
    return "\n".join(lines)


def _plan_title(rt: JobRuntime) -> str | None:
    """The plan's report title, for a report assembled from sections that has no ``# `` section of its own."""
    if not rt.state.full_plan:
        return None
    return parse_plan(rt.state.full_plan).title.strip() or None


def _render(rt: JobRuntime, markdown: str) -> str:
    """Render the whole report. One that prints numbers but holds no table gets the summary table of the verified
    numbers (every report has at least one table), and the answer says so."""
    added = ""
    if table_refusal(markdown):
        with_table = with_summary_table(markdown, summary_table(rt.root, language=rt.language), language=rt.language)
        if with_table != markdown:
            markdown, added = with_table, " A summary table of the verified numbers was added (the report had none)."
    result = run_render(markdown, rt.root, status_note=rt.status_note)
    rt.note_evidence("rendered")
    claims = f" and {len(result.claims)} cited claims" if result.claims else ""
    return (
        f"Rendered final_report.docx with {len(result.markers) - len(result.claims)} cited calculations{claims}, "
        f"{len(result.charts)} charts and {result.tables} tables.{added}"
    )


def _refused(memory: ReportMemory, exc: RenderRefused, *, whole: bool) -> dict:
    """The refusal as a tool error, kept for patch_report() in this Reporter call."""
    memory.refusal = _refusal_text(exc, whole=whole)
    return tool_error(memory.refusal)


def _render_call(rt: JobRuntime, markdown: str, memory: ReportMemory) -> str | dict:
    """render_report: the whole report given (its sections stored too), or the stored sections assembled."""
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
        answer = _render(rt, markdown)
    except RenderRefused as exc:
        return _refused(memory, exc, whole=whole)
    except InsightloomError as exc:
        return tool_error(str(exc))
    memory.refusal = ""
    return answer


def make_render_report(rt: JobRuntime, memory: ReportMemory | None = None) -> AgentTool:
    memory = memory if memory is not None else ReportMemory()

    @tool(name="render_report")
    def render_report(markdown: str = "") -> str | dict:
        """Render the report into final_report.docx, replacing each {{calc:ID}} by its verified value and each
        {{claim:ID}} by its checked sentence ("no clear trend: ...").

        A claim word (rising, main driver, dominates, evenly, strong correlation, significant) may stand only in a
        sentence that cites a {{claim:ID}}; written as free text it is refused.

        Args:
            markdown: The whole report in Markdown, numbers only as {{calc:ID}} references and verdicts only as
                {{claim:ID}}. Leave it empty to render the sections stored with render_section, in order.
        """
        return _render_call(rt, markdown, memory)

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


def make_render_section(rt: JobRuntime, memory: ReportMemory | None = None) -> AgentTool:
    memory = memory if memory is not None else ReportMemory()

    @tool(name="render_section")
    def render_section(heading: str, markdown: str) -> str | dict:
        """Check one section of the report and store it; render_report() then renders all stored sections.

        Calling it again with the same heading replaces that section and its old sub-sections (a ### sub-section
        left out of the new Markdown is gone), so a refused or audited section is resent alone. An empty markdown
        deletes the section and its sub-sections (use it to rename a heading: delete the old one, store the new
        one). It refuses a section exactly as render_report would (unverified or unknown references, near misses
        such as {calc:x}, typed numbers anywhere, headings included, claim words without a {{claim:ID}} in their
        sentence, contradicting claims), naming each passage.

        Args:
            heading: The section heading, e.g. "Executive summary" (or "## Executive summary"; "# Title" for the
                title and the text under it).
            markdown: The Markdown under the heading, numbers only as {{calc:ID}} and verdicts only as {{claim:ID}}
                references; empty to delete.
        """
        try:
            stored = load_sections(rt.root)
            new = section_from_call(heading, markdown, stored)
            if is_deletion(new):
                return _deleted(rt, new[0].heading, stored)
            refuse_if_problems("\n".join(section.markdown() for section in new), rt.root)
            sections = store_sections(rt.root, new)
        except RenderRefused as exc:
            return _refused(memory, exc, whole=False)
        except InsightloomError as exc:
            return tool_error(str(exc))
        return (
            f"Stored section '{new[0].heading}'. Stored sections, in order: {_order(sections)}. "
            "Call render_report() with no markdown when every section is stored."
        )

    return render_section


def _current_report(rt: JobRuntime) -> str | None:
    """The report as last stored: its sections assembled when stored (they may be newer), else report.md."""
    sections = load_sections(rt.root)
    if sections:
        return assemble(sections, _plan_title(rt))
    path = rt.job.path(MARKDOWN_NAME)
    return read_text(path, beneath=rt.root) if is_regular_file(path, beneath=rt.root) else None


def _first_repair(rt: JobRuntime, markdown: str, memory: ReportMemory, problems: str) -> tuple[str, str] | None:
    """The repaired draft and what it was repaired from: the given problem lines, the last refusal of this call,
    else the last audit's findings; None when there is nothing to repair from."""
    refusal = problems.strip() or memory.refusal
    if refusal:
        return repair_refused(markdown, refusal), "the render refusal"
    findings = rt.job.path(FINDINGS_FILE)
    if rt.audits and is_regular_file(findings, beneath=rt.root):
        return patch_report(markdown, read_text(findings, beneath=rt.root)), f"the last audit ({FINDINGS_FILE})"
    return None


def _render_repaired(rt: JobRuntime, draft: str) -> tuple[str, str | None, str]:
    """Render the draft, repairing each refusal in turn (a missing table is added by the render itself).

    Returns the final draft, the render's answer (None when still refused) and the last refusal's text.
    """
    refusal = ""
    for _ in range(PATCH_ROUNDS):
        store_sections(rt.root, split_sections(draft), replace_all=True)
        try:
            return draft, _render(rt, draft), ""
        except RenderRefused as exc:
            refusal = _refusal_text(exc, whole=False)
        repaired = repair_refused(draft, refusal)
        if repaired == draft:
            break
        draft = repaired
    return draft, None, refusal


def _patch_answer(changes: list[str], source: str, rendered: str | None, refusal: str) -> str | dict:
    changed = "\n".join(f"- {line}" for line in changes) or "- nothing (no flagged passage is left in the report)"
    if rendered is None:
        return tool_error(
            f"Patched the report from {source}, but it is still refused.\nChanged:\n{changed}\nLeft:\n{refusal}"
        )
    return (
        f"{rendered}\nPatched the report from {source}; every other line is unchanged.\nChanged:\n{changed}\n"
        "Left: nothing the renderer refuses; call the Auditor (or audit_report) to confirm."
    )


def make_patch_report(rt: JobRuntime, memory: ReportMemory | None = None) -> AgentTool:
    memory = memory if memory is not None else ReportMemory()

    @tool(name="patch_report")
    def patch_report_tool(problems: str = "") -> str | dict:
        """Repair the report in place and render it again, instead of rewriting it.

        From the last render refusal of this call (or the problem lines you pass), or else from the last audit's
        findings (audit_findings.json): a wrong value becomes the cited calculation's reference, a sentence holding
        a typed number, an undefined marker, a refused or near-miss reference, a claim word without a claim, or a
        contradicting claim is dropped (a table cell gets "-"), a chart whose caption holds a number or a claim word
        is left out, and a report without a table gets the summary table. Every other line stays word for word.
        Answers with what changed and what is left.

        Args:
            problems: The refusal's problem lines to repair ("- typed number '12' in section ..."); leave it empty
                to repair the last refusal, or the last audit's findings when nothing was refused.
        """
        try:
            markdown = _current_report(rt)
            if markdown is None:
                return tool_error("There is no report to patch yet. Fix: render it first with render_report(markdown).")
            first = _first_repair(rt, markdown, memory, problems)
            if first is None:
                return tool_error(
                    "Nothing to repair from: no render was refused in this call and the report was not audited. "
                    "Fix: pass the refusal's problem lines as patch_report(problems), or render the report first."
                )
            draft, source = first
            draft, rendered, refusal = _render_repaired(rt, draft)
        except (ValueError, AttributeError) as exc:  # audit_findings.json that is not the audit's JSON
            return tool_error(f"Cannot read what to repair ({exc}). Fix: rewrite the flagged passages yourself.")
        except InsightloomError as exc:
            return tool_error(str(exc))
        memory.refusal = refusal
        return _patch_answer(describe_changes(markdown, draft), source, rendered, refusal)

    return patch_report_tool


def make_summary_table(rt: JobRuntime) -> AgentTool:
    @tool(name="summary_table")
    def summary_table_tool(rows: int = 8) -> str | dict:
        """A Markdown table of the headline verified numbers (label | {{calc:ID}}), most important first.

        Paste it into the report (for instance under the executive summary): every report that prints numbers
        needs at least one table.

        Args:
            rows: The most rows (1 to 20).
        """
        try:
            table = summary_table(rt.root, language=rt.language, limit=max(1, min(int(rows), 20)))
        except (InsightloomError, ValueError) as exc:
            return tool_error(str(exc))
        if not table:
            return tool_error("No verified number can go in a table yet. Fix: run the Validator first.")
        return table

    return summary_table_tool


def make_draft_conclusions(rt: JobRuntime) -> AgentTool:
    @tool(name="draft_conclusions")
    def draft_conclusions() -> str | dict:
        """Draft conclusions from the verified claims only: the main driver (largest effect size) with its top group,
        that breakdown's concentration, the trend verdict and a correlation (with its outlier verdict); lines whose
        claims contradict are left out. One Markdown line each, verdicts as {{claim:ID}} and numbers as {{calc:ID}};
        use them under the conclusions heading, with your recommendations, rather than describing the method."""
        try:
            lines = conclusions(rt.root, language=rt.language)
        except InsightloomError as exc:
            return tool_error(str(exc))
        if not lines:
            return "No driver, trend or correlation claim was verified: conclude from the headline figures instead."
        return "\n".join(f"- {line}" for line in lines)

    return draft_conclusions


def make_audit_report(rt: JobRuntime) -> AgentTool:
    @tool(name="audit_report")
    def audit_report() -> str | dict:
        """Audit final_report.docx for uncited numbers, wrong or undefined markers, uncited calculations, and
        unsupported or contradicted claims (E)."""
        if not rt.job.path("final_report.docx").exists():
            return tool_error("final_report.docx does not exist yet. Fix: the Reporter must render the report first.")
        result = run_audit(rt.root, retry_count=rt.audits, max_retries=rt.settings.max_reporter_retries)
        rt.last_audit = (file_digest(rt.job.path("final_report.docx"), beneath=rt.root), result.verdict)
        rt.audits += 1
        rt.job.update(audits=rt.audits)
        rt.note_evidence("audited")
        return f"Verdict: {result.verdict}\n{result.to_text()}"

    return audit_report
