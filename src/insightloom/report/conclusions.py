"""Conclusions drawn only from verified claims: what the findings mean, each verdict checked against the data.

A conclusion states a verdict ("main driver", "dominates", "rising", "strongly correlated"), so it cites the claim
record that tested it (``{{claim:ID}}``, a ``kind: "claim"`` entry of calculation_metadata.json that the Validator
re-computed and marked ``verified``) and never words a verdict of its own. :func:`conclusions` states
- the main driver: the ``driver`` claim with verdict ``main`` (the breakdown with the largest epsilon squared over all
  candidates, never the first breakdown by position), with its largest group and share as ``{{calc:ID}}``; when no
  breakdown is material, the best one's ``weak`` verdict;
- concentration: the ``concentration`` claim of that same breakdown;
- the trend: the first ``trend`` claim, preferring the driver's measure;
- a relationship: the first ``correlation`` claim that is not ``negligible`` (its verdict carries
  ``driven_by_extremes``).
Two lines whose claims contradict (:func:`insightloom.claims.contradictions.contradictions`) are never both output:
"main driver" of a breakdown whose concentration is ``spread_evenly`` goes, and of two opposite verdicts on the same
measure and breakdown the later goes. Each line is checked by the renderer's own rules and left out if it would be
refused. The offline Reporter writes its conclusions with it; the Reporter prompt asks a hosted model for the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from insightloom.calc_refs import claim_reference, reference
from insightloom.claims.contradictions import contradictions
from insightloom.errors import InsightloomError
from insightloom.fileio import is_regular_file
from insightloom.report.calcinfo import CalcInfo, load_calc_info
from insightloom.validation.jobfiles import METADATA_FILE, load_calculations

__all__ = ["conclusions"]

_TEXTS = {
    "en": {
        "driver": "{claim}.",
        "top": "Its largest group, {top}, holds {share} of the total.",
        "concentration": "{claim}.",
        "trend": "The trend verdict for {what} over {over} is {claim}.",
        "correlation": "On the relationship between `{x}` and `{y}`: {claim}.",
    },
    "ko": {
        "driver": "{claim}.",
        "top": "가장 큰 그룹인 {top}이(가) 전체의 {share}를 차지합니다.",
        "concentration": "{claim}.",
        "trend": "{over} 기준 {what}을(를) 모든 기간으로 판단하면 {claim}.",
        "correlation": "{claim}.",
    },
}


@dataclass(frozen=True)
class _Claim:
    """One verified claim record, with what conclusions look it up by."""

    claim_id: str
    kind: str
    verdict: str
    evidence: Mapping[str, Any]
    measure: str
    by: str
    position: int
    record: Mapping[str, Any]

    @property
    def effect(self) -> float:
        value = self.evidence.get("epsilon_sq")
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


@dataclass(frozen=True)
class _Line:
    """A conclusion and the claims it cites (what contradictions are judged on)."""

    text: str
    claims: tuple[str, ...]


def _records(job_dir: Path) -> list[dict[str, Any]]:
    """calculation_metadata.json's calculations, or none when it is missing or broken (the renderer names that)."""
    if not is_regular_file(job_dir / METADATA_FILE, beneath=job_dir):
        return []
    try:
        return load_calculations(job_dir)
    except InsightloomError:
        return []


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _claims(records: list[dict[str, Any]], infos: Mapping[str, CalcInfo]) -> list[_Claim]:
    """The claim records the Validator verified, in tracking order."""
    found = []
    for position, record in enumerate(records):
        claim_id = str(record.get("id"))
        info = infos.get(claim_id)
        if record.get("kind") != "claim" or info is None or info.status != "verified":
            continue
        params = _mapping(_mapping(record.get("test")).get("params"))
        measure, by = str(params.get("measure") or ""), str(params.get("by") or "")
        kind, verdict = str(record.get("claim_kind")), str(record.get("value"))
        found.append(_Claim(claim_id, kind, verdict, _mapping(record.get("evidence")), measure, by, position, record))
    return found


def _of(claims: list[_Claim], kind: str) -> list[_Claim]:
    return [c for c in claims if c.kind == kind]


def _number(info: CalcInfo | None) -> float | None:
    if info is None or isinstance(info.value, bool) or not isinstance(info.value, int | float):
        return None
    return float(info.value)


