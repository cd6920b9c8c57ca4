"""Fixtures for the verification tests: small inputs, and the e2e tests' scripted model on the path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The scripted model lives with the e2e tests; reuse it rather than keep a second copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))

from verification_kit import sales_csv


@pytest.fixture
def small_csv(tmp_path: Path) -> Path:
    """A 90-row sales CSV (date, two categories, two measures)."""
    return sales_csv(tmp_path / "inputs" / "sales.csv")
