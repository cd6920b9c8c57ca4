"""Convert the DOCX to PDF with LibreOffice, when it is installed.

LibreOffice is optional: without it the job still delivers the DOCX, so this returns None instead of failing.
Each conversion uses its own throw-away LibreOffice profile, because two concurrent jobs sharing the default profile
block each other; on timeout the whole process group is killed (soffice forks helpers).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

_BINARIES = ("libreoffice", "soffice")


def find_libreoffice() -> str | None:
    """The LibreOffice executable on PATH, or None."""
    for name in _BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


def docx_to_pdf(docx: Path, *, timeout: float = 120.0) -> Path | None:
    """Convert ``docx`` to a PDF beside it.

    Args:
        docx: The DOCX to convert.
        timeout: Seconds before the conversion is killed.

    Returns:
        The PDF path, or None when LibreOffice is missing, fails or times out (logged).
    """
    exe = find_libreoffice()
    if exe is None:
        logger.info("LibreOffice not installed; skipping PDF (apt-get install libreoffice-writer)")
        return None
    docx = Path(docx).resolve()
    target = docx.with_suffix(".pdf")
    with tempfile.TemporaryDirectory(prefix="insightloom-lo-") as profile:
        args = [
            exe,
            f"-env:UserInstallation={Path(profile).as_uri()}",
            "--headless",
            "--convert-to",
            "pdf",
            "--outdir",
            str(docx.parent),
            str(docx),
        ]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            _out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            logger.warning("PDF conversion of %s timed out after %.0f s", docx.name, timeout)
            return None
    if proc.returncode != 0 or not target.is_file():
        logger.warning("PDF conversion of %s failed (exit %s): %s", docx.name, proc.returncode, err[-500:])
        return None
    return target
