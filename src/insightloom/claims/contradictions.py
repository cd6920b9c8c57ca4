"""Claims that cannot both be printed: opposite verdicts about the same thing.

Two claims contradict when they are the same ``claim_kind`` about the same measure and breakdown (the ``params``
of their test) with different verdicts (for a comparison, a-vs-b and b-vs-a are the same subject with the verdict
mirrored), or when a ``driver`` claim calls a breakdown the ``main`` driver of a measure that its ``concentration``
claim finds ``spread_evenly`` across that breakdown's groups. The conclusions tool, the renderer and the Auditor
all ask this module, so "main driver" followed by "spread evenly" can never reach a report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from insightloom.claims.records import is_claim, params_of

_MIRROR = {"higher": "lower", "lower": "higher"}


def _text(value: object) -> str:
    return "" if value is None else str(value)


def subject(record: Mapping[str, Any]) -> tuple[str, ...]:
    """What a claim is about: its kind, measure and breakdown (the pair, for correlations and comparisons)."""
    kind, params = _text(record.get("claim_kind")), params_of(record)
    if kind == "correlation":
        columns = [str(c) for c in record.get("source_columns") or []]
        pair = sorted([_text(params.get("x") or (columns[:1] or [""])[0]),
                       _text(params.get("y") or (columns[-1:] or [""])[0])])  # fmt: skip
        return (kind, *pair)
    if kind == "trend":  # a monthly and a yearly verdict on one column judge different series
        return (kind, _text(params.get("measure")), _text(params.get("by")), _text(params.get("period")),
                _text(params.get("agg")))  # fmt: skip
    if kind == "comparison":
        pair = sorted([_text(params.get("a")), _text(params.get("b"))])
        return (kind, _text(params.get("measure")), _text(params.get("by")), *pair)
    return (kind, _text(params.get("measure")), _text(params.get("by")))


def _verdict(record: Mapping[str, Any]) -> str:
    verdict = _text(record.get("value"))
    params = params_of(record)
    if record.get("claim_kind") == "comparison" and _text(params.get("a")) > _text(params.get("b")):
        return _MIRROR.get(verdict, verdict)  # "b lower than a" is "a higher than b"
    return verdict


def contradictions(records: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """Every pair of claim records that cannot both be printed, as ``(first id, second id, why)``.

    Args:
        records: Calculation records; only ``kind: "claim"`` ones are considered, in the order given.
    """
    claims = [r for r in records if is_claim(r)]
    found: list[tuple[str, str, str]] = []
    for first, second in combinations(claims, 2):
        if subject(first) == subject(second) and _verdict(first) != _verdict(second):
            what = " ".join(part for part in subject(first)[1:] if part)
            found.append(
                (
                    str(first["id"]),
                    str(second["id"]),
                    f"both are {first['claim_kind']} claims about {what or 'the same data'} with opposite verdicts "
                    f"({first.get('value')} vs {second.get('value')})",
                )
            )
            continue
        pair = {str(first.get("claim_kind")): first, str(second.get("claim_kind")): second}
        driver, spread = pair.get("driver"), pair.get("concentration")
        if (
            driver is not None
            and spread is not None
            and driver.get("value") == "main"
            and spread.get("value") == "spread_evenly"
            and subject(driver)[1:] == subject(spread)[1:]
        ):
            by = _text(params_of(driver).get("by"))
            found.append(
                (
                    str(first["id"]),
                    str(second["id"]),
                    f"{by} cannot be the main driver while the measure is spread evenly across its groups",
                )
            )
    return found
