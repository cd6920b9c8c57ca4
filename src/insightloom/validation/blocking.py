"""Which ``needs_review`` calculations block a job: only those the report cites.

A tracked number that failed re-computation but never reached the report changes nothing the reader sees, so it is
listed, not blocking. Before a report exists (no citation assigned and no final_report.docx) nobody knows yet what
will be cited, so every ``needs_review`` calculation counts. The final job status and ``insightloom verify`` both
decide with :func:`blocking_reviews`, so they cannot disagree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from insightloom.validation.core import NEEDS_REVIEW
from insightloom.validation.jobfiles import load_citations

REPORT_DOCX = "final_report.docx"


def _has_report(job_dir: Path, entries: list[dict[str, Any]]) -> bool:
    return (job_dir / REPORT_DOCX).exists() or any(entry.get("citation_id") for entry in entries)


def blocking_reviews(job_dir: Path) -> tuple[list[str], list[str]]:
    """Split the job's ``needs_review`` calculations into blocking and listed-only ones.

    Args:
        job_dir: The job folder (reads citations.json; none yet means nothing needs review).

    Returns:
        ``(blocking, uncited)``: the ids the report cites (every one before a report exists), and the ids it does
        not cite, each in citations.json order.

    Raises:
        ValidationError: citations.json exists but cannot be read.
    """
    job_dir = Path(job_dir)
    data = load_citations(job_dir, required=False)
    entries = [entry for entry in (data or {}).get("citations", []) if isinstance(entry, dict)]
    review = [entry for entry in entries if entry.get("verification_status") == NEEDS_REVIEW]
    if not _has_report(job_dir, entries):
        return [str(entry.get("calculation_id")) for entry in review], []
    blocking = [str(entry.get("calculation_id")) for entry in review if entry.get("citation_id")]
    uncited = [str(entry.get("calculation_id")) for entry in review if not entry.get("citation_id")]
    return blocking, uncited
