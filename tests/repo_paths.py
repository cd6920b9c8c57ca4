"""Where the tests' own data lives (``tests/data``), and the optional reference folder ``../shared``.

The suite needs nothing outside the repository: datasets are copied into ``tests/data`` and the file contracts are
the package's own (``insightloom.contracts``). ``../shared`` is only read by the optional reference tests
(``shared_dir`` fixture), which skip cleanly when it is absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from insightloom.contracts import load_schema

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
#: The reference folder beside the repository; it may be missing (a plain clone, a user's checkout).
SHARED = REPO.parent / "shared"


def load_contract(name: str) -> dict[str, Any]:
    """The package's JSON Schema for one job-folder file (``job``, ``citations``, ``event`` ...)."""
    return load_schema(name)


#: The user property a scenario test records its job's outcome under; the root conftest prints them as a table.
SCENARIO_OUTCOME_KEY = "scenario_outcome"
