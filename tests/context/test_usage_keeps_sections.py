"""A resumed job's ledger keeps the follow-up questions' section of usage.json when it saves."""

from __future__ import annotations

import json
from pathlib import Path

from insightloom.telemetry import UsageLedger


def test_saving_the_ledger_keeps_the_ask_section(tmp_path: Path) -> None:
    path = tmp_path / "usage.json"
    UsageLedger(path).save()
    data = json.loads(path.read_text())
    data["ask"] = {"questions": 3, "abstained": 1, "retrieval": "bm25"}
    path.write_text(json.dumps(data))
    UsageLedger.load(path).save()
    assert json.loads(path.read_text())["ask"] == {"questions": 3, "abstained": 1, "retrieval": "bm25"}
