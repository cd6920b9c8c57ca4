"""Scenario runs: every test here drives a whole job, and the run ends with a table of scenario -> outcome."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import ScenarioRun, run_scenario

from insightloom.testing.bedrock_endpoint import BedrockEndpoint, RoleRouter
from repo_paths import SCENARIO_OUTCOME_KEY as _OUTCOME_KEY


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.e2e)


#: The two lanes every scenario runs in: the offline model as the job's model, and the same LLM-like brains behind
#: the strict Bedrock endpoint, called through the product's BedrockModel.
LANES = ("offline", "bedrock")


@pytest.fixture(params=LANES)
def scenario(request, tmp_path, monkeypatch, record_property) -> Iterator:
    """Run a scenario job: ``scenario(deviations, **settings)``; its outcome goes into the summary table."""
    endpoint = BedrockEndpoint(RoleRouter({})).start() if request.param == "bedrock" else None

    def run(deviations, **kwargs) -> ScenarioRun:
        result = run_scenario(tmp_path, monkeypatch, deviations, endpoint=endpoint, **kwargs)
        reason = (result.outcome.error or "").splitlines()[0][:90] if result.outcome.error else ""
        record_property(_OUTCOME_KEY, f"{result.outcome.status}|{reason}")  # before the call report is made
        return result

    try:
        yield run
    finally:
        if endpoint is not None:
            endpoint.stop()
