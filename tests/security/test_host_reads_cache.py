"""Checks see this job's cache and nothing else (issue 24, hole 1: a cross-job read through ``verify``).

A script may write anything in its job folder. Host validation (``insightloom verify``, the ``validate_calculations``
tool) then runs the job's SQL checks, so a script that points ``cache/`` at another job's folder, plants a link in
it, or swaps a cached file must get its checks refused, never answered from another job's data. The secrets below
are values only job B holds: none may ever reach job A's citations.json, validation_report.txt or the CLI output.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import duckdb
import jsonschema
import pandas as pd
import pytest
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.config import Settings
from insightloom.contracts import load_schema
from insightloom.errors import ValidationError
from insightloom.intake import ingest
from insightloom.jobs import JobFolder
from insightloom.runtime import JobRuntime
from insightloom.tools.report_tools import make_validate_calculations
from insightloom.validation import validate_job

SECRET_SALARY = 8_675_309  # only job B's payroll holds it
SECRET_NAME = "TOPSECRET-PAYROLL-B"
SECRETS = (str(SECRET_SALARY), f"{SECRET_SALARY:,}", SECRET_NAME)
OUTPUTS = ("citations.json", "validation_report.txt")


def _job(root: Path, name: str, frame: pd.DataFrame, csv_name: str) -> Path:
    """A job folder made the product's way: ``JobFolder.create``, then intake of one CSV (which writes the manifest)."""
    job = JobFolder.create(root / "artifacts", root / name).root
    source = root / "inputs" / name / csv_name
    source.parent.mkdir(parents=True)
    frame.to_csv(source, index=False)
    ingest([source], job)
    return job


def _calc(calc_id: str, value: Any, check: str) -> dict[str, Any]:
    return {"id": calc_id, "value": value, "description": calc_id, "formula": check, "source_file": "sales.csv",
            "source_columns": ["amount"], "importance": "high", "check": check}  # fmt: skip


def _track(job: Path, *calcs: dict[str, Any]) -> None:
    """Write calculation_metadata.json: an honest total, plus whatever the 'script' added."""
    entries = [_calc("total", 60, "SELECT SUM(amount) FROM sales"), *calcs]
    metadata = {"generated_at": "2025-01-01T00:00:00Z", "calculations": entries}
    (job / "calculation_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")


@pytest.fixture
def jobs(tmp_path: Path) -> tuple[Path, Path]:
    """Job A (a user's sales) and job B (another user's payroll, holding the secrets)."""
    job_a = _job(tmp_path, "job-a", pd.DataFrame({"region": ["n", "s", "n"], "amount": [10, 20, 30]}), "sales.csv")
    payroll = pd.DataFrame({"employee": [SECRET_NAME, "someone"], "salary": [SECRET_SALARY, 1]})
    job_b = _job(tmp_path, "job-b", payroll, "payroll.csv")
    return job_a, job_b


def _leaked(job: Path, *texts: str) -> list[str]:
    """Every secret found in job A's validation outputs or in the given texts (CLI output, tool result)."""
    found = [(job / name).read_text(encoding="utf-8") for name in OUTPUTS if (job / name).exists()]
    return [secret for secret in SECRETS for text in [*found, *texts] if secret in text]