def _top_group(
    driver: _Claim, records: list[dict[str, Any]], infos: Mapping[str, CalcInfo], words: dict[str, str]
) -> str:
    """The breakdown's largest group and its share (``<base>_top``, ``<base>_share_1``), unless the top two tie."""
    for record in records:
        calc_id = str(record.get("id"))
        cols = [str(c) for c in record.get("source_columns") or []]
        if record.get("kind") == "claim" or not calc_id.endswith("_share_1") or not cols or cols[0] != driver.by:
            continue
        if driver.measure not in ("", "rows") and driver.measure not in cols:
            continue
        base = calc_id.removesuffix("_share_1")
        top, share = infos.get(base + "_top"), infos.get(calc_id)
        if top is None or share is None or {top.status, share.status} != {"verified"}:
            continue
        first, second = _number(infos.get(base + "_1")), _number(infos.get(base + "_2"))
        if first is not None and first == second:
            return ""  # a tie: no single group leads
        return " " + words["top"].format(top=reference(base + "_top"), share=reference(calc_id))
    return ""


def _driver_lines(claims: list[_Claim], records: list[dict[str, Any]], infos: Mapping[str, CalcInfo],
                  words: dict[str, str]) -> tuple[list[_Line], _Claim | None]:  # fmt: skip
    """The main driver (largest epsilon squared among ``main`` verdicts, else the best breakdown's own verdict) and the
    concentration claim of that same breakdown."""
    drivers = _of(claims, "driver")
    mains = [c for c in drivers if c.verdict == "main"]
    driver = max(mains or drivers, key=lambda c: (c.effect, -c.position), default=None)
    lines = []
    if driver is not None:
        text = words["driver"].format(claim=claim_reference(driver.claim_id))
        if driver.verdict == "main":
            text += _top_group(driver, records, infos, words)
        lines.append(_Line(text, (driver.claim_id,)))
    concentrations = _of(claims, "concentration")
    if driver is not None:
        concentrations = [c for c in concentrations if (c.measure, c.by) == (driver.measure, driver.by)]
    if concentrations:
        chosen = concentrations[0]
        text = words["concentration"].format(claim=claim_reference(chosen.claim_id))
        lines.append(_Line(text, (chosen.claim_id,)))
    return lines, driver


def _trend_line(claims: list[_Claim], measure: str | None, words: dict[str, str]) -> list[_Line]:
    trends = sorted(_of(claims, "trend"), key=lambda c: (c.measure != measure, c.position))
    if not trends:
        return []
    chosen = trends[0]
    # the analysis names the series and its axis in words ("total `Revenue`", a wide table's year range)
    params = _mapping(_mapping(chosen.record.get("test")).get("params"))
    what, over = str(params.get("what") or f"`{chosen.measure}`"), str(params.get("over") or f"`{chosen.by}`")
    text = words["trend"].format(what=what, over=over, claim=claim_reference(chosen.claim_id))
    return [_Line(text, (chosen.claim_id,))]


def _correlation_line(claims: list[_Claim], words: dict[str, str]) -> list[_Line]:
    chosen = next((c for c in _of(claims, "correlation") if c.verdict != "negligible"), None)
    if chosen is None:
        return []
    params = _mapping(_mapping(chosen.record.get("test")).get("params"))
    x, y = str(params.get("x") or chosen.by), str(params.get("y") or chosen.measure)
    return [_Line(words["correlation"].format(x=x, y=y, claim=claim_reference(chosen.claim_id)), (chosen.claim_id,))]


def _without_contradictions(lines: list[_Line], claims: list[_Claim]) -> list[_Line]:
    """The lines, less those whose claims contradict an earlier line's: a ``driver`` claim loses (never "main
    driver" of an evenly spread breakdown), otherwise the later claim does."""
    by_id = {c.claim_id: c for c in claims}
    while True:
        cited = [by_id[cid] for line in lines for cid in line.claims]
        pairs = contradictions([dict(c.record) for c in cited])
        if not pairs:
            return lines
        first, second = (by_id[cid] for cid in pairs[0][:2])
        if first.kind == "driver" or second.kind == "driver":
            loser = first if first.kind == "driver" else second
        else:
            loser = max(first, second, key=lambda c: c.position)
        lines = [line for line in lines if loser.claim_id not in line.claims]


def conclusions(job_dir: Path, *, language: str = "en") -> list[str]:
    """The conclusions of the job's verified claims, one Markdown line each (no bullet), in ``language``.

    Empty when no claim was verified. Every line cites a claim as ``{{claim:ID}}`` (and may cite numbers as
    ``{{calc:ID}}``), no two lines contradict, and every line passes the renderer's checks.
    """
    from insightloom.report.render import check_markdown

    job_dir = Path(job_dir)
    words = _TEXTS["ko" if language == "ko" else "en"]
    infos = load_calc_info(job_dir, required=False)
    records = _records(job_dir)
    claims = _claims(records, infos)
    lines, driver = _driver_lines(claims, records, infos, words)
    lines += _trend_line(claims, driver.measure if driver else None, words)
    lines += _correlation_line(claims, words)
    lines = _without_contradictions(lines, claims)
    return [line.text for line in lines if not check_markdown(line.text, job_dir)]
