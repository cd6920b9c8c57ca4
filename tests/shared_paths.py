"""Where the shared test data and contracts live (``../shared`` beside the repository)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DATA = SHARED / "data"
CONTRACTS = SHARED / "contracts"


def load_contract(name: str) -> dict[str, Any]:
    return json.loads((CONTRACTS / f"{name}.schema.json").read_text(encoding="utf-8"))
