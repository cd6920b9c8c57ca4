"""Tiered LLM verification end to end: the tier picks, the Validator's own script re-computes, the rest stay unverified.

Runs the offline Validator's real path at each tier threshold: ``validate_job`` lists the selected ids with what they
need, the Validator brain writes its pandas script from that text, the script runs in a fresh process and records its
results with ``record_verification``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from insightloom.analysis_utils import write_utils_module
from insightloom.validation import record_llm_verification, select_for_llm, validate_job
from insightloom.validation.jobfiles import write_profile
from insightloom.validation.recipes import expression, selected_tasks, verification_script
from repo_paths import REPO

_PATTERN = ("high", "medium", "medium", "low", "medium", "low", "low")
FRAME = pd.DataFrame({"region": ["North", "South", "East", "North", None], "amount": [5.0, 7.0, 2.0, 11.0, 4.0]})
RECIPES = [
    ({"op": "column_count", "view": "sales"}, 2),
    ({"op": "count_groups", "view": "sales", "by": "region", "nonnull": []}, 3),
    ({"op": "std", "view": "sales", "column": "amount"}, float(FRAME["amount"].std())),
]


def _job(root: Path, total: int) -> tuple[Path, list[dict]]:
    """``total`` tracked calculations: one checked, the rest unchecked with a recipe, importances cycling."""
    job = root / f"job{total}"
    (job / "cache").mkdir(parents=True)
    FRAME.to_parquet(job / "cache" / "sales.parquet", index=False)
    write_profile(job, [{"view": "sales", "file": "sales.csv", "parquet": "cache/sales.parquet"}], {"data": "sales"})
    calcs = [_calc("checked_total", 29.0, "high", check="SELECT SUM(amount) FROM data")]
    for i in range(total - 1):
        recipe, value = RECIPES[i % len(RECIPES)]
        calcs.append(_calc(f"c{i}", value, _PATTERN[i % len(_PATTERN)], recipe=recipe))
    (job / "calculation_metadata.json").write_text(
        json.dumps({"generated_at": "2025-01-01T00:00:00Z", "calculations": calcs}), encoding="utf-8"
    )
    write_utils_module(job / "code")
    return job, calcs


def _calc(calc_id: str, value: object, importance: str, **extra: object) -> dict:
    return {"id": calc_id, "value": value, "description": calc_id, "formula": "by recipe", "source_file": "sales.csv",
            "source_columns": ["amount"], "importance": importance, **extra}  # fmt: skip


def _run(job: Path, source: str) -> subprocess.CompletedProcess[str]:
    script = job / "code" / "verify_unchecked.py"
    script.write_text(source, encoding="utf-8")
    env = dict(os.environ, INSIGHTLOOM_JOB_DIR=str(job),
               PYTHONPATH=os.pathsep.join([str(job / "code"), str(REPO / "src")]))  # fmt: skip
    return subprocess.run([sys.executable, str(script)], cwd=job, env=env, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip


@pytest.mark.parametrize(("total", "medium", "low"), [(20, None, 5), (21, 15, 0), (50, 15, 0), (51, 10, 0)])
def test_the_validator_script_verifies_exactly_the_tier_selection(
    tmp_path: Path, total: int, medium: int | None, low: int
) -> None:
    job, calcs = _job(tmp_path, total)
    unchecked = [c for c in calcs if "check" not in c]
    by_level = {level: [c["id"] for c in unchecked if c["importance"] == level] for level in ("high", "medium", "low")}
    expected = set(by_level["high"]) | set(by_level["medium"][:medium]) | set(by_level["low"][:low])
    assert set(select_for_llm(calcs)) == expected

    text = validate_job(job).to_text()
    tasks = selected_tasks(text)
    assert {calc_id for calc_id, _ in tasks} == expected  # the tool result names every selected id...
    assert all(expression(recipe) for _, recipe in tasks)  # ...with what it needs to re-compute it
    assert f"{total} tracked" in text

    done = _run(job, verification_script([(calc_id, expression(recipe)) for calc_id, recipe in tasks]))
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{total} calculations: {len(expected) + 1} verified, 0 needs_review" in done.stdout
    entries = {c["calculation_id"]: c for c in json.loads((job / "citations.json").read_text())["citations"]}
    for calc in unchecked:
        entry = entries[calc["id"]]
        if calc["id"] in expected:
            assert entry["verification_status"] == "verified" and entry["verification_method"] == "llm"
        else:
            assert entry["verification_status"] == "unverified" and entry["verification_method"] is None


def test_unselected_and_checked_ids_are_not_recorded(tmp_path: Path) -> None:
    job, calcs = _job(tmp_path, 51)
    validate_job(job)
    lows = [c["id"] for c in calcs if c["importance"] == "low"]
    summary = record_llm_verification(job, {lows[0]: 2, "checked_total": 1, "nope": 1})
    assert lows[0] in summary.unverified and "checked_total" in summary.verified
    assert set(summary.rejected) == {lows[0], "checked_total", "nope"}
    assert "did not select it" in summary.rejected[lows[0]]
    assert f"not recorded {lows[0]}" in summary.to_text()


def test_a_wrong_script_result_needs_review(tmp_path: Path) -> None:
    job, calcs = _job(tmp_path, 10)
    validate_job(job)
    summary = record_llm_verification(job, {"c0": 3, "c1": 3})  # c0 has 2 columns; c1 counts 3 groups
    assert summary.needs_review == ["c0"] and "c1" in summary.verified
    assert "differs from re-computed" in summary.reasons["c0"]
