"""Report: the shared number format, the DOCX renderer with citations, and the audit.

Public API:
    format_value(value, unit, decimals=None) -> str ; cited_text(value, unit, decimals, marker) -> str
    render_report(markdown, job_dir, *, title=None, status_note=None) -> RenderResult  (raises RenderRefused)
    check_markdown(markdown, job_dir) -> list[problem]  (what render_report would refuse: a whole report or a section)
    report.sections: the report stored section by section (render_section / render_report() of the Reporter)
    report.labels: which numbers are claims, one rule for the renderer's refusal and the audit's finding A
    docx_to_pdf(docx) -> Path | None
    audit_report(job_dir, retry_count=0, *, max_retries=2) -> AuditResult
"""

from insightloom.report.audit import AuditResult, audit_report
from insightloom.report.formatting import cited_text, format_value
from insightloom.report.pdf import docx_to_pdf
from insightloom.report.render import RenderResult, check_markdown, render_report

__all__ = [
    "AuditResult",
    "RenderResult",
    "audit_report",
    "check_markdown",
    "cited_text",
    "docx_to_pdf",
    "format_value",
    "render_report",
]
