"""Reading claim records (``kind: "claim"`` entries of calculation_metadata.json) defensively.

Records come from a file a script wrote, so any part may be missing or of the wrong type; these accessors give an
empty mapping instead, and every reader (wording, contradictions, lead rule, Validator) treats them alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_EMPTY: Mapping[str, Any] = {}


def as_mapping(value: object) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else _EMPTY


def params_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The claim's ``test.params`` (measure, by, period, a/b ...)."""
    return as_mapping(as_mapping(record.get("test")).get("params"))


def evidence_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The claim's ``evidence`` figures."""
    return as_mapping(record.get("evidence"))


def is_claim(record: Mapping[str, Any]) -> bool:
    """Whether a calculation record is a tracked claim."""
    return record.get("kind") == "claim" and bool(record.get("claim_kind")) and bool(record.get("id"))
