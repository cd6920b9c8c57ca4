"""jobs, skills list, doctor, verify and audit on a finished offline job."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.job_registry import record_job
from insightloom.jobs import JobFolder
from repo_paths import DATA


@pytest.fixture(scope="module")
def finished_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    data = DATA / "yummy-food"
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(data),
            "-r",
            "Analyze this data and write a DOCX report",
            "--provider",
            "offline",
            "--yes",
            "-q",
            "--job-dir",
            str(root / "job"),
        ],
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str((root / "job").resolve())
    return root / "job"


@pytest.mark.e2e
def test_verify_and_audit_pass_on_a_finished_job(finished_job: Path) -> None:
    verify = CliRunner().invoke(app, ["verify", str(finished_job)])
    assert verify.exit_code == 0, verify.stdout
    audit = CliRunner().invoke(app, ["audit", str(finished_job)])
    assert audit.exit_code == 0 and "pass" in audit.stdout


@pytest.mark.e2e
def test_verify_and_audit_exit_3_after_tampering(finished_job: Path, tmp_path: Path) -> None:
    job = tmp_path / "tampered"
    shutil.copytree(finished_job, job)
    meta_path = job / "calculation_metadata.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    cited = {
        c["calculation_id"] for c in json.loads((job / "citations.json").read_text())["citations"] if c["citation_id"]
    }
    # Only a number the report cites makes verify exit 3 (an uncited one is listed, not blocking).
    first = next(c for c in meta["calculations"] if isinstance(c["value"], (int, float)) and c["id"] in cited)
    first["value"] = first["value"] + 1000
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    assert CliRunner().invoke(app, ["verify", str(job)]).exit_code == 3
    citations = json.loads((job / "citations.json").read_text(encoding="utf-8"))["citations"]
    assert next(c for c in citations if c["calculation_id"] == first["id"])["verification_status"] == "needs_review"


@pytest.mark.e2e
def test_jobs_lists_status(finished_job: Path) -> None:
    result = CliRunner().invoke(app, ["jobs", "--artifacts", str(finished_job.parent)])
    job_id = json.loads((finished_job / "job.json").read_text())["id"]
    assert result.exit_code == 0 and job_id[:15] in result.stdout and "completed" in result.stdout


def test_jobs_lists_the_registry_s_jobs_and_says_where_it_looked_when_there_are_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    registry = Path(os.environ["INSIGHTLOOM_JOBS_REGISTRY"])  # the test's own (conftest)
    empty = CliRunner().invoke(app, ["jobs"])
    assert empty.exit_code == 0 and empty.stdout == ""
    assert str(tmp_path / "artifacts") in empty.stderr and str(registry) in empty.stderr
    assert "insightloom run" in empty.stderr and "--job-dir" in empty.stderr
    job = JobFolder.create(tmp_path / "artifacts", tmp_path / "elsewhere" / "job")
    record_job(registry, job.id, job.root)
    listed = CliRunner().invoke(app, ["jobs"], env={"COLUMNS": "300"})
    assert job.id in listed.stdout and str(job.root) in listed.stdout and "queued" in listed.stdout


def test_skills_list_finds_builtin_and_cwd_skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "skills" / "my-team-skill"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: my-team-skill\ndescription: Team conventions\n---\nBody\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["skills", "list"])
    assert result.exit_code == 0
    assert "my-team-skill" in result.stdout and "duckdb-checks" in result.stdout


def test_doctor_reports_isolation_and_fonts() -> None:
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0
    assert "CJK font" in result.stdout and "PDF export" in result.stdout


def test_audit_on_a_folder_without_report_is_bad_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["audit", str(tmp_path)])
    assert result.exit_code == 2 and "job.json" in result.stderr
