"""Where the tests' own data lives (``tests/data``), and the optional reference folder ``../shared``.

The suite needs nothing outside the repository: datasets are copied into ``tests/data`` and the file contracts are
the package's own (``insightloom.contracts``). ``../shared`` is only read by the optional reference tests
(``shared_dir`` fixture), which skip cleanly when it is absent. ``child_env`` is the environment of a CLI run in a
child process, with the suite's temporary job registry.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import insightloom
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


#: Where the CLI records its jobs; the root conftest points it at a temporary file for every test.
JOBS_REGISTRY_ENV = "INSIGHTLOOM_JOBS_REGISTRY"


def child_env(*strip: str) -> dict[str, str]:
    """This process's environment for a child CLI, without the variables starting with ``strip`` (a clean config).

    It keeps the test's job registry, so that no child writes into the developer's data directory, and puts the
    sources under test first on ``PYTHONPATH``, so that a child in another folder imports them too (a relative
    ``PYTHONPATH=src`` would not reach them from there).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(strip)}
    if JOBS_REGISTRY_ENV in os.environ:
        env[JOBS_REGISTRY_ENV] = os.environ[JOBS_REGISTRY_ENV]
    sources = str(Path(insightloom.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([sources, *filter(None, [env.get("PYTHONPATH")])])
    return env
