"""The last line of defence before a job is called completed: the files it delivers are checked once more.

Scripts can write anywhere in their job folder, and a model can render again after the Auditor ran, so the verdict
and the statuses on disk may not describe what is delivered. Both deterministic checks therefore run again on the
delivered files, with no model call:

- validation re-computes every checked calculation from the stored metadata, so a status a script forged in
  citations.json does not survive it (citation ids, and the Validator's own script verifications of unchanged
  values, are kept);
- when final_report.docx is not the very file the last audit read (its SHA-256 differs, or the job was resumed),
  the audit runs again on it as the final audit: no retries are left, so its verdict is ``pass`` or
  ``needs_review``. The verdict is taken from the host's memory, never from audit_findings.json, which a script can
  write. A job whose Auditor never ran is unaudited.
"""

from __future__ import annotations

import logging

from ..errors import InsightloomError
from ..fileio import file_digest
from ..runtime import JobRuntime

logger = logging.getLogger(__name__)


def recheck_delivery(rt: JobRuntime) -> str | None:
    """Re-validate, then re-audit the delivered report; returns the final audit verdict, None when never audited."""
    from ..report.audit import audit_report
    from ..validation import validate_job

    try:
        validate_job(rt.root)
    except InsightloomError as exc:
        logger.warning("job %s: final re-validation failed: %s", rt.job.id, exc)
    if not rt.evidence.get("audited"):
        return None
    delivered = file_digest(rt.job.path("final_report.docx"), beneath=rt.root)
    if rt.last_audit is not None and delivered is not None and rt.last_audit[0] == delivered:
        return rt.last_audit[1]
    logger.info("job %s: the report changed since its last audit (or the job resumed); auditing it again", rt.job.id)
    try:
        result = audit_report(rt.root, retry_count=rt.audits, max_retries=rt.audits)
    except InsightloomError as exc:
        logger.warning("job %s: final audit failed: %s", rt.job.id, exc)
        return "needs_review"
    return result.verdict
