"""A claim tracked during a follow-up analysis is re-computed with SciPy against the real job, like a number's check.

Before, the follow-up's ``recompute`` ran every check as SQL, so a ``stat:`` claim was refused as "reads no table"
and a follow-up answer could never state a checked verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claim_job import TREND_SQL, make_job

from insightloom.analysis_utils import load_calculations, track_claim
from insightloom.ask.analyze import recompute


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_job(tmp_path / "job", monkeypatch)


def _claim(job: Path) -> dict:
    track_claim("trend", "claim_trend_revenue", "data", TREND_SQL,
                {"measure": "Revenue", "by": "Date", "period": "month", "agg": "sum"},
                description="Trend of monthly Revenue", columns=["Date", "Revenue"])  # fmt: skip
    return next(c for c in load_calculations(job) if c["id"] == "claim_trend_revenue")


def test_a_followup_claim_is_verified_with_its_kind_and_evidence(job: Path) -> None:
    claim = _claim(job)
    verified, refused = recompute(job, [claim])
    assert refused == {}
    entry = verified["claim_trend_revenue"]
    assert entry["verification_status"] == "verified" and entry["verification_method"] == "stat"
    assert entry["kind"] == "claim" and entry["claim_kind"] == "trend"
    assert entry["evidence"] == json.loads(json.dumps(claim["evidence"]))
    assert entry["check_value"] == claim["value"]


def test_a_followup_claim_with_a_wrong_verdict_is_refused_naming_the_mismatch(job: Path) -> None:
    claim = _claim(job)
    wrong = "falling" if claim["value"] != "falling" else "rising"
    verified, refused = recompute(job, [{**claim, "value": wrong}])
    assert verified == {}
    assert refused["claim_trend_revenue"].startswith("claim mismatch:")
