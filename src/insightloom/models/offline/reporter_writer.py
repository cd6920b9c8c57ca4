"""The offline Reporter: reads the Coder's notes and the citations, writes Markdown with ``{{calc:ID}}`` references.

It never types a digit: every number in the report comes from a verified calculation through the renderer. On an
Auditor retry it patches only the flagged passages of its last ``report.md`` (from ``audit_findings.json``) and keeps
every other line word for word; when the patched report cannot be rendered it writes the report afresh, leaving out
the references, the typed numbers (say, from the request) and the charts whose captions the refusal named. Both
repairs are the product's (``report.repair``), reading the same problem lines and findings a hosted model reads.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...analysis_utils.result_notes import parse_results as parse_results_text
from ...calc_refs import CALC_REF_RE as REF_RE
from ...report.repair import patch_report, refusals, without_refused
from .conversation import Conversation, Reply, ToolExchange

MAX_RENDERS = 4
_TRUNCATED = "more characters; call again with offset="
_WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "summary": "Executive summary",
        "findings": "Findings",
        "conclusions": "Conclusions",
        "intro": "This report answers the request: {request}",
        "closing": [
            "Every figure in this report was computed from the data by analysis scripts, recomputed "
            "independently with DuckDB, and is cited to its formula in the references.",
            "Figures that could not be verified were left out rather than printed.",
        ],
    },
    "ko": {
        "summary": "요약",
        "findings": "주요 분석 결과",
        "conclusions": "결론",
        "intro": "이 보고서는 다음 요청에 답합니다: {request}",
        "closing": [
            "이 보고서의 모든 수치는 분석 스크립트로 데이터에서 계산되었고, "
            "DuckDB로 독립적으로 다시 계산되어 검증되었으며, 참고 문헌에 그 공식이 인용되어 있습니다.",
            "검증되지 않은 수치는 보고서에 싣지 않았습니다.",
        ],
    },
}


def _language(conv: Conversation) -> str:
    found = re.findall(r"language\W+(ko|en)\b", conv.system_prompt)
    return found[-1] if found else "en"


def _header(conv: Conversation, key: str, default: str) -> str:
    """``Title:`` and ``Request:`` lines the tool-agent wrapper puts above the other plan sections."""
    match = re.search(rf"^{key}:\s*(.+)$", conv.tag("other_sections") or "", re.M)
    return match.group(1).strip() if match else default


def _statuses(citations_text: str) -> dict[str, str]:
    try:
        data = json.loads(citations_text)
    except ValueError:
        return {}
    return {c["calculation_id"]: c.get("verification_status", "") for c in data.get("citations", [])}


def _usable(text: str, allowed: set[str]) -> bool:
    return all(ref in allowed for ref in REF_RE.findall(text))


def compose(
    results_text: str, citations_text: str, *, title: str, request: str, language: str, banned: set[str]
) -> str:
    """Build the report Markdown from the notes, using only verified calculations not in ``banned``."""
    words = _WORDS.get(language, _WORDS["en"])
    statuses = _statuses(citations_text)
    allowed = {cid for cid, status in statuses.items() if status == "verified"} - banned
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
    lines += [f"## {words['conclusions']}", ""] + [f"- {text}" for text in words["closing"]]
    return "\n".join(lines) + "\n"


def _is_retry(conv: Conversation) -> bool:
    """The Supervisor asks for a retry after an audit; the task (or the Auditor's message under it) says so."""
    text = conv.user_text.lower()
    return "audit_findings.json" in text or "verdict: retry" in text


def _patched(conv: Conversation, reads: dict[str, ToolExchange]) -> Reply | None:
    """The retry path: read report.md and audit_findings.json, then render the patched report (None: write afresh)."""
    for path in ("report.md", "audit_findings.json"):
        if path not in reads:
            return Reply.call("file_read", path=path)
    report, audit = reads["report.md"], reads["audit_findings.json"]
    if report.status != "success" or audit.status != "success" or _TRUNCATED in report.result + audit.result:
        return None
    try:
        return Reply.call("render_report", markdown=patch_report(report.result, audit.result))
    except (ValueError, AttributeError):
        return None


def _done(conv: Conversation, render: ToolExchange) -> Reply:
    items = [m.group(1).strip() for m in re.finditer(r"^\s*-\s*\[ \]\s+(.*)$", conv.tag("plan_section") or "", re.M)]
    return Reply(
        text="## Status\nSUCCESS\n## Completed Tasks\n"
        + "\n".join(f"- {item}" for item in items)
        + "\n## Key Insights\n- "
        + render.result.splitlines()[0][:200]
        + "\n## Generated Files\n- final_report.docx\n- report.md"
    )


def reporter(conv: Conversation) -> Reply:
    exchanges = conv.exchanges()
    reads = {str(e.input.get("path")): e for e in exchanges if e.name == "file_read"}
    renders = [e for e in exchanges if e.name == "render_report"]
    if renders and renders[-1].status == "success":
        return _done(conv, renders[-1])
    if len(renders) >= MAX_RENDERS:
        return Reply(
            text="## Status\nERROR\n## Completed Tasks\n- none\n## Key Insights\n- The report could not be "
            "rendered: " + renders[-1].result[:300] + "\n## Generated Files\n- report.md"
        )
    if _is_retry(conv) and not renders:
        patched = _patched(conv, reads)
        if patched is not None:
            return patched
    for path in ("all_results.txt", "citations.json"):
        if path not in reads:
            return Reply.call("file_read", path=path)
    banned, typed, charts = refusals(e.result for e in renders)
    markdown = compose(
        reads["all_results.txt"].result,
        reads["citations.json"].result,
        title=_header(conv, "Title", "Data analysis report"),
        request=_header(conv, "Request", ""),
        language=_language(conv),
        banned=banned,
    )
    return Reply.call("render_report", markdown=without_refused(markdown, typed, charts))
