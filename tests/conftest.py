"""Test set-up for the whole suite: no network beyond loopback, no real credentials, the package's contracts."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from insightloom.config import CREDENTIAL_ENV_VARS, DB_PASSWORD_ENV_VARS, SNAPSHOT_ENV
from pg_server import postgres_server, shop_db  # noqa: F401 (fixtures: a real PostgreSQL on a loopback port)
from repo_paths import JOBS_REGISTRY_ENV, SCENARIO_OUTCOME_KEY, SHARED, load_contract

#: The test being set up or run, and any whole job (the Supervisor stage) it drove without the e2e marker.
_current: dict[str, Any] = {"nodeid": None, "e2e": True}
_unmarked_jobs: set[str] = set()
#: Set by .ci/run: every skip is a failure, except the reference checks when ../shared is truly absent.
NO_SKIPS_ENV = "INSIGHTLOOM_NO_SKIPS"
SHARED_ABSENT = "reference folder ../shared is not beside the repository"

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if isinstance(address, tuple) and address:
        host = address[0]
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise RuntimeError(f"test tried to reach {host}: tests must not use the network")
    return _real_connect(self, address)


@pytest.fixture(scope="session", autouse=True)
def _session_jobs_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A temporary job registry before any module or session fixture runs a job (each test gets its own below)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(JOBS_REGISTRY_ENV, str(tmp_path_factory.mktemp("session-registry") / "jobs.json"))
        yield


@pytest.fixture(autouse=True)
def _no_network_no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    empty = tmp_path_factory.mktemp("aws")
    for name in (
        # Container credentials count as credentials (ECS, CodeBuild): a CI runner in a container must not make
        # every test pick Bedrock.
        *CREDENTIAL_ENV_VARS,
        "INSIGHTLOOM_CONFIG",
        "INSIGHTLOOM_PROVIDER",
        "INSIGHTLOOM_ARTIFACTS",
        "INSIGHTLOOM_ASK_MEMORY",
        "INSIGHTLOOM_ASK_EMBEDDER",
        "INSIGHTLOOM_ASK_EMBEDDER_URL",
        # No database login or limit of the machine's: each test names its own.
        *DB_PASSWORD_ENV_VARS,
        *SNAPSHOT_ENV.values(),
        "PGUSER",
        "PGHOST",
        "PGPORT",
        "PGDATABASE",
        "PGSERVICE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PGPASSFILE", str(empty / "pgpass"))  # never the user's ~/.pgpass
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty / "config"))
    monkeypatch.setenv("BOTO_CONFIG", str(empty / "boto.cfg"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # Every job the CLI makes is recorded in the job registry: never in the developer's own data directory.
    monkeypatch.setenv(JOBS_REGISTRY_ENV, str(tmp_path_factory.mktemp("registry") / "jobs.json"))


@pytest.fixture
def contract():
    """Validate a JSON document against one of the package's contracts (``insightloom.contracts``)."""
    import jsonschema

    def check(name: str, document: Any) -> None:
        jsonschema.validate(document, load_contract(name))

    return check


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` beside the repository, for the optional reference checks; they skip cleanly without it."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED_ABSENT} ({SHARED}): the reference checks need it")
    return SHARED


def pytest_configure(config: pytest.Config) -> None:
    """Wrap the Supervisor stage so that a test driving a whole job without the e2e marker fails, naming itself."""
    from insightloom.workflow import stages

    real_supervise = stages.supervise

    def supervise_marked_only(rt: Any) -> None:
        if not _current["e2e"] and _current["nodeid"]:
            _unmarked_jobs.add(_current["nodeid"])
        real_supervise(rt)

    stages.supervise = supervise_marked_only


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _current.update(nodeid=item.nodeid, e2e=item.get_closest_marker("e2e") is not None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Fail an unmarked test that drove a whole job; under ``INSIGHTLOOM_NO_SKIPS=1`` (CI) fail every skip."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if call.when == "teardown" and item.nodeid in _unmarked_jobs:
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid} drives a whole job (the Supervisor ran): mark it with pytest.mark.e2e"
        return
    if not report.skipped or os.environ.get(NO_SKIPS_ENV) != "1" or hasattr(report, "wasxfail"):
        return
    reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if SHARED_ABSENT in reason and not SHARED.is_dir():
        return
    report.outcome = "failed"
    report.longrepr = f"skipped under {NO_SKIPS_ENV}=1 (CI forbids skips): {reason}"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The table of scenario -> outcome (tests/scenarios), here so it prints under xdist and in whole runs too."""
    rows = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for key, value in getattr(report, "user_properties", []):
                if key == SCENARIO_OUTCOME_KEY:
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
