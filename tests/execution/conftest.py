"""Fixtures for the script-runner tests: job folders and one shared runner per execution path."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

try:
    import insightloom  # noqa: F401
except ImportError:  # running from a checkout without an editable install
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from insightloom.execution import ColdRunner, WarmRunner

#: warm = fork server (one fork, pid namespace); warm-sweep = fork server forced onto the per-run supervisor
#: (subreaper + descendant sweep, what non-root hosts get); cold = fresh interpreter.
RUNNER_KINDS = ("warm", "warm-sweep", "cold")


@pytest.fixture(scope="session")
def runners() -> Iterator[dict[str, WarmRunner | ColdRunner]]:
    made = {
        "warm": WarmRunner(),
        "warm-sweep": WarmRunner(isolate={"network": True, "filesystem": True, "pidns": False}),
        "cold": ColdRunner(),
    }
    yield made
    for runner in made.values():
        if isinstance(runner, WarmRunner):
            runner.shutdown()


@pytest.fixture(params=RUNNER_KINDS)
def runner(request: pytest.FixtureRequest, runners: dict) -> WarmRunner | ColdRunner:
    return runners[request.param]


@pytest.fixture
def make_job(tmp_path: Path) -> Callable[..., Path]:
    """Create ``<tmp>/<name>/code/`` and return the job folder."""

    def _make(name: str = "job") -> Path:
        job = tmp_path / name
        (job / "code").mkdir(parents=True)
        return job

    return _make


def _write_script(job: Path, name: str, text: str) -> Path:
    path = job / "code" / name
    path.write_text(text)
    return path


@pytest.fixture(name="write_script")
def write_script_fixture() -> Callable[[Path, str, str], Path]:
    """``write_script(job, name, text)`` writes ``<job>/code/<name>`` and returns its path."""
    return _write_script
