"""What the renderer and the audit both need to know about each calculation.

Both must format a cited value identically, so both read it here: value and status from citations.json, unit and
decimals from citations.json when validation copied them there, else from calculation_metadata.json. A claim (a
record of ``kind: "claim"``) prints the sentence of :func:`insightloom.claims.wording.claim_text` instead, built from
its calculation_metadata.json record (verdict, evidence and test), so renderer and audit print it identically too.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from insightloom.claims.records import evidence_of, params_of
from insightloom.claims.wording import claim_text
from insightloom.errors import ValidationError
from insightloom.report.formatting import format_value
from insightloom.validation.jobfiles import METADATA_FILE, load_calculations, load_citations

logger = logging.getLogger(__name__)

CLAIM = "claim"


@dataclass(frozen=True)
class CalcInfo:
    """One calculation as the report sees it."""

    calc_id: str
    value: Any
    unit: str | None
    decimals: int | None
    description: str
    formula: str
    status: str
    citation_id: str | None
    kind: str = "number"
    record: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_claim(self) -> bool:
        """A tracked claim (a verdict such as "rising"), cited as ``{{claim:ID}}`` rather than ``{{calc:ID}}``."""
        return self.kind == CLAIM

    def formatted(self) -> str:
        """The value as the report prints it (the one formatting rule)."""
        return format_value(self.value, self.unit, self.decimals)

    def claim_text(self, language: str) -> str:
        """The sentence a claim prints (``claim_text`` of its record with the verdict the Validator saw).

        Raises:
            ValueError: The record's claim kind or verdict is not in the claims table.
        """
        return claim_text({**self.record, "value": self.value}, language)


def _metadata_units(job_dir: Path) -> dict[str, dict[str, Any]]:
    if not (job_dir / METADATA_FILE).is_file():
        return {}
    try:
        return {str(c["id"]): c for c in load_calculations(job_dir)}
    except ValidationError as exc:
        logger.warning("cannot read units from %s: %s", METADATA_FILE, exc)
        return {}


def load_calc_info(job_dir: Path, *, required: bool = True) -> dict[str, CalcInfo]:
    """Calculation id -> :class:`CalcInfo`, in citations.json order.

    Args:
        job_dir: The job folder.
        required: When False, a missing citations.json yields an empty mapping instead of an error.
    """
    data = load_citations(job_dir, required=required)
    if data is None:
        return {}
    meta = _metadata_units(job_dir)
    info: dict[str, CalcInfo] = {}
    for entry in data["citations"]:
        calc_id = str(entry.get("calculation_id"))
        extra = meta.get(calc_id, {})
        unit = entry["unit"] if "unit" in entry else extra.get("unit")
        decimals = entry["decimals"] if "decimals" in entry else extra.get("decimals")
        kind = CLAIM if CLAIM in (entry.get("kind"), extra.get("kind")) else "number"
        status = str(entry.get("verification_status", "unverified"))
        if kind == CLAIM and status == "verified" and _claim_changed(extra, entry):
            status = STALE
        info[calc_id] = CalcInfo(
            calc_id=calc_id,
            value=entry.get("value"),
            unit=unit,
            decimals=decimals,
            description=str(entry.get("description", "")),
            formula=str(entry.get("formula", "")),
            status=status,
            citation_id=entry.get("citation_id"),
            kind=kind,
            record=extra,
        )
    return info


#: The status of a verified claim whose record changed after validation: its sentence is refused until re-verified.
STALE = "stale"


def _claim_changed(record: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    """Whether the claim's record (which scripts may still write) no longer says what the Validator verified: its
    verdict, evidence or params (citations.json keeps them from validation)."""
    said = {"value": record.get("value"), "evidence": evidence_of(record), "params": params_of(record)}
    # an entry written without evidence or params (before they were kept) is judged on what it has
    return any(said[key] != entry[key] for key in said if key in entry)
