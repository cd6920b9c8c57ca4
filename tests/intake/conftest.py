"""Shared fixtures for intake tests: the shared datasets and small file writers."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

_SRC = Path(__file__).resolve().parents[2] / "src"
if importlib.util.find_spec("insightloom") is None and _SRC.is_dir():  # not installed: test the source tree
    sys.path.insert(0, str(_SRC))

SHARED_DATA = Path(os.environ.get("INSIGHTLOOM_TEST_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA} (set INSIGHTLOOM_TEST_DATA)")
    return SHARED_DATA


@pytest.fixture
def write_bytes(tmp_path: Path) -> Callable[[str, bytes], Path]:
    """Write a file under tmp_path/in and return its path."""

    def _write(name: str, data: bytes) -> Path:
        path = tmp_path / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    return _write
