"""A first draft of the report from the Coder's notes: the verified findings, their charts and tables.

Any Reporter can start from it. The executive summary leads with the strongest finding, by the documented lead rule
(:func:`insightloom.claims.lead.lead_order`: the largest effect among the driver claims, then a material trend, then
a strong correlation; ``docs/claims.md``), then gives the lead finding of every other section; it never echoes the
request. The findings keep every sentence and table row whose references (``{{calc:ID}}`` and ``{{claim:ID}}``) are
all verified (a sentence citing anything else is left out, never printed with a gap), and the summary table and
conclusions go where a reader looks for them. A boilerplate closing is printed only when it is true. The offline
Reporter renders it as it is; a hosted one writes its own report by the same rules (``prompts/reporter.md``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from insightloom.analysis_utils.result_notes import ResultSection
from insightloom.analysis_utils.result_notes import parse_results as parse_results_text
from insightloom.calc_refs import CALC_REF_RE, CLAIM_REF_RE
from insightloom.claims.lead import lead_order
from insightloom.report.summary_table import with_summary_table

_WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "summary": "Executive summary",
        "findings": "Findings",
        "conclusions": "Conclusions",
        "closing": "The key figures above sum up the verified results; the findings show where they come from.",
    },
    "ko": {
        "summary": "요약",
        "findings": "주요 분석 결과",
        "conclusions": "결론",
        "closing": "위의 핵심 수치가 검증된 결과를 요약하며, 주요 분석 결과가 그 근거를 보여 줍니다.",
    },
}


def _entries(citations_text: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(citations_text)
    except ValueError:
        return []
    entries = data.get("citations", []) if isinstance(data, dict) else []
    return [e for e in entries if isinstance(e, dict)]


def _refs(text: str) -> list[str]:
    return CALC_REF_RE.findall(text) + CLAIM_REF_RE.findall(text)


def _usable(text: str, allowed: set[str]) -> bool:
    return all(ref in allowed for ref in _refs(text))


def _claim_records(entries: list[dict[str, Any]], claims: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """The claim records the lead rule orders: those given, else the claim entries of citations.json."""
    if claims is not None:
        return [dict(c) for c in claims]
    return [
        {**e, "id": e.get("calculation_id"), "kind": "claim"}
        for e in entries
        if e.get("kind") == "claim" or e.get("claim_kind")
    ]


def _summary(sections: list[ResultSection], allowed: set[str], order: list[str]) -> list[str]:
    """The summary bullets: the findings citing the lead claims first (one per section, in lead order), then the lead
    finding of every other section (the one citing a claim when it has one, else its first cited number)."""
    usable = [[f for f in section.findings if _usable(f, allowed) and _refs(f)] for section in sections]
    bullets: list[str] = []
    used: set[int] = set()
    for claim_id in order:
        for i, findings in enumerate(usable):
            lead = next((f for f in findings if claim_id in CLAIM_REF_RE.findall(f)), None)
            if i not in used and lead:
                bullets.append(lead)
                used.add(i)
                break
    for i, findings in enumerate(usable):
        lead = next((f for f in findings if CLAIM_REF_RE.search(f)), findings[0] if findings else None)
        if i not in used and lead:
            bullets.append(lead)
    return bullets


def draft_report(
    results_text: str,
    citations_text: str,
    *,
    title: str,
    request: str = "",
    language: str,
    table: str = "",
    conclusions: tuple[str, ...] = (),
    claims: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """Build the report Markdown from the notes (only verified calculations and claims), the summary table and
    conclusions.

    Args:
        results_text: all_results.txt.
        citations_text: citations.json (statuses; its claim entries feed the lead rule unless ``claims`` is given).
        title: The report's title.
        request: The user's request; the report answers it and never echoes it (kept for callers).
        language: ``en`` or ``ko``.
        table: The summary table (``summary_table``), placed under the executive summary.
        conclusions: Conclusion lines (``draft_conclusions``); without them the closing sentence is printed only
            when a summary table is there for it to point at.
        claims: The claim records of calculation_metadata.json, when the caller has them.
    """
    del request  # the summary answers the request; echoing it tells the reader nothing
    words = _WORDS.get(language, _WORDS["en"])
    entries = _entries(citations_text)
    allowed = {str(e.get("calculation_id")) for e in entries if e.get("verification_status") == "verified"}
    order = [cid for cid in lead_order(_claim_records(entries, claims)) if cid in allowed]
    sections = parse_results_text(results_text)
    lines = [f"# {title}", "", f"## {words['summary']}", ""]
    lines += [f"- {lead}" for lead in _summary(sections, allowed, order)]
    lines += ["", f"## {words['findings']}", ""]
    printed = 0
    for section in sections:
        findings = [f for f in section.findings if _usable(f, allowed)]
        rows = [r for r in section.table.splitlines() if _usable(r, allowed)] if section.table else []
        if not findings and not section.charts and len(rows) < 3:
            continue
        printed += 1
        lines += [f"### {section.title}", ""]
        if findings:
            lines += [" ".join(findings), ""]
        for chart in section.charts:
            lines += [f"![{section.title}]({chart})", ""]
        if len(rows) >= 3:
            lines += rows + [""]
    closing = (words["closing"],) if table and printed else ()
    ending = conclusions or closing
    if ending:
        lines += [f"## {words['conclusions']}", ""] + [f"- {text}" for text in ending]
    return with_summary_table("\n".join(lines) + "\n", table, language=language)
