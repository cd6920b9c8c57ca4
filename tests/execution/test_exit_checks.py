"""The checks a script tracked run when it ends, through the real runners, and a wrong one fails the script.

Issue 11 item 4: a wrong ``check`` used to surface only at the Validator, which may not change it. Each script here
runs in the job's sandbox like the Coder's do; the failing ones must fail with the cause and the fix in their output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import insightloom
from insightloom.analysis_utils import write_utils_module
from insightloom.execution import Limits

FAST = Limits(timeout_s=60, cpu_s=60)
HEADER = "from coder_analysis_utils import load_df, track_calculation\n\ndf = load_df()\n"
FLUSH = "from coder_analysis_utils import flush_checks\n"


def _track(calc_id: str, value: str, check: str, unit: str = "count") -> str:
    """One track_calculation line of a script; ``value`` is Python source evaluated in the script."""
    args = f"{calc_id!r}, {value}, 'd', 'f', 'sales.csv', ['amount'], 'high', check={check!r}, unit={unit!r}"
    return f"track_calculation({args})\n"


@pytest.fixture
def checks_job(tmp_path: Path) -> Path:
    """A job folder as intake leaves it: one cached table ``sales`` (alias ``data``) and the helpers in code/."""
    job = tmp_path / "job"
    (job / "cache").mkdir(parents=True)
    frame = pd.DataFrame({"region": ["North", "South", "North", "East"], "amount": [10, 20, 30, 40]})
    frame.to_parquet(job / "cache" / "sales.parquet", index=False)
    profile = {
        "tables": [{"view": "sales", "file": "sales.csv", "parquet": "cache/sales.parquet"}],
        "aliases": {"data": "sales"},
    }
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    write_utils_module(job / "code")
    return job


def _script(job: Path, name: str, body: str) -> Path:
    path = job / "code" / name
    path.write_text(HEADER + body, encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["warm", "cold"])
def test_a_wrong_view_name_fails_the_script_and_lists_the_views(runners, checks_job: Path, kind: str) -> None:
    script = _script(
        checks_job, "bad_view.py", _track("total_amount", "int(df['amount'].sum())", "SELECT SUM(amount) FROM orders")
    )
    result = runners[kind].run(script, checks_job, FAST)
    assert result.exit_code == 1, result.stderr
    assert "total_amount: tracked 100" in result.stderr
    assert "Table with name orders does not exist" in result.stderr
    assert "unknown view or table name" in result.stderr and "use one of the job's views: data, sales" in result.stderr


def test_a_fraction_tracked_as_percent_fails_naming_the_slip(runners, checks_job: Path) -> None:
    share = "100.0 * df.loc[df['region'] == 'North', 'amount'].sum() / df['amount'].sum()"
    fraction_check = "SELECT SUM(amount) FILTER (WHERE region = 'North') / SUM(amount) FROM data"
    script = _script(checks_job, "bad_share.py", _track("north_share", share, fraction_check, unit="%"))
    result = runners["warm"].run(script, checks_job, FAST)
    assert result.exit_code == 1
    assert "north_share: tracked 40.0, check returned 0.4" in result.stderr
    assert "percent vs fraction" in result.stderr
    assert "% values are stored in percent (45.2); make the check return percent too" in result.stderr
    assert "run the script again" in result.stderr
    summary = result.summary(lines_written=5, script=script)
    assert "exit code 1" in summary and "percent vs fraction" in summary  # what write_and_execute_tool returns


def test_null_results_and_wrong_shapes_are_explained(runners, checks_job: Path) -> None:
    body = _track("empty_sum", "0", "SELECT SUM(amount) FROM data WHERE amount < 0")
    body += _track("rows", "4", "SELECT amount FROM data")
    body += _track("cols", "4", "SELECT COUNT(*), 1 FROM data")
    body += _track("good", "len(df)", "SELECT COUNT(*) FROM data")
    result = runners["warm"].run(_script(checks_job, "shapes.py", body), checks_job, FAST)
    assert result.exit_code == 1
    assert "3 of 4 tracked check(s) do not reproduce" in result.stderr
    assert "empty_sum: tracked 0, check returned None" in result.stderr and "COUNT(*) counts rows" in result.stderr
    assert "wrong shape (more than one row)" in result.stderr
    assert "wrong shape (more than one column)" in result.stderr
    assert "- good:" not in result.stderr


def test_correct_checks_pass_with_one_short_line(runners, checks_job: Path) -> None:
    body = _track("total_amount", "int(df['amount'].sum())", 'SELECT SUM("amount") FROM sales', unit="KRW")
    body += _track("order_count", "len(df)", "SELECT COUNT(*) FROM data")
    result = runners["warm"].run(_script(checks_job, "good.py", body), checks_job, FAST)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "checks: 2 verified at script end" and not result.stderr.strip()


def test_a_script_without_checks_prints_nothing(runners, checks_job: Path) -> None:
    body = "track_calculation('n', len(df), 'd', 'f', 'sales.csv', [], 'low')\n"
    result = runners["warm"].run(_script(checks_job, "unchecked.py", body), checks_job, FAST)
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""


def test_flush_checks_runs_them_now_and_not_again_at_the_end(runners, checks_job: Path) -> None:
    body = _track("order_count", "len(df)", "SELECT COUNT(*) FROM data")
    body += FLUSH + "print('flushed', flush_checks())\nprint('again', flush_checks())\n"
    result = runners["warm"].run(_script(checks_job, "flush.py", body), checks_job, FAST)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["flushed 1", "again 0"]  # nothing left for the script's end


def test_a_failing_flush_raises_and_the_end_does_not_report_it_twice(runners, checks_job: Path) -> None:
    body = (
        _track("order_count", "len(df)", "SELECT COUNT(*) FROM orders")
        + FLUSH
        + "flush_checks()\nprint('not reached')\n"
    )
    result = runners["warm"].run(_script(checks_job, "flush_bad.py", body), checks_job, FAST)
    assert result.exit_code == 1 and "not reached" not in result.stdout
    assert "ChecksFailed" in result.stderr and "use one of the job's views: data, sales" in result.stderr
    assert result.stderr.count("do not reproduce their value") == 1


def test_a_re_tracked_number_is_checked_once_with_its_last_check(runners, checks_job: Path) -> None:
    body = _track("order_count", "len(df)", "SELECT COUNT(*) FROM orders")
    body += _track("order_count", "len(df)", "SELECT COUNT(*) FROM data")
    result = runners["warm"].run(_script(checks_job, "retrack.py", body), checks_job, FAST)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "checks: 1 verified at script end"


def test_a_crashing_script_keeps_its_exit_code_and_still_reports_its_checks(runners, checks_job: Path) -> None:
    body = _track("order_count", "len(df)", "SELECT COUNT(*) FROM orders") + "raise SystemExit(4)\n"
    result = runners["warm"].run(_script(checks_job, "crash.py", body), checks_job, FAST)
    assert result.exit_code == 4
    assert "order_count: tracked 4" in result.stderr and "unknown view" in result.stderr


def _run_by_hand(job: Path, script: Path) -> subprocess.CompletedProcess[str]:
    """``python code/x.py`` in the job folder, outside the runner (atexit does the checks there)."""
    src = str(Path(insightloom.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src, "MPLBACKEND": "Agg"}
    env.pop("INSIGHTLOOM_JOB_DIR", None)
    return subprocess.run(
        [sys.executable, str(script.relative_to(job))], cwd=job, env=env, capture_output=True, text=True, timeout=120
    )


def test_python_script_py_outside_the_runner_behaves_the_same(checks_job: Path) -> None:
    bad = _script(checks_job, "by_hand_bad.py", _track("n", "len(df)", "SELECT COUNT(*) FROM orders"))
    failed = _run_by_hand(checks_job, bad)
    assert failed.returncode == 1 and "use one of the job's views: data, sales" in failed.stderr
    good = _script(checks_job, "by_hand_good.py", _track("n", "len(df)", "SELECT COUNT(*) FROM data"))
    passed = _run_by_hand(checks_job, good)
    assert passed.returncode == 0, passed.stderr
    assert passed.stdout.strip() == "checks: 1 verified at script end"
