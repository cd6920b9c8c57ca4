"""Host reads of job files go through the one no-follow file API (issue 24): audit, PDF export, resume, usage and
state, and downloads never read another job's files through a link a script planted in its own job folder.

Each test plants what a sandboxed script can plant (a link to job B's files in job A) and checks that the host
refuses or skips it instead of reading, converting or serving job B's data.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from docx import Document

from insightloom.config import Settings
from insightloom.errors import UnsafePathError
from insightloom.jobs import JobFolder
from insightloom.report import pdf
from insightloom.report.audit import audit_report
from insightloom.runtime import JobRuntime
from insightloom.state import SharedState
from insightloom.storage.local import LocalStore
from insightloom.telemetry.usage import UsageLedger
from insightloom.workflow import load_runtime
from insightloom.workflow.pipeline import job_inputs

SECRET = "TOPSECRET-OF-JOB-B"

STAND_IN_SOFFICE = """#!/bin/sh
# Stands in for LibreOffice: converts by copying the DOCX's bytes, so a leaked conversion carries job B's text.
while [ "$#" -gt 1 ]; do
  if [ "$1" = "--outdir" ]; then outdir="$2"; fi
  shift
done
cp "$1" "$outdir/$(basename "$1" .docx).pdf"
"""


@pytest.fixture
def jobs(tmp_path: Path) -> tuple[JobFolder, JobFolder]:
    """Job A (the script's) and job B (another user's, holding the secret), side by side in one artifacts folder."""
    artifacts = tmp_path / "artifacts"
    a, b = JobFolder.create(artifacts), JobFolder.create(artifacts)
    doc = Document()
    doc.add_paragraph(f"Job B's report: {SECRET}")
    doc.save(str(b.path("final_report.docx")))
    b.write_json("request.json", {"request": SECRET, "inputs": ["payroll.csv"], "language": "en"})
    b.write_json("usage.json", {"agents": {}, "model_calls": [], SECRET: 1})
    b.write_json("shared_state.json", {"messages": SECRET, "clues": "", "full_plan": "", "history": []})
    (b.path("data", "payroll.csv")).write_text(f"name,salary\n{SECRET},1\n", encoding="utf-8")
    a.write_json("request.json", {"request": "Analyze", "inputs": ["payroll.csv"], "language": "en"})
    a.write_json("run_info.json", {"config": Settings(provider="offline").to_dict()})
    return a, b


def _plant(link: Path, target: Path) -> None:
    """What a script in job A can do: replace one of its own files or folders with a link."""
    if link.is_dir() and not link.is_symlink():
        for child in link.iterdir():
            child.unlink()
        link.rmdir()
    else:
        link.unlink(missing_ok=True)
    link.symlink_to(target, target_is_directory=target.is_dir())


def _no_secret_in(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert SECRET.encode() not in path.read_bytes(), path


def test_audit_refuses_a_final_report_linked_to_another_jobs_report(jobs: tuple[JobFolder, JobFolder]) -> None:
    a, b = jobs
    _plant(a.path("final_report.docx"), b.path("final_report.docx"))
    with pytest.raises(UnsafePathError, match="final_report.docx"):
        audit_report(a.root)
    _no_secret_in(a.root)


def test_pdf_export_never_converts_another_jobs_report_through_a_link(
    jobs: tuple[JobFolder, JobFolder], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = jobs
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "soffice").write_text(STAND_IN_SOFFICE, encoding="utf-8")
    (bin_dir / "soffice").chmod(0o755)
    monkeypatch.setattr(pdf, "find_libreoffice", lambda: str(bin_dir / "soffice"))
    _plant(a.path("final_report.docx"), b.path("final_report.docx"))
    with pytest.raises(UnsafePathError):
        pdf.docx_to_pdf(a.path("final_report.docx"))
    assert not b.path("final_report.pdf").exists() and not a.path("final_report.pdf").exists()


@pytest.mark.parametrize("read", [pdf.page_texts, pdf.image_pages])
def test_reading_pdf_pages_never_follows_a_link_or_blocks_on_a_fifo(
    read: Callable[[Path], object], jobs: tuple[JobFolder, JobFolder], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = jobs
    b.path("final_report.pdf").write_bytes(b"%PDF-1.4 " + SECRET.encode())
    monkeypatch.setattr(pdf.shutil, "which", lambda tool: "/bin/cat")  # poppler would read whatever it is given
    _plant(a.path("final_report.pdf"), b.path("final_report.pdf"))
    with pytest.raises(UnsafePathError):
        read(a.path("final_report.pdf"))
    a.path("final_report.pdf").unlink()
    os.mkfifo(a.path("final_report.pdf"))
    with pytest.raises(UnsafePathError):
        read(a.path("final_report.pdf"))


def test_a_resumed_job_takes_no_input_from_a_data_folder_linked_to_another_job(
    jobs: tuple[JobFolder, JobFolder],
) -> None:
    a, b = jobs
    _plant(a.path("data"), b.path("data"))
    rt = JobRuntime.create(a, Settings(provider="offline"), "Analyze", "en")
    with pytest.raises(UnsafePathError, match="data"):
        job_inputs(rt)


def test_a_link_planted_among_the_inputs_is_not_an_input(jobs: tuple[JobFolder, JobFolder]) -> None:
    a, b = jobs
    a.path("data", "sales.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    a.path("data", "payroll.csv").symlink_to(b.path("data", "payroll.csv"))
    os.mkfifo(a.path("data", "pipe.csv"))
    rt = JobRuntime.create(a, Settings(provider="offline"), "Analyze", "en")
    assert job_inputs(rt) == [a.path("data", "sales.csv")]


@pytest.mark.parametrize(
    ("name", "load"),
    [
        ("request.json", lambda root: load_runtime(root)),
        ("usage.json", lambda root: UsageLedger.load(root / "usage.json")),
        ("shared_state.json", lambda root: SharedState.load(root / "shared_state.json")),
    ],
)
def test_resume_state_is_never_read_through_a_link_to_another_job(
    jobs: tuple[JobFolder, JobFolder], name: str, load: Callable[[Path], object]
) -> None:
    a, b = jobs
    _plant(a.path(name), b.path(name))
    with pytest.raises(UnsafePathError, match=name):
        load(a.root)


def test_a_download_streams_the_file_it_checked_even_when_a_script_swaps_in_a_link(
    jobs: tuple[JobFolder, JobFolder],
) -> None:
    a, b = jobs
    a.path("data", "sales.csv").write_text("region,amount\nNorth,1\n", encoding="utf-8")
    store = LocalStore(a.root.parent)
    opened = store.open_file(a.id, "data/sales.csv")
    assert opened is not None
    handle, size = opened
    _plant(a.path("data", "sales.csv"), b.path("data", "payroll.csv"))  # after the check, before the body is sent
    with handle:
        body = handle.read()
    assert body == b"region,amount\nNorth,1\n" and len(body) == size
    assert store.open_file(a.id, "data/sales.csv") is None  # the link itself is never served


def test_the_lock_guard_planted_as_a_link_never_creates_or_touches_its_target(
    jobs: tuple[JobFolder, JobFolder], tmp_path: Path
) -> None:
    from insightloom.joblock import JobLock

    a, _ = jobs
    target = tmp_path / "outside" / "created-by-the-host"
    target.parent.mkdir()
    os.symlink(target, a.path(".job.lock.guard"))
    with pytest.raises(UnsafePathError, match="symbolic link"), JobLock(a.root):
        pass
    assert not target.exists()
    assert not a.path("job.lock").exists()


def test_a_lock_guard_a_script_holds_stops_the_host_with_a_named_error_instead_of_hanging(
    jobs: tuple[JobFolder, JobFolder], monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    from insightloom import joblock

    a, _ = jobs
    monkeypatch.setattr(joblock, "GUARD_WAIT_S", 0.3)
    held = os.open(a.path(".job.lock.guard"), os.O_RDWR | os.O_CREAT, 0o644)  # the script's own descriptor
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(joblock.JobLocked, match="guard stayed held"), joblock.JobLock(a.root):
            pass
    finally:
        os.close(held)
    with joblock.JobLock(a.root):  # released by the script: the host takes it
        assert a.path("job.lock").is_file()
