"""A script may replace job files and folders with symbolic links; the host never writes, appends or reads through
them (escape class 2 of the isolation issue: code/ → site-packages, plan.md, events.jsonl, job.json)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from insightloom.config import Settings
from insightloom.errors import UnsafePathError
from insightloom.fileio import append_text, file_digest, read_text, write_text_atomic
from insightloom.jobs import JobFolder
from insightloom.runtime import JobRuntime
from insightloom.tools import make_update_plan
from insightloom.tools.write_and_execute import make_write_and_execute

PLAN = "# Plan\n## title\nT\n## steps\n### 1. Coder: A\n- [ ] Do one\n### 2. Validator: B\n- [ ] Check\n"


@pytest.fixture(params=["warm", "cold"])
def rt(request: pytest.FixtureRequest, tmp_path: Path) -> JobRuntime:
    job = JobFolder.create(tmp_path / "artifacts")
    settings = Settings(provider="offline", runner=request.param)
    runtime = JobRuntime.create(job, settings, "req", "en")
    runtime.state.set_plan(PLAN)
    return runtime


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the job standing for the venv's site-packages or /etc: nothing may land in it."""
    folder = tmp_path / "site-packages"
    folder.mkdir()
    (folder / "victim.txt").write_text("original\n", encoding="utf-8")
    return folder


def _call(tool, **kwargs):  # type: ignore[no-untyped-def]
    return tool._tool_func(**kwargs)


def _text(result: object) -> str:
    return result["content"][0]["text"] if isinstance(result, dict) else str(result)


def _plant(rt: JobRuntime, tool, link: str, target: Path) -> None:  # type: ignore[no-untyped-def]
    """Let a script (run by the job's own runner) replace ``link`` inside the job with a symlink to ``target``."""
    script = (
        "import os, shutil\n"
        f"link = {link!r}\n"
        "if os.path.isdir(link) and not os.path.islink(link):\n"
        "    shutil.rmtree(link)\n"
        "elif os.path.lexists(link):\n"
        "    os.remove(link)\n"
        f"os.symlink({str(target)!r}, link)\n"
        "print('planted')\n"
    )
    result = _call(tool, file_path="00_plant.py", content=script)
    assert "planted" in _text(result), _text(result)
    assert (rt.root / link).is_symlink()


def test_a_symlinked_code_folder_gets_no_script_and_no_sitecustomize(rt: JobRuntime, outside: Path) -> None:
    tool = make_write_and_execute(rt)
    _plant(rt, tool, "code", outside)
    result = _call(tool, file_path="sitecustomize.py", content="print('owned')\n")
    assert isinstance(result, dict) and result["status"] == "error"
    assert "symbolic link" in _text(result) and "code" in _text(result)
    assert not (outside / "sitecustomize.py").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]


def test_a_symlinked_plan_is_replaced_not_written_through(rt: JobRuntime, outside: Path) -> None:
    tool = make_write_and_execute(rt)
    _plant(rt, tool, "plan.md", outside / "victim.txt")
    result = _call(make_update_plan(rt), not_possible=["Do one — not possible: no data"])  # needs no evidence
    assert "Marked 1 item" in _text(result)
    assert not (rt.root / "plan.md").is_symlink() and "- [~] Do one" in (rt.root / "plan.md").read_text("utf-8")
    assert (outside / "victim.txt").read_text(encoding="utf-8") == "original\n"


def test_a_symlinked_folder_on_the_plan_path_fails_the_tick_cleanly(rt: JobRuntime, tmp_path: Path) -> None:
    job = JobFolder.create(tmp_path / "other")
    os.symlink(tmp_path, job.root / "nested")
    with pytest.raises(UnsafePathError, match="nested"):
        job.write_text("nested/plan.md", "x")
    assert not (tmp_path / "plan.md").exists()


def test_a_symlinked_event_log_is_neither_appended_nor_read(rt: JobRuntime, outside: Path) -> None:
    tool = make_write_and_execute(rt)
    _plant(rt, tool, "events.jsonl", outside / "victim.txt")
    with pytest.raises(UnsafePathError, match="events.jsonl"):
        rt.job.events.emit("error", message="x")
    with pytest.raises(UnsafePathError):
        rt.job.events.read()
    assert (outside / "victim.txt").read_text(encoding="utf-8") == "original\n"


def test_a_symlinked_job_file_is_replaced_never_followed(rt: JobRuntime, outside: Path) -> None:
    tool = make_write_and_execute(rt)
    _plant(rt, tool, "job.json", outside / "victim.txt")
    with pytest.raises(UnsafePathError):
        rt.job.status()  # reading through the link is refused
    rt.job.write_json("job.json", {"id": rt.job.id})  # an atomic write replaces the link itself
    assert not (rt.root / "job.json").is_symlink()
    assert (outside / "victim.txt").read_text(encoding="utf-8") == "original\n"


