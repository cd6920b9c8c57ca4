"""A table wider than DuckDB's expression-depth limit (1,000) gets a verified report, not needs_review."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from insightloom.cli import app

pytestmark = pytest.mark.e2e


def test_a_1050_column_table_completes_with_every_checked_number_verified(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({f"m{i}": rng.integers(0, 100, 60) for i in range(1045)})
    for i in range(5):
        frame[f"cat{i}"] = rng.choice(["a", "b", "c"], 60)
    frame.loc[::7, "m3"] = np.nan  # some missing cells for the missing-value checks to count
    frame.to_csv(tmp_path / "wide.csv", index=False)
    job = tmp_path / "job"
    args = ["run", str(tmp_path / "wide.csv"), "-r", "Analyze this data", "--provider", "offline", "--yes", "-q"]
    result = CliRunner().invoke(app, [*args, "--job-dir", str(job)])
    assert result.exit_code == 0, result.stderr
    citations = json.loads((job / "citations.json").read_text(encoding="utf-8"))["citations"]
    assert not [c for c in citations if c["verification_status"] == "needs_review"]
    assert any(c["calculation_id"].endswith("missing_cells") and c["value"] == 9 for c in citations)
