"""A first draft of the report from the Coder's notes: the verified findings, their charts and tables.

Any Reporter can start from it: the executive summary takes the lead finding of each section, the findings keep
every sentence and table row whose references are all verified (a sentence citing anything else is left out, never
printed with a gap), and the summary table and conclusions go where a reader looks for them. The offline Reporter
renders it as it is; a hosted one writes its own report by the same rules (``prompts/reporter.md``).
"""

from __future__ import annotations

import json
from typing import Any

from insightloom.analysis_utils.result_notes import parse_results as parse_results_text
from insightloom.calc_refs import CALC_REF_RE as REF_RE
from insightloom.report.summary_table import with_summary_table

_WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "summary": "Executive summary",
        "findings": "Findings",
        "conclusions": "Conclusions",
        "intro": "This report answers the request: {request}",
        "closing": "The key figures above sum up the verified results; the findings show where they come from.",
    },
    "ko": {
        "summary": "요약",
        "findings": "주요 분석 결과",
        "conclusions": "결론",
        "intro": "이 보고서는 다음 요청에 답합니다: {request}",
        "closing": "위의 핵심 수치가 검증된 결과를 요약하며, 주요 분석 결과가 그 근거를 보여 줍니다.",
    },
}


def _statuses(citations_text: str) -> dict[str, str]:
    try:
        data = json.loads(citations_text)
    except ValueError:
        return {}
    return {c["calculation_id"]: c.get("verification_status", "") for c in data.get("citations", [])}


def _usable(text: str, allowed: set[str]) -> bool:
    return all(ref in allowed for ref in REF_RE.findall(text))


def draft_report(
    results_text: str,
    citations_text: str,
    *,
    title: str,
    request: str,
    language: str,
    table: str = "",
    conclusions: tuple[str, ...] = (),
) -> str:
    """Build the report Markdown from the notes (only verified calculations), the summary table and conclusions."""
    words = _WORDS.get(language, _WORDS["en"])
    statuses = _statuses(citations_text)
    allowed = {cid for cid, status in statuses.items() if status == "verified"}
    sections = parse_results_text(results_text)
    lines = [f"# {title}", "", f"## {words['summary']}", "", words["intro"].format(request=request.strip()), ""]
    for section in sections:
        lead = next((f for f in section.findings if _usable(f, allowed) and REF_RE.search(f)), None)
        if lead:
            lines.append(f"- {lead}")
    lines += ["", f"## {words['findings']}", ""]
    for section in sections:
        findings = [f for f in section.findings if _usable(f, allowed)]
        rows = [r for r in section.table.splitlines() if _usable(r, allowed)] if section.table else []
        if not findings and not section.charts and len(rows) < 3:
            continue
        lines += [f"### {section.title}", ""]
        if findings:
            lines += [" ".join(findings), ""]
        for chart in section.charts:
            lines += [f"![{section.title}]({chart})", ""]
        if len(rows) >= 3:
            lines += rows + [""]
    lines += [f"## {words['conclusions']}", ""] + [f"- {text}" for text in conclusions or (words["closing"],)]
    return with_summary_table("\n".join(lines) + "\n", table, language=language)
