"""The offline Reporter: reads the Coder's notes and the citations, writes Markdown with ``{{calc:ID}}`` references.

It never types a digit: every number in the report comes from a verified calculation through the renderer. Like a
hosted model, it asks the Reporter's tools for the summary table and the conclusions (``summary_table``,
``draft_conclusions``), and repairs a refused render or an Auditor retry with ``patch_report``, which fixes only the
flagged passages and keeps every other line word for word. The rules behind all of them are the product's
(``report.draft``, ``report.summary_table``, ``report.conclusions``, ``report.repair``).
"""

from __future__ import annotations

import re

from ...report.draft import draft_report
from .conversation import Conversation, Reply, ToolExchange

MAX_RENDERS = 4
_RENDERS = ("render_report", "patch_report")


def _language(conv: Conversation) -> str:
    found = re.findall(r"language\W+(ko|en)\b", conv.system_prompt)
    return found[-1] if found else "en"


def _header(conv: Conversation, key: str, default: str) -> str:
    """``Title:`` and ``Request:`` lines the tool-agent wrapper puts above the other plan sections."""
    match = re.search(rf"^{key}:\s*(.+)$", conv.tag("other_sections") or "", re.M)
    return match.group(1).strip() if match else default


def _is_retry(conv: Conversation) -> bool:
    """The Supervisor asks for a retry after an audit; the task (or the Auditor's message under it) says so."""
    text = conv.user_text.lower()
    return "audit_findings.json" in text or "verdict: retry" in text


def _done(conv: Conversation, render: ToolExchange) -> Reply:
    items = [m.group(1).strip() for m in re.finditer(r"^\s*-\s*\[ \]\s+(.*)$", conv.tag("plan_section") or "", re.M)]
    return Reply(
        text="## Status\nSUCCESS\n## Completed Tasks\n"
        + "\n".join(f"- {item}" for item in items)
        + "\n## Key Insights\n- "
        + render.result.splitlines()[0][:200]
        + "\n## Generated Files\n- final_report.docx\n- report.md"
    )


def _lines(exchange: ToolExchange) -> tuple[str, ...]:
    """The bullet lines of a tool's answer (draft_conclusions), without their bullets."""
    if exchange.status != "success":
        return ()
    return tuple(m.group(1) for m in re.finditer(r"^- (.+)$", exchange.result, re.M))


def _repair(renders: list[ToolExchange], retry: bool) -> Reply | None:
    """patch_report after a refused render, or first thing on an Auditor retry; None: write the report afresh."""
    if not renders:
        return Reply.call("patch_report") if retry else None
    if renders[-1].name == "render_report":
        return Reply.call("patch_report")  # repairs what the refusal named
    if any(e.name == "render_report" for e in renders):
        return _failed(renders[-1])
    return None  # a retry whose patch failed: write the report afresh


def _failed(render: ToolExchange) -> Reply:
    return Reply(
        text="## Status\nERROR\n## Completed Tasks\n- none\n## Key Insights\n- The report could not be "
        "rendered: " + render.result[:300] + "\n## Generated Files\n- report.md"
    )


def reporter(conv: Conversation) -> Reply:
    exchanges = conv.exchanges()
    reads = {str(e.input.get("path")): e for e in exchanges if e.name == "file_read"}
    renders = [e for e in exchanges if e.name in _RENDERS]
    if renders and renders[-1].status == "success":
        return _done(conv, renders[-1])
    if len(renders) >= MAX_RENDERS:
        return _failed(renders[-1])
    repair = _repair(renders, _is_retry(conv))
    if repair is not None:
        return repair
    for path in ("all_results.txt", "citations.json"):
        if path not in reads:
            return Reply.call("file_read", path=path)
    tools = {e.name: e for e in exchanges}
    for name in ("summary_table", "draft_conclusions"):
        if name not in tools:
            return Reply.call(name)
    table = tools["summary_table"].result if tools["summary_table"].status == "success" else ""
    markdown = draft_report(
        reads["all_results.txt"].result,
        reads["citations.json"].result,
        title=_header(conv, "Title", "Data analysis report"),
        request=_header(conv, "Request", ""),
        language=_language(conv),
        table=table,
        conclusions=_lines(tools["draft_conclusions"]),
    )
    return Reply.call("render_report", markdown=markdown)
