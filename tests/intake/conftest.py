"""Fixtures for intake tests: the test datasets and small file writers."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

_SRC = Path(__file__).resolve().parents[2] / "src"
if importlib.util.find_spec("insightloom") is None and _SRC.is_dir():  # not installed: test the source tree
    sys.path.insert(0, str(_SRC))

from repo_paths import DATA  # noqa: E402


@pytest.fixture(scope="session")
def datasets() -> Path:
    """The four MIT-0 datasets copied into tests/data."""
    return DATA


@pytest.fixture
def write_bytes(tmp_path: Path) -> Callable[[str, bytes], Path]:
    """Write a file under tmp_path/in and return its path."""

    def _write(name: str, data: bytes) -> Path:
        path = tmp_path / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    return _write
