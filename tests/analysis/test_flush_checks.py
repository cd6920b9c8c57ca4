"""flush_checks(): the checks tracked so far run now, once, with the Validator's views and comparison rule."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from insightloom.analysis_utils import ChecksFailed, exit_checks, flush_checks, generate_utils_module, track_calculation


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A job folder with one cached table ``sales`` (alias ``data``), and no checks pending from other tests."""
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(tmp_path))
    monkeypatch.setattr(exit_checks, "_pending", {})
    (tmp_path / "cache").mkdir()
    pd.DataFrame({"amount": [10, 20, 30, 40]}).to_parquet(tmp_path / "cache" / "sales.parquet", index=False)
    profile = {"tables": [{"view": "sales", "parquet": "cache/sales.parquet"}], "aliases": {"data": "sales"}}
    (tmp_path / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    return tmp_path


def _track(calc_id: str, value: object, check: str | None, unit: str | None = None) -> None:
    track_calculation(calc_id, value, "d", "f", "sales.csv", ["amount"], "high", check=check, unit=unit)


def test_flush_checks_is_exported_to_scripts() -> None:
    assert "    flush_checks,\n" in generate_utils_module()


def test_flush_runs_every_pending_check_once(job: Path) -> None:
    _track("total", 100, "SELECT SUM(amount) FROM data")
    _track("rows", 4, "SELECT COUNT(*) FROM sales")
    _track("unchecked", 7, None)
    assert flush_checks() == 2
    assert flush_checks() == 0  # idempotent: nothing runs twice
    assert exit_checks.run_at_script_end() is True  # and the script's end has nothing left to do


def test_a_failing_flush_names_each_check_and_forgets_them(job: Path) -> None:
    _track("total", 100, "SELECT SUM(amount) FROM orders")
    _track("share", 10.0, "SELECT 1.0 * MIN(amount) / SUM(amount) FROM data", unit="%")
    with pytest.raises(ChecksFailed) as info:
        flush_checks()
    text = str(info.value)
    assert "- total: tracked 100, check error:" in text and "use one of the job's views: data, sales" in text
    assert "- share: tracked 10.0, check returned 0.1" in text and "percent vs fraction" in text
    assert flush_checks() == 0


def test_re_tracking_an_id_replaces_its_pending_check(job: Path) -> None:
    _track("total", 100, "SELECT SUM(amount) FROM orders")
    _track("total", 100, "SELECT SUM(amount) FROM data")
    assert flush_checks() == 1
    _track("total", 100, "SELECT SUM(amount) FROM orders")
    _track("total", 100, None)  # tracked again without a check: the old check no longer applies
    assert not exit_checks.has_pending()


def test_the_script_end_prints_one_line_or_the_failures(job: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _track("total", 100, "SELECT SUM(amount) FROM data")
    assert exit_checks.run_at_script_end() is True
    assert capsys.readouterr().out == "checks: 1 verified at script end\n"
    _track("total", 101, "SELECT SUM(amount) FROM data")
    assert exit_checks.run_at_script_end() is False
    err = capsys.readouterr().err
    assert "total: tracked 101, check returned 100" in err and "the check computes something else" in err


def test_checks_in_a_host_process_never_run_at_its_exit(job: Path) -> None:
    # pytest (or any host process) is not a script of the job folder: its exit must not run or fail on checks.
    _track("total", 1, "SELECT SUM(amount) FROM orders")
    assert exit_checks._main_script_in(list(exit_checks._pending)) is False
