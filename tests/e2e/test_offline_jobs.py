"""End-to-end jobs on the offline model through the real CLI: the issue's "Done when" datasets."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from jobcheck import check_job

from insightloom.report.appendix import is_trivial
from repo_paths import DATA, child_env

pytestmark = pytest.mark.e2e
REQUEST = "Analyze this data and write a DOCX report"


def assert_every_printed_number_verified(job_dir: Path) -> None:
    """Issue 4: no uncited number (A) besides no B/C, and the tiers ran: script-verified ones cited, the rest not."""
    audit = json.loads((job_dir / "audit_findings.json").read_text(encoding="utf-8"))
    assert audit["stats"]["type_a"] == 0, [f for f in audit["findings"] if f["type"] == "A"][:3]
    entries = json.loads((job_dir / "citations.json").read_text(encoding="utf-8"))["citations"]
    assert all(e["verification_status"] == "verified" for e in entries if e["citation_id"])
    assert not [e["calculation_id"] for e in entries if e["verification_status"] == "needs_review"]
    # The Validator's own script verified numbers the report prints: cited, or a trivial count printed bare.
    assert any(e["verification_method"] == "llm" and (e["citation_id"] or is_trivial(e)) for e in entries)


def cli(
    *args: str, cwd: Path, stdin: str | None = None, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = child_env("AWS_ACCESS", "AWS_SECRET", "INSIGHTLOOM_")
    env.update(extra_env or {})
    return subprocess.run(
        [sys.executable, "-m", "insightloom", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.parametrize(
    "data",
    [
        "moon-market-en/moon-market-fresh-food-sales.csv",
        "moon-market-kr/moon-market-fresh-food-sales.csv",
        "yummy-food/yummy-food-market.csv",
        "training-assessment/training_assessment.xlsx",
    ],
)
def test_shared_dataset_job_is_verified_and_cited(data: str, tmp_path: Path) -> None:
    job_dir = tmp_path / "job"
    done = cli(
        "run",
        str(DATA / data),
        "-r",
        REQUEST,
        "--provider",
        "offline",
        "--yes",
        "--job-dir",
        str(job_dir),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == str(job_dir.resolve())
    facts = check_job(job_dir, min_charts=2, min_markers=10)
    assert_every_printed_number_verified(job_dir)
    if data.endswith(".xlsx"):
        profile = json.loads((job_dir / "cache" / "profile.json").read_text(encoding="utf-8"))
        table = profile["tables"][0]
        pii = [c["name"] for c in table["columns"] if c["role"] == "pii"]
        assert pii, "the XLSX has personal-data columns"
        frame = pd.read_parquet(job_dir / table["parquet"])
        leaked = {str(v) for col in pii for v in frame[col].dropna().unique() if len(str(v)) > 3}
        report = facts["text"]
        assert not [v for v in leaked if v in report]
        assert not re.search(r"[\w.+-]+@[\w-]+\.[\w.]+", report)
        calcs = json.loads((job_dir / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]
        assert not [c["id"] for c in calcs if set(c["source_columns"]) & set(pii)]


def test_demo_from_a_fresh_folder(tmp_path: Path) -> None:
    job_dir = tmp_path / "demo"
    done = cli("demo", "--job-dir", str(job_dir), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == str(job_dir.resolve())
    check_job(job_dir, min_charts=3, min_markers=15)
    assert_every_printed_number_verified(job_dir)


def test_small_talk_answers_without_a_report(tmp_path: Path) -> None:
    data = DATA / "yummy-food" / "yummy-food-market.csv"
    done = cli(
        "run",
        str(data),
        "-r",
        "hello, who are you?",
        "--provider",
        "offline",
        "--yes",
        "--job-dir",
        str(tmp_path / "j"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == str((tmp_path / "j").resolve())
    assert "Hello" in done.stdout
    job = json.loads((tmp_path / "j" / "job.json").read_text())
    assert job["status"] == "completed" and job["stage"] == "done"
    assert not (tmp_path / "j" / "final_report.docx").exists()
    events = [json.loads(x) for x in (tmp_path / "j" / "events.jsonl").read_text().splitlines()]
    assert events[-1]["kind"] == "completed" and events[-1]["data"]["report"] is None
