"""Report: the shared number format, the DOCX renderer with citations, and the audit.

Public API:
    format_value(value, unit, decimals=None) -> str ; cited_text(value, unit, decimals, marker) -> str
    render_report(markdown, job_dir, *, title=None, status_note=None) -> RenderResult  (raises RenderRefused)
    check_markdown(markdown, job_dir) -> list[problem]  (what render_report would refuse: a whole report or a section)
    report.sections: the report stored section by section (render_section / render_report() of the Reporter)
    report.labels: which numbers are claims, one rule for the renderer's refusal and the audit's finding A
    report.problems: the one line per refused passage that a refusal prints and a model reads back
    docx_to_pdf(docx) -> Path | None
    audit_report(job_dir, retry_count=0, *, max_retries=2) -> AuditResult

The names are imported on first use, so an analysis script that only needs ``report.labels`` (``save_chart`` checks
captions with it) does not import python-docx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from insightloom.report.audit import AuditResult, audit_report
    from insightloom.report.formatting import cited_text, format_value
    from insightloom.report.pdf import docx_to_pdf
    from insightloom.report.render import RenderResult, check_markdown, render_report

_HOMES = {
    "AuditResult": "audit",
    "audit_report": "audit",
    "cited_text": "formatting",
    "format_value": "formatting",
    "docx_to_pdf": "pdf",
    "RenderResult": "render",
    "check_markdown": "render",
    "render_report": "render",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'insightloom.report' has no attribute {name!r}")
    return getattr(importlib.import_module(f"insightloom.report.{home}"), name)