def test_helpers_refuse_links_in_folders_below_the_job(tmp_path: Path, outside: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    os.symlink(outside, job / "charts")
    for action in (
        lambda: write_text_atomic(job / "charts" / "x.json", "{}", beneath=job),
        lambda: append_text(job / "charts" / "victim.txt", "more", beneath=job),
        lambda: read_text(job / "charts" / "victim.txt", beneath=job),
    ):
        with pytest.raises(UnsafePathError, match="charts"):
            action()
    with pytest.raises(UnsafePathError, match="not inside"):
        write_text_atomic(tmp_path / "elsewhere.txt", "x", beneath=job)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    write_text_atomic(job / "real" / "deep" / "x.txt", "ok", beneath=job)  # real folders are created as needed
    assert read_text(job / "real" / "deep" / "x.txt", beneath=job) == "ok"


def test_a_script_over_the_file_quota_gets_a_tool_error_naming_the_cap(rt: JobRuntime) -> None:
    rt.settings.max_job_files = 200
    tool = make_write_and_execute(rt)
    body = "import os\nos.makedirs('spam', exist_ok=True)\n"
    body += "for i in range(500):\n    open(f'spam/{i}.txt', 'w').close()\n"
    result = _call(tool, file_path="01_spam.py", content=body)
    assert isinstance(result, dict) and result["status"] == "error"
    assert "max_job_files" in _text(result) and "Fix:" in _text(result)
    rt.settings.max_job_files, rt.settings.max_job_mb = 10_000, 0.0001
    again = _call(tool, file_path="02_small.py", content="print('hi')\n")
    assert isinstance(again, dict) and "max_job_mb" in _text(again)


def test_checks_never_read_a_cached_table_a_script_replaced_with_a_link(tmp_path: Path) -> None:
    import pandas as pd

    from insightloom.errors import ValidationError
    from insightloom.intake import ingest
    from insightloom.validation.jobfiles import load_views

    (tmp_path / "in").mkdir()
    pd.DataFrame({"region": ["a", "b"], "amount": [1, 2]}).to_csv(tmp_path / "in" / "sales.csv", index=False)
    job = tmp_path / "job"
    ingest([tmp_path / "in" / "sales.csv"], job)
    assert load_views(job)["sales"].path.is_file()
    other = tmp_path / "other-job.parquet"
    pd.DataFrame({"secret": [42]}).to_parquet(other)
    (job / "cache" / "sales.parquet").unlink()
    os.symlink(other, job / "cache" / "sales.parquet")
    with pytest.raises(ValidationError, match="symbolic link"):
        load_views(job)


def test_validation_never_reads_job_files_through_a_planted_link(tmp_path: Path) -> None:
    from insightloom.errors import ValidationError
    from insightloom.validation.jobfiles import load_calculations

    job = tmp_path / "job"
    job.mkdir()
    other = tmp_path / "other-job-calculation_metadata.json"
    other.write_text('{"generated_at": "x", "calculations": []}', encoding="utf-8")
    os.symlink(other, job / "calculation_metadata.json")
    with pytest.raises(ValidationError, match="symbolic link"):
        load_calculations(job)


def test_host_reads_refuse_a_planted_fifo_or_an_oversized_file_without_blocking(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    os.mkfifo(job / "all_results.txt")  # a blocking read here would hang the test until its timeout
    with pytest.raises(UnsafePathError, match="not a regular file"):
        read_text(job / "all_results.txt", beneath=job)
    (job / "plan.md").write_text("x" * 2048, encoding="utf-8")
    with pytest.raises(UnsafePathError, match="2,048 bytes"):
        read_text(job / "plan.md", beneath=job, max_bytes=1024)
    assert read_text(job / "plan.md", beneath=job) == "x" * 2048


def test_the_supervising_loop_counts_no_calculations_through_a_planted_link(tmp_path: Path) -> None:
    from insightloom.workflow.supervising import snapshot

    runtime = JobRuntime.create(JobFolder.create(tmp_path / "artifacts"), Settings(provider="offline"), "r", "en")
    other = tmp_path / "elsewhere.json"
    other.write_text('{"calculations": [{"id": "a"}, {"id": "b"}]}', encoding="utf-8")
    os.symlink(other, runtime.root / "calculation_metadata.json")
    assert snapshot(runtime).calculations == 0


def test_a_folder_where_a_file_belongs_is_refused_and_its_descriptor_closed(tmp_path: Path) -> None:
    job = tmp_path / "job"
    (job / "plan.md").mkdir(parents=True)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        with pytest.raises(UnsafePathError, match="not a regular file"):
            read_text(job / "plan.md", beneath=job)
        assert file_digest(job / "plan.md", beneath=job) is None
    assert len(os.listdir("/proc/self/fd")) <= before + 1  # no descriptor left open per call
