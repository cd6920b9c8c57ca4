"""The summary's lead rule: which claims state the strongest finding, strongest first (docs/claims.md).

1. ``driver`` claims with verdict ``main`` or ``material``, by epsilon squared, largest first;
2. then ``trend`` claims with verdict ``rising`` or ``falling``, by |Kendall tau|, largest first;
3. then ``correlation`` claims with a ``strong_*`` verdict, by |r|, largest first.

Claims of any other kind or verdict never lead. Ties keep the records' order. The Reporter passes the claims it may
print (verified) and opens the summary with the first id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from insightloom.claims.records import evidence_of, is_claim

LEAD_VERDICTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("driver", ("main", "material"), "epsilon_sq"),
    ("trend", ("rising", "falling"), "tau"),
    ("correlation", ("strong_positive", "strong_negative"), "r"),
)


def _strength(record: Mapping[str, Any], key: str) -> float:
    value = evidence_of(record).get(key)
    return abs(float(value)) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def lead_order(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ids of the claims that may lead the summary, in the lead rule's order (empty when none qualifies)."""
    claims = [r for r in records if is_claim(r)]
    order: list[str] = []
    for kind, verdicts, key in LEAD_VERDICTS:
        group = [r for r in claims if r.get("claim_kind") == kind and r.get("value") in verdicts]
        group.sort(key=lambda record: -_strength(record, key))  # stable: ties keep the records' order
        order += [str(r["id"]) for r in group]
    return order
