"""The offline Reporter: reads the Coder's notes and the citations, writes Markdown with ``{{calc:ID}}`` references.

It never types a digit: every number in the report comes from a verified calculation through the renderer. On an
Auditor retry it patches only the flagged passages of its last ``report.md`` (from ``audit_findings.json``) and keeps
every other line word for word; when the patched report cannot be rendered it writes the report afresh, leaving out
the references, the typed numbers (say, from the request) and the charts whose captions the refusal named. It reads
a refusal with the product's own parser of its problem lines (``report.problems.read_problems``), as a hosted model
reads the same lines.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...analysis_utils.result_notes import parse_results as parse_results_text
from ...calc_refs import CALC_REF_RE as REF_RE
from ...calc_refs import calc_ids
from ...report.problems import TYPED, UNCHECKED, UNKNOWN, UNVERIFIED, ProblemLine, read_problems
from .conversation import Conversation, Reply, ToolExchange

MAX_RENDERS = 4
_REFUSED_REFERENCE_KINDS = {UNKNOWN, UNVERIFIED, UNCHECKED}
_TRUNCATED = "more characters; call again with offset="
_SENTENCE_END_RE = re.compile(r"(?<=[.!?。])\s+")
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


def _typed(value: str | None, marker: str) -> re.Pattern[str]:
    """A typed "<value> [N]" (or the bare marker) in Markdown, not inside another number or a calc id."""
    head = rf"(?<![\w.,]){re.escape(value)}\s*" if value else ""
    return re.compile(head + re.escape(marker))


def _drop_sentences(line: str, pattern: re.Pattern[str]) -> str:
    """Remove the sentences of a prose line that match; a table row gets "-" in place of the match instead."""
    if line.lstrip().startswith("|"):
        return pattern.sub("-", line)
    lead = re.match(r"^\s*(?:[-*]\s+|\d+[.)]\s+|#+\s+)?", line).group(0)  # type: ignore[union-attr]
    kept = [part for part in _SENTENCE_END_RE.split(line[len(lead) :]) if not pattern.search(part)]
    return (lead + " ".join(kept)) if kept else ""


def patch_report(markdown: str, findings_text: str) -> str:
    """Fix only what the audit flagged, keeping every other line as it was.

    - B (wrong value before a marker): the typed "value [N]" becomes the reference of the cited calculation;
    - C (undefined marker) and A (typed number without a marker): the sentence holding it is dropped (a table cell
      gets "-"), since no verified calculation backs it;
    - D (never cited) is a warning and changes nothing.
    A finding whose text is not in report.md (say, the DOCX was edited afterwards) needs no patch: rendering
    report.md again restores the document.
    """
    findings = json.loads(findings_text).get("findings", [])
    lines = markdown.splitlines()
    for finding in findings:
        kind, marker, value = finding.get("type"), finding.get("marker"), finding.get("body_value")
        if kind == "B" and marker and finding.get("cited_calculation_id"):
            pattern, replacement = _typed(value, marker), "{{calc:" + finding["cited_calculation_id"] + "}}"
            lines = [pattern.sub(replacement, line) for line in lines]
        elif kind == "C" and marker:
            pattern = _typed(value, marker)
            lines = [_drop_sentences(line, pattern) if pattern.search(line) else line for line in lines]
        elif kind == "A" and value:
            lines = _drop_number(lines, str(value))
    return "\n".join(lines) + "\n"


def _drop_number(lines: list[str], value: str) -> list[str]:
    """Drop the sentences (or empty the table cells) where ``value`` is typed outside any reference."""
    pattern = re.compile(rf"(?<![\w.,]){re.escape(value)}(?![\w])")
    return [_drop_sentences(line, pattern) if pattern.search(REF_RE.sub("", line)) else line for line in lines]


def drop_typed_numbers(markdown: str, numbers: set[str]) -> str:
    """The report without the passages holding numbers the renderer refused as typed."""
    lines = markdown.splitlines()
    for number in sorted(numbers):
        lines = _drop_number(lines, number)
    return "\n".join(lines) + "\n"


def drop_charts(markdown: str, charts: set[str]) -> str:
    """The report without the image lines of ``charts`` (their sidecar captions cannot be printed)."""
    kept = [line for line in markdown.splitlines() if not any(line.strip().endswith(f"]({c})") for c in charts)]
    return "\n".join(kept) + "\n"


def _refused(renders: list[ToolExchange]) -> tuple[set[str], set[str], set[str]]:
    """From every refusal so far: the calculation ids, typed numbers and charts the next draft must leave out."""
    problems: list[ProblemLine] = [p for e in renders for p in read_problems(e.result)]
    banned = {cid for p in problems if p.kind in _REFUSED_REFERENCE_KINDS for cid in calc_ids(p.subject)}
    charts = {chart for p in problems if (chart := p.chart)}
    typed = {p.subject for p in problems if p.kind == TYPED and not p.chart}
    return banned, typed, charts


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
    banned, typed, charts = _refused(renders)
    markdown = compose(
        reads["all_results.txt"].result,
        reads["citations.json"].result,
        title=_header(conv, "Title", "Data analysis report"),
        request=_header(conv, "Request", ""),
        language=_language(conv),
        banned=banned,
    )
    return Reply.call("render_report", markdown=drop_charts(drop_typed_numbers(markdown, typed), charts))
