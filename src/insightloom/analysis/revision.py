"""The offline Planner's revision: apply a reviewer's "remove/skip/drop ..." feedback to the Coder items.

Feedback is read clause by clause. A clause with a removal word ("remove", "skip", "drop", "빼", "제외" ...) names
analysis kinds ("correlation", "추이") and/or columns (as they appear in backticks in the items); matching Coder items
are dropped, and a KPI item loses just the named measure. The Validator, Reporter and Auditor sections are never
removed, and the Coder section always keeps at least one item.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace

from insightloom.analysis.catalog import AnalysisSpec, item_language, parse_item_text

logger = logging.getLogger(__name__)

_REMOVE = re.compile(
    r"\b(remove|skip|drop|exclude|omit|delete|without|leave out|get rid of|no need|not needed|unnecessary|"
    r"don'?t|do not|no)\b|제거|빼|삭제|제외|생략|필요\s*없|불필요|하지\s*마",
    re.I,
)
_KEEP = re.compile(r"^\s*(add|also|include|keep|focus|instead|please add|추가|포함|유지)", re.I)
_KIND_WORDS = {
    "overview": r"overview|data quality|missing|개요|품질|결측",
    "kpi": r"\bkpis?\b|headline|핵심\s*지표",
    "breakdown": r"break\s*downs?|breakdowns?|그룹별|분해",
    "trend": r"trends?|over time|time series|monthly|weekly|daily|추이|시계열|트렌드",
    "correlation": r"correlat\w*|scatter|상관",
    "distribution": r"distribution|outliers?|histogram|분포|이상치|히스토그램",
}
_VALIDATOR_WORDS = re.compile(r"validat\w*|verif\w*|citation|검증|인용", re.I)
_CODER_HEADING = re.compile(r"^###\s*\d+\.\s*Coder\s*:", re.I)
_ITEM = re.compile(r"^\s*-\s*\[( |x|X)\]\s+(.*?)\s*$")


@dataclass
class _Request:
    kinds: set[str]
    columns: set[str]


def _mentions_column(name: str, text: str) -> bool:
    if name.isascii():
        return re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text, re.I) is not None
    return name in text


def _segments(feedback: str) -> list[str]:
    sentences = re.split(r"[.;!?\n]+", feedback)
    return [
        seg for s in sentences for seg in re.split(r",|\band\b|\bbut\b|그리고|하지만", s, flags=re.I) if seg.strip()
    ]


def _removal_requests(feedback: str, columns: list[str]) -> tuple[list[_Request], bool]:
    """Removal requests per clause, and whether the feedback tried to remove validation."""
    requests: list[_Request] = []
    removing, validator_asked = False, False
    for seg in _segments(feedback):
        if _REMOVE.search(seg):
            removing = True
        elif _KEEP.search(seg):
            removing = False
        if not removing:
            continue
        kinds = {kind for kind, words in _KIND_WORDS.items() if re.search(words, seg, re.I)}
        cols = {c for c in columns if _mentions_column(c, seg)}
        validator_asked |= bool(_VALIDATOR_WORDS.search(seg)) and not kinds and not cols
        if kinds or cols:
            requests.append(_Request(kinds, cols))
    return requests, validator_asked


def _apply(spec: AnalysisSpec, requests: list[_Request]) -> AnalysisSpec | None:
    """The spec after the removals (None when it is dropped)."""
    for req in requests:
        kind_hit = not req.kinds or spec.kind in req.kinds
        cols_hit = set(spec.columns()) & req.columns
        if not kind_hit or (req.columns and not cols_hit):
            continue
        if spec.kind == "kpi" and req.columns and not req.kinds:
            kept = tuple(m for m in spec.measures if m not in req.columns)
            if kept:
                spec = replace(spec, measures=kept)
                continue
        return None
    return spec


def _split_notes(lines: list[str]) -> tuple[list[str], list[str]]:
    """Old ``## revision_notes`` body, and the plan lines without header and notes."""
    notes: list[str] = []
    rest: list[str] = []
    in_notes = False
    for line in lines[1:] if lines and lines[0].startswith("# Plan") else lines:
        if line.strip().lower() == "## revision_notes":
            in_notes = True
            continue
        if in_notes and line.startswith("## "):
            in_notes = False
        (notes if in_notes else rest).append(line)
    return notes, rest


def _coder_items(lines: list[str]) -> list[tuple[int, str]]:
    items, inside = [], False
    for index, line in enumerate(lines):
        if line.startswith("### "):
            inside = bool(_CODER_HEADING.match(line))
            continue
        match = _ITEM.match(line)
        if inside and match:
            items.append((index, match.group(2)))
    return items


def _revise_items(lines: list[str], feedback: str) -> tuple[list[str], list[str], bool]:
    items = _coder_items(lines)
    specs = {index: parse_item_text(text) for index, text in items}
    columns = sorted({c for s in specs.values() if s for c in s.columns()}, key=len, reverse=True)
    requests, validator_asked = _removal_requests(feedback, columns)
    new_lines, removed = list(lines), []
    for index, text in items:
        spec = specs[index]
        if spec is None or not requests:
            continue
        revised = _apply(spec, requests)
        if revised is None:
            new_lines[index] = ""
            removed.append(text)
        elif revised != spec:
            new_lines[index] = f"- [ ] {revised.item_text(item_language(text))}"
            removed.append(f"{text} -> {revised.item_text(item_language(text))}")
    if items and all(new_lines[i] == "" for i, _ in items):
        first, text = items[0]
        new_lines[first] = lines[first]
        removed = [r for r in removed if r != text]
    return [line for line in new_lines if line != ""], removed, validator_asked


def revise_plan(plan_md: str, feedback: str, revision: int) -> str:
    """Revise a plan after reviewer feedback.

    Args:
        plan_md: The current plan (``# Plan`` or an earlier ``# Plan (Revised)``).
        feedback: The reviewer's words, quoted into ``## revision_notes``.
        revision: The revision number this produces (1 for the first revision).

    Returns:
        ``# Plan (Revised)`` with ``## revision_notes`` (earlier notes kept), Coder items the feedback removes
        dropped, and every other section unchanged.
    """
    old_notes, rest = _split_notes(plan_md.splitlines())
    rest, removed, validator_asked = _revise_items(rest, feedback)
    notes = [line for line in old_notes if line.strip()]
    notes.append(f"- Revision {revision}: reviewer feedback:")
    notes += [f"  > {line.strip()}" for line in feedback.strip().splitlines() if line.strip()] or ["  > (empty)"]
    notes += [f"  - removed: {text}" for text in removed]
    if not removed:
        notes.append("  - no analysis matched a removal request; items kept")
    if validator_asked:
        notes.append("  - the Validator step cannot be removed: every number must be verified before it is cited")
    logger.debug("revision %d removed %d item(s)", revision, len(removed))
    return "\n".join(["# Plan (Revised)", "## revision_notes", *notes, *rest]).rstrip("\n") + "\n"
