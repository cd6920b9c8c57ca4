"""Convert the DOCX to PDF with LibreOffice, when it is installed.

LibreOffice is optional: without it the job still delivers the DOCX, so this returns None instead of failing.
Each conversion uses its own throw-away LibreOffice profile, because two concurrent jobs sharing the default profile
block each other; on timeout the whole process group is killed (soffice forks helpers).

LibreOffice opens the paths it is given and follows links, and the job folder holds untrusted scripts' output, so it
never sees the job folder: the DOCX is copied through ``fileio`` (no link followed, a regular file) into a private
temporary folder, converted there, and the PDF is written back into the job through ``fileio`` too.

The page tests check the report's layout on this PDF (the references appendix takes at most a quarter of the pages,
no table row alone on a page): :func:`page_texts` reads each page's text and :func:`image_pages` the page of each
picture, with poppler's ``pdftotext`` and ``pdfimages`` (poppler-utils), and :func:`appendix_pages` counts the pages
from the appendix heading to the end. Poppler, too, reads only a private copy of the PDF. Every copy is capped at
``fileio.MAX_READ_BYTES``.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from ..fileio import MAX_READ_BYTES, open_regular, write_chunks_atomic

logger = logging.getLogger(__name__)

_BINARIES = ("libreoffice", "soffice")
_CHUNK = 1024 * 1024
_POPPLER_TIMEOUT_S = 60.0
POPPLER_HINT = "apt-get install poppler-utils"


def find_libreoffice() -> str | None:
    """The LibreOffice executable on PATH, or None."""
    for name in _BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


def docx_to_pdf(docx: Path, *, timeout: float = 120.0) -> Path | None:
    """Convert ``docx`` (a file directly in its job folder) to a PDF beside it.

    Args:
        docx: The DOCX to convert.
        timeout: Seconds before the conversion is killed.

    Returns:
        The PDF path, or None when LibreOffice is missing, fails or times out (logged).

    Raises:
        FileNotFoundError: There is no DOCX.
        UnsafePathError: The DOCX is a link or not a regular file (a script planted it).
    """
    exe = find_libreoffice()
    if exe is None:
        logger.info("LibreOffice not installed; skipping PDF (apt-get install libreoffice-writer)")
        return None
    docx = Path(docx)
    job_dir, target = docx.parent, docx.with_suffix(".pdf")
    with tempfile.TemporaryDirectory(prefix="insightloom-lo-") as private:
        work = Path(private)
        _copy(docx, job_dir, work / docx.name, work)
        converted = _convert(exe, work / docx.name, work / "profile", timeout)
        if converted is None:
            return None
        _copy(converted, work, target, job_dir)
    return target


def _copy(src: Path, src_dir: Path, dest: Path, dest_dir: Path) -> None:
    """Copy a regular file between the job folder and the private folder, never through a link in either (at most
    ``MAX_READ_BYTES``: a planted sparse file of many GB is refused, not streamed)."""
    with open_regular(src, beneath=src_dir, max_bytes=MAX_READ_BYTES) as (handle, _):
        write_chunks_atomic(dest, iter(lambda: handle.read(_CHUNK), b""), beneath=dest_dir)


def _convert(exe: str, docx: Path, profile: Path, timeout: float) -> Path | None:
    """Run LibreOffice on ``docx`` in the host's private folder; the PDF it wrote there, or None (logged)."""
    args = [
        exe,
        f"-env:UserInstallation={profile.as_uri()}",
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
    pdf = docx.with_suffix(".pdf")
    if proc.returncode != 0 or not pdf.is_file():
        logger.warning("PDF conversion of %s failed (exit %s): %s", docx.name, proc.returncode, err[-500:])
        return None
    return pdf


def _poppler(tool: str, pdf: Path, *args: str) -> str:
    """Run a poppler tool on a private copy of ``pdf`` (``{pdf}`` in ``args``) and return its standard output.

    Raises:
        FileNotFoundError: The tool is not installed (the message names the package), or there is no PDF.
        UnsafePathError: The PDF is a link, not a regular file, or too large.
        subprocess.CalledProcessError: It failed on the PDF.
    """
    exe = shutil.which(tool)
    if exe is None:
        raise FileNotFoundError(f"{tool} is not installed; to read a PDF's pages: {POPPLER_HINT}")
    pdf = Path(pdf)
    with tempfile.TemporaryDirectory(prefix="insightloom-pdf-") as private:
        copy = Path(private) / "report.pdf"
        _copy(pdf, pdf.parent, copy, Path(private))
        command = [exe, *(str(copy) if arg == "{pdf}" else arg for arg in args)]
        done = subprocess.run(command, capture_output=True, check=True, timeout=_POPPLER_TIMEOUT_S)
    return done.stdout.decode("utf-8", errors="replace")


def page_texts(pdf: Path) -> list[str]:
    """The text of each page of ``pdf``, in reading order (``pdftotext``; pages end with a form feed).

    Raises:
        FileNotFoundError: ``pdftotext`` is not installed.
        subprocess.CalledProcessError: It cannot read the PDF.
    """
    pages = _poppler("pdftotext", pdf, "-enc", "UTF-8", "{pdf}", "-").split("\f")
    return pages[:-1] if pages and not pages[-1].strip() else pages  # the text after the last form feed


def image_pages(pdf: Path) -> list[int]:
    """The page (1-based) of each picture drawn in ``pdf``, in drawing order (``pdfimages -list``; soft masks, the
    alpha channel of a PNG, are not pictures of their own).

    Raises:
        FileNotFoundError: ``pdfimages`` is not installed.
        subprocess.CalledProcessError: It cannot read the PDF.
    """
    rows = [line.split() for line in _poppler("pdfimages", pdf, "-list", "{pdf}").splitlines()[2:]]
    return [int(row[0]) for row in rows if len(row) > 2 and row[0].isdigit() and row[2] == "image"]


def appendix_pages(pages: list[str], heading: str) -> int:
    """How many pages the appendix takes: from the last page holding ``heading`` as a line of its own to the end
    (0 when no page does)."""
    for number in range(len(pages), 0, -1):
        if any(line.strip() == heading for line in pages[number - 1].splitlines()):
            return len(pages) - number + 1
    return 0
