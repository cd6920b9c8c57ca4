"""Whether a rendered report is one an analyst can use, or a degenerate success that needs a human.

A report can pass its audit (every printed number verified and cited) and still say nothing: intake found no measure
to analyse, numeric-looking columns were kept as text and never analysed, or only a handful of verified numbers were
printed. Each such case is a reason the job ends ``needs_review`` instead of ``completed``, so exit 0 always means a
usable report. The rules read only the data profile and citations.json, so the CLI, the service and the benchmark's
lint judge a job alike.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from insightloom.errors import InsightloomError
from insightloom.validation.jobfiles import load_citations

logger = logging.getLogger(__name__)

__all__ = [
    "MEASURE_ROLES",
    "Degenerate",
    "degenerate_reasons",
    "has_measure",
    "text_numeric_columns",
    "verified_numbers_printed",
]

#: Roles whose columns carry a measured quantity; a table without any has nothing to aggregate or compare.
MEASURE_ROLES = ("measure", "rate")
NO_MEASURE, TEXT_NUMERIC, FEW_VERIFIED = "no_measure", "text_numeric", "few_verified"

_NOTES = {
    "en": {
        NO_MEASURE: "Needs review: no column of the data survived intake as a measure (no column has the role measure "
        "or rate), so the report holds no measured result.",
        TEXT_NUMERIC: "Needs review: columns that look numeric were kept as text and not analysed: {columns}.",
        FEW_VERIFIED: "Needs review: the report prints only {count} verified numbers, fewer than the minimum of "
        "{minimum} (setting min_verified_numbers).",
    },
    "ko": {
        NO_MEASURE: "검토 필요: 수집 단계 이후 측정값(role measure 또는 rate)으로 남은 열이 없어 보고서에 측정 결과가 "
        "없습니다.",
        TEXT_NUMERIC: "검토 필요: 숫자처럼 보이는 열이 텍스트로 남아 분석되지 않았습니다: {columns}.",
        FEW_VERIFIED: "검토 필요: 보고서에 검증된 수치가 {count}개뿐이며 최소 기준 {minimum}개보다 적습니다"
        "(설정 min_verified_numbers).",
    },
}


@dataclass(frozen=True)
class Degenerate:
    """One reason a report is not usable as it is.

    Attributes:
        kind: ``no_measure``, ``text_numeric`` or ``few_verified``.
        note: The sentence for job.json, the CLI's last line and the note under the report's title. Names and
            counts are in backticks, so the note's own digits are labels, never uncited claims.
    """

    kind: str
    note: str


def _quoted(text: object) -> str:
    return f"`{text}`"


def _tables(profile: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in profile.get("tables") or [] if isinstance(t, dict)]


def has_measure(profile: dict[str, Any]) -> bool:
    """Whether any table has a column whose role is a measure or a rate."""
    return any(col.get("role") in MEASURE_ROLES for table in _tables(profile) for col in table.get("columns") or [])


def text_numeric_columns(profile: dict[str, Any]) -> list[tuple[str, str]]:
    """(view, column) of every column intake kept as text although it looks numeric (``text_numeric_columns``)."""
    return [
        (str(table.get("view", "")), str(name))
        for table in _tables(profile)
        for name in table.get("text_numeric_columns") or []
    ]


def verified_numbers_printed(job_dir: Path) -> int:
    """How many verified calculations with a numeric value the rendered report cites (a marker was assigned)."""
    try:
        data = load_citations(Path(job_dir), required=False)
    except InsightloomError as exc:
        logger.warning("cannot read citations.json: %s", exc)
        return 0
    if data is None:
        return 0
    return sum(
        1
        for entry in data["citations"]
        if entry.get("citation_id")
        and entry.get("verification_status") == "verified"
        and isinstance(entry.get("value"), int | float)
        and not isinstance(entry.get("value"), bool)
    )


def degenerate_reasons(
    profile: dict[str, Any], job_dir: Path, *, minimum: int, language: str = "en"
) -> list[Degenerate]:
    """Every reason the job's report is a degenerate success, each with its note in the report's language.

    Args:
        profile: The data profile (``cache/profile.json`` as a dict).
        job_dir: The job folder (reads citations.json for the cited, verified numbers).
        minimum: ``min_verified_numbers``; 0 turns that rule off.
        language: ``en`` or ``ko``.
    """
    notes = _NOTES.get(language, _NOTES["en"])
    reasons: list[Degenerate] = []
    if not has_measure(profile):
        reasons.append(Degenerate(NO_MEASURE, notes[NO_MEASURE]))
    kept = text_numeric_columns(profile)
    if kept:
        names = ", ".join(f"{_quoted(col)} ({_quoted(view)})" for view, col in kept)
        reasons.append(Degenerate(TEXT_NUMERIC, notes[TEXT_NUMERIC].format(columns=names)))
    count = verified_numbers_printed(job_dir)
    if count < minimum:
        note = notes[FEW_VERIFIED].format(count=_quoted(count), minimum=_quoted(minimum))
        reasons.append(Degenerate(FEW_VERIFIED, note))
    return reasons
