"""A validated report job with tracked claims whose statuses the test chooses (written by hand, as the contract has
them), so the renderer's and the audit's claim rules are tested without the statistics behind them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from report_fixtures import build_job

from insightloom.claims.wording import claim_text


def _claim(claim_id: str, claim_kind: str, verdict: str, evidence: dict[str, Any], params: dict[str, Any]) -> dict:
    return {
        "id": claim_id,
        "kind": "claim",
        "claim_kind": claim_kind,
        "value": verdict,
        "evidence": evidence,
        "description": f"{claim_kind.capitalize()} of amount",
        "formula": f"{claim_kind} test of amount",
        "source_file": "sales.csv",
        "source_columns": ["region", "amount"],
        "importance": "high",
        "unit": None,
        "decimals": None,
        "check": f"stat:{claim_kind}",
        "test": {"name": claim_kind, "sql": "SELECT amount AS v FROM data", "params": params},
    }


CLAIMS = [
    _claim(
        "claim_trend_amount",
        "trend",
        "volatile",
        {"n": 6, "tau": 0.2, "p_value": 0.57, "slope": 812.4, "cv": 61.3, "largest_swing": 83.2},
        {"measure": "amount", "by": "date", "period": "month"},
    ),
    _claim(
        "claim_driver_region",
        "driver",
        "main",
        {
            "eta_sq": 0.48,
            "epsilon_sq": 0.42,
            "rank": 1,
            "best": "region",
            "best_epsilon_sq": 0.42,
            "n": 10,
            "groups": 2,
        },
        {"measure": "amount", "by": "region"},
    ),
    _claim(
        "claim_concentration_region",
        "concentration",
        "spread_evenly",
        {"top": "North", "top_share": 50.2, "bottom_share": 49.8, "hhi": 5000.1, "groups": 2},
        {"measure": "amount", "by": "region"},
    ),
    _claim(
        "claim_trend_units",
        "trend",
        "rising",
        {"n": 8, "tau": 0.9, "p_value": 0.001, "slope": 12.5, "cv": 20.0, "largest_swing": 10.0},
        {"measure": "units", "by": "date", "period": "month"},
    ),
]


def build_claims_job(job: Path, statuses: dict[str, str] | None = None, *, korean: bool = False) -> Path:
    """:func:`build_job` plus :data:`CLAIMS`, every claim ``verified`` unless ``statuses`` says otherwise."""
    build_job(job, korean=korean)
    meta_path = job / "calculation_metadata.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["calculations"] += CLAIMS
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    citations_path = job / "citations.json"
    citations = json.loads(citations_path.read_text(encoding="utf-8"))
    for claim in CLAIMS:
        status = (statuses or {}).get(claim["id"], "verified")
        entry = {key: claim[key] for key in ("kind", "claim_kind", "evidence", "value", "description", "formula")}
        entry.update(calculation_id=claim["id"], citation_id=None, source_file="sales.csv", importance="high")
        entry.update(unit=None, decimals=None, verification_status=status, verification_method="stat")
        entry.update(check_value=claim["value"], reason="" if status == "verified" else "claim mismatch: tampered")
        citations["citations"].append(entry)
    citations_path.write_text(json.dumps(citations), encoding="utf-8")
    return job


def printed(claim_id: str, language: str = "en") -> str:
    """What ``{{claim:<claim_id>}}`` prints before its marker."""
    return claim_text(next(c for c in CLAIMS if c["id"] == claim_id), language)
