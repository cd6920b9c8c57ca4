"""Scenario runs: every test here drives a whole job, and the run ends with a table of scenario -> outcome."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import ScenarioRun, run_scenario

_OUTCOME_KEY = "scenario_outcome"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def scenario(tmp_path, monkeypatch, record_property) -> Iterator:
    """Run a scenario job: ``scenario(deviations, **settings)``; its outcome goes into the summary table."""

    def run(deviations, **kwargs) -> ScenarioRun:
        result = run_scenario(tmp_path, monkeypatch, deviations, **kwargs)
        reason = (result.outcome.error or "").splitlines()[0][:90] if result.outcome.error else ""
        record_property(_OUTCOME_KEY, f"{result.outcome.status}|{reason}")  # before the call report is made
        return result

    yield run


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # type: ignore[no-untyped-def]
    rows = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for key, value in getattr(report, "user_properties", []):
                if key == _OUTCOME_KEY:
                    status, _, reason = value.partition("|")
                    name = report.nodeid.split("::")[-1]
                    rows.append((name, status, "passed" if report.passed else "FAILED", reason))
    if not rows:
        return
    width = max(len(r[0]) for r in rows)
    terminalreporter.write_sep("=", f"scenario outcomes ({len(rows)})")
    terminalreporter.write_line(f"{'scenario'.ljust(width)}  {'job ends'.ljust(12)}  {'test':6}  reason")
    for name, status, verdict, reason in sorted(rows):
        terminalreporter.write_line(f"{name.ljust(width)}  {status.ljust(12)}  {verdict:6}  {reason}")