def _verify_cli(job: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", str(job)], env={"COLUMNS": "2000"})  # no wrapping inside a path
    return result.exit_code, result.output


def _validate_tool(job: Path) -> str:
    runtime = JobRuntime.create(JobFolder.open(job), Settings(provider="offline"), "req", "en")
    return str(make_validate_calculations(runtime)._tool_func())


# --- (a) the exact attack: cache/ replaced by a link to another job's folder ------------------------------------


@pytest.mark.parametrize("b_profile", ["removed", "kept"])
def test_a_cache_linked_to_another_jobs_folder_is_refused_by_verify_the_tool_and_the_cli(
    jobs: tuple[Path, Path], b_profile: str
) -> None:
    job_a, job_b = jobs
    if b_profile == "removed":  # the attack as found: a folder of Parquet files and no profile.json
        (job_b / "cache" / "profile.json").unlink()
    _track(job_a, _calc("stolen", 0, "SELECT MAX(salary) FROM payroll"),
           _calc("stolen_name", "x", "SELECT MIN(employee) FROM payroll"))  # fmt: skip
    shutil.rmtree(job_a / "cache")
    os.symlink(job_b / "cache", job_a / "cache")

    with pytest.raises(ValidationError) as info:
        validate_job(job_a)
    assert "cache/profile.json" in info.value.message and "symbolic link" in info.value.message
    tool = _validate_tool(job_a)
    code, output = _verify_cli(job_a)
    assert "symbolic link" in tool and code != 0 and "cache/profile.json" in output and "symbolic link" in output
    assert _leaked(job_a, tool, output) == []


def test_without_a_profile_no_parquet_file_is_used_and_the_fix_is_named(jobs: tuple[Path, Path]) -> None:
    job_a, job_b = jobs
    _track(job_a, _calc("stolen", 0, "SELECT MAX(salary) FROM payroll"))
    (job_a / "cache" / "profile.json").unlink()
    shutil.copy(job_b / "cache" / "payroll.parquet", job_a / "cache" / "payroll.parquet")  # unrecorded: no glob uses it
    with pytest.raises(ValidationError) as info:
        validate_job(job_a)
    assert "profile.json not found" in info.value.message and "insightloom resume" in info.value.fix
    code, output = _verify_cli(job_a)
    assert code != 0 and "profile.json" in output and "insightloom resume" in output
    assert not (job_a / "citations.json").exists()


def test_a_profile_pointing_at_another_jobs_file_or_a_planted_link_is_refused(jobs: tuple[Path, Path]) -> None:
    job_a, job_b = jobs
    _track(job_a, _calc("stolen", 0, "SELECT MAX(salary) FROM payroll"))
    profile_path = job_a / "cache" / "profile.json"
    original = json.loads(profile_path.read_text(encoding="utf-8"))
    secret_file = job_b / "cache" / "payroll.parquet"
    os.symlink(secret_file, job_a / "cache" / "payroll.parquet")
    os.mkfifo(job_a / "cache" / "fifo.parquet")  # opened without blocking, and refused as no regular file
    for parquet in (str(secret_file), "../job-b/cache/payroll.parquet", "cache/payroll.parquet", "cache/fifo.parquet"):
        profile = dict(original, tables=[*original["tables"], {"view": "payroll", "parquet": parquet}])
        profile_path.write_text(json.dumps(profile), encoding="utf-8")
        with pytest.raises(ValidationError, match="not inside|symbolic link|not a regular file"):
            validate_job(job_a)
        assert _leaked(job_a) == []


def test_a_cached_file_swapped_for_a_link_after_it_was_vetted_is_never_read(jobs: tuple[Path, Path]) -> None:
    """The race of a vet-then-open loader: the swap happens between reading the profile and opening the connection
    (the connection factory runs exactly there), as a script still running beside the host could do it."""
    job_a, job_b = jobs
    _track(job_a, _calc("stolen", 0, "SELECT MAX(salary) FROM sales"))
    cached = job_a / "cache" / "sales.parquet"

    def swap_then_connect() -> Any:
        cached.unlink()
        os.symlink(job_b / "cache" / "payroll.parquet", cached)
        return duckdb.connect()

    summary = validate_job(job_a, connection_factory=swap_then_connect)
    assert _leaked(job_a) == []
    assert summary.verified == ["total"] and summary.needs_review == ["stolen"]  # the bytes read before the swap
    assert "salary" in summary.reasons["stolen"]  # job A's own table has no such column


# --- (b) a cached file swapped after intake -----------------------------------------------------------------------


def test_a_parquet_swapped_after_intake_is_named_as_a_mismatch_and_never_read(jobs: tuple[Path, Path]) -> None:
    job_a, job_b = jobs
    _track(job_a, _calc("stolen", 0, "SELECT MAX(amount) FROM sales"))
    cached = job_a / "cache" / "sales.parquet"
    intake_bytes = cached.read_bytes()
    pd.DataFrame({"region": ["n"], "amount": [SECRET_SALARY]}).to_parquet(cached, index=False)  # another size
    with pytest.raises(ValidationError) as info:
        validate_job(job_a)
    assert "sales.parquet" in info.value.message and "does not match the manifest" in info.value.message
    assert "bytes" in info.value.message and "insightloom resume" in info.value.fix
    same_size = bytearray(intake_bytes)
    same_size[len(same_size) // 2] ^= 0xFF  # same size, other content: only the hash can tell
    cached.write_bytes(bytes(same_size))
    with pytest.raises(ValidationError, match=r"SHA-256 .* does not match the manifest"):
        validate_job(job_a)
    code, output = _verify_cli(job_a)
    assert code != 0 and "SHA-256" in output
    assert _leaked(job_a, output) == []
    cached.write_bytes(intake_bytes)  # the file intake wrote verifies again
    assert validate_job(job_a).verified == ["total"]


# --- (c) checks cannot read any file ------------------------------------------------------------------------------


def test_checks_cannot_read_another_jobs_files_by_path_or_through_links_or_duckdbs_temp_folder(
    jobs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job_a, job_b = jobs
    secret_parquet, secret_csv = job_b / "cache" / "payroll.parquet", job_b / "data" / "payroll.csv"
    # Links a script can plant inside its own cache/, the folder DuckDB was once allowed to read.
    os.symlink(secret_parquet, job_a / "cache" / "planted.parquet")
    os.symlink(secret_csv, job_a / "cache" / "planted.csv")
    # DuckDB's default temporary folder is .tmp under the working directory, readable even with external access off.
    cwd = tmp_path / "cwd"
    (cwd / ".tmp").mkdir(parents=True)
    shutil.copy(secret_csv, cwd / ".tmp" / "payroll.csv")
    monkeypatch.chdir(cwd)
    sneaky = {
        "abs_parquet": f"SELECT MAX(salary) FROM read_parquet('{secret_parquet}')",
        "abs_csv": f"SELECT MAX(salary) FROM read_csv('{secret_csv}')",
        "bare_path": f"SELECT MAX(salary) FROM '{secret_parquet}'",
        "planted_parquet": f"SELECT MAX(salary) FROM read_parquet('{job_a}/cache/planted.parquet')",
        "planted_csv": f"SELECT MAX(employee) FROM read_csv('{job_a}/cache/planted.csv')",
        "temp_folder": "SELECT MAX(salary) FROM read_csv('.tmp/payroll.csv')",
        "glob": f"SELECT string_agg(file, ',') FROM glob('{job_b}/**')",
    }
    _track(job_a, *(_calc(name, 0, sql) for name, sql in sneaky.items()))
    summary = validate_job(job_a)
    assert summary.verified == ["total"]
    assert sorted(summary.needs_review) == sorted(sneaky)
    for name in sneaky:
        assert "disabled by configuration" in summary.reasons[name], (name, summary.reasons[name])
    assert _leaked(job_a) == []


# --- the manifest intake writes, and older profiles without one ---------------------------------------------------


def test_intake_records_each_parquet_files_sha256_and_size_in_a_valid_profile(jobs: tuple[Path, Path]) -> None:
    job_a, _ = jobs
    profile = json.loads((job_a / "cache" / "profile.json").read_text(encoding="utf-8"))
    jsonschema.validate(profile, load_schema("profile"))
    (table,) = profile["tables"]
    data = (job_a / table["parquet"]).read_bytes()
    assert table["sha256"] == hashlib.sha256(data).hexdigest() and table["bytes"] == len(data)
    assert not any(name.endswith(".tmp") for name in os.listdir(job_a / "cache"))


def test_an_older_profile_without_hashes_still_verifies_with_a_warning_and_refuses_links(
    jobs: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    job_a, job_b = jobs
    _track(job_a)
    profile_path = job_a / "cache" / "profile.json"
    profile = json.loads(profile_path.read_text(encoding="utf-8"))
    for table in profile["tables"]:
        del table["sha256"], table["bytes"]
    profile_path.write_text(json.dumps(profile), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="insightloom.validation.jobfiles"):
        assert validate_job(job_a).verified == ["total"]
    assert "records no SHA-256" in caplog.text and "fresh intake" in caplog.text
    cached = job_a / "cache" / "sales.parquet"
    cached.unlink()
    os.symlink(job_b / "cache" / "payroll.parquet", cached)
    with pytest.raises(ValidationError, match="symbolic link"):
        validate_job(job_a)
    assert _leaked(job_a) == []
