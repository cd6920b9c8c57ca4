"""``insightloom verify`` exit codes: 3 only for a needs_review number the report cites (any, before a report)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.jobs import JobFolder


def _calc(calc_id: str, value: int, check: str) -> dict:
    return {
        "id": calc_id,
        "value": value,
        "description": calc_id,
        "formula": check,
        "source_file": "sales.csv",
        "source_columns": ["amount"],
        "importance": "high",
        "check": check,
    }


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """A job folder with a cached table and two calculations: ``total`` verifies, ``rows`` was tampered with."""
    root = JobFolder.create(tmp_path, tmp_path / "job").root
    pd.DataFrame({"amount": [10, 20, 30]}).to_parquet(root / "cache" / "sales.parquet", index=False)
    profile = {"tables": [{"view": "sales", "parquet": "cache/sales.parquet"}], "aliases": {"data": "sales"}}
    (root / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    calcs = [_calc("total", 60, "SELECT SUM(amount) FROM data"), _calc("rows", 4, "SELECT COUNT(*) FROM data")]
    metadata = {"generated_at": "2025-01-01T00:00:00Z", "calculations": calcs}
    (root / "calculation_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
    return root


def _verify(job: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", str(job)])
    return result.exit_code, result.stdout


def _report_citing(job: Path, *ids: str) -> None:
    """What rendering leaves behind: citation ids for the printed calculations, and the DOCX."""
    path = job / "citations.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for number, entry in enumerate(e for e in data["citations"] if e["calculation_id"] in ids):
        entry["citation_id"] = f"[{number + 1}]"
    path.write_text(json.dumps(data), encoding="utf-8")
    (job / "final_report.docx").write_bytes(b"placeholder")


def test_before_a_report_any_needs_review_exits_3(job: Path) -> None:
    code, out = _verify(job)
    assert code == 3 and "needs_review rows" in out and "Blocking" in out and "rows" in out.splitlines()[-1]


def test_an_uncited_needs_review_is_listed_not_blocking(job: Path) -> None:
    _verify(job)
    _report_citing(job, "total")
    code, out = _verify(job)
    assert code == 0, out
    assert "Not cited by the report, so not blocking (1): rows" in out and "Blocking" not in out


def test_a_cited_needs_review_exits_3(job: Path) -> None:
    _verify(job)
    _report_citing(job, "total", "rows")
    code, out = _verify(job)
    assert code == 3 and "Blocking (cited by the report, or no report yet) (1): rows" in out
