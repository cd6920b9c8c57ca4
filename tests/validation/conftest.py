"""Fixtures for validation tests (helpers live in validation_fixtures.py, a unique module name)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

_SRC = Path(__file__).resolve().parents[2] / "src"
if importlib.util.find_spec("insightloom") is None and _SRC.is_dir():  # not installed: test the source tree
    sys.path.insert(0, str(_SRC))

from validation_fixtures import fixture_calcs, sales_frame, write_job  # noqa: E402


@pytest.fixture
def sales_job(tmp_path: Path) -> Path:
    """A job folder with the fixture calculations (not yet validated)."""
    frame = sales_frame()
    return write_job(tmp_path / "job", frame, fixture_calcs(frame))


@pytest.fixture
def schema(contract: Any) -> Any:
    """Validate data against one of the package's file contracts by name ("citations")."""
    return contract
