"""What the offline model says, per role, decided only from the prompt and the conversation so far."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable

from ...plan import parse_plan
from ...state import completed_tasks, response_status
from . import reporter_writer
from .conversation import Conversation, Reply

logger = logging.getLogger(__name__)

_ANALYSIS_WORDS = (
    "analy",
    "report",
    "data",
    "chart",
    "insight",
    "trend",
    "sales",
    "revenue",
    "summar",
    "kpi",
    "docx",
    "breakdown",
    "분석",
    "보고서",
    "리포트",
    "데이터",
    "매출",
    "차트",
    "요약",
    "추세",
)
_GREETINGS = (
    "hi",
    "hello",
    "hey",
    "thanks",
    "thank you",
    "good morning",
    "how are you",
    "who are you",
    "안녕",
    "고마워",
    "감사",
)
MAX_SUPERVISOR_STEPS = 60


def standard_response(status: str, completed: list[str], insights: list[str], files: list[str]) -> str:
    """The standard response format every tool agent returns."""

    def bullets(lines: list[str]) -> str:
        return "\n".join(f"- {line}" for line in lines) if lines else "- none"

    return (
        f"## Status\n{status}\n## Completed Tasks\n{bullets(completed)}\n## Key Insights\n{bullets(insights)}\n"
        f"## Generated Files\n{bullets(files)}"
    )


def _language(conv: Conversation) -> str:
    found = re.findall(r"language\W+(ko|en)\b", conv.system_prompt)
    return found[-1] if found else "en"


def coordinator(conv: Conversation) -> Reply:
    if conv.exchanges():
        return Reply(text="Handing this analysis request to the Planner.")
    request = (conv.tag("request") or conv.user_text).strip()
    lowered = request.lower()
    is_analysis = any(word in lowered for word in _ANALYSIS_WORDS)
    is_greeting = any(re.search(rf"(^|\W){re.escape(g)}($|\W)", lowered) for g in _GREETINGS)
    if is_analysis and "handoff_to_planner" in conv.tool_names:
        return Reply.call("handoff_to_planner", reason="The request asks for an analysis of the attached data.")
    if is_greeting:
        return Reply(
            text="Hello! I analyse CSV and Excel files and write verified, cited DOCX reports. "
            "Give me a data file and a request such as 'Analyze this sales data and write a report'."
        )
    return Reply(
        text="That is outside what I do: I analyse the attached data files and write reports about them. "
        "Ask me for an analysis of the data, for example 'Summarise revenue by category'."
    )


def planner(conv: Conversation) -> Reply:
    from .analyst import plan_markdown, revise_plan

    feedback = conv.tag("feedback")
    previous = conv.tag("previous_plan")
    if feedback is not None and previous:
        found = re.search(r"This is revision (\d+)", conv.system_prompt)
        revision = int(found.group(1)) if found else 1
        return Reply(text=revise_plan(previous, feedback, revision))
    profile = conv.json_tag("data_profile") or {"tables": [], "aliases": {}, "language": "en"}
    request = conv.tag("request") or conv.user_text
    language = _language(conv)
    return Reply(text=plan_markdown(profile, request, language, None))


def _next_role(conv: Conversation) -> str | None:
    """The role owning the first open plan section, from the latest Tracker report or the initial plan."""
    for exchange in reversed(conv.exchanges()):
        if exchange.name == "tracker":
            rows = re.findall(r"^- (\w+): (\d+)/(\d+) \((open|done)\)", exchange.result, re.M)
            if rows:
                open_rows = [
                    name.lower() for name, _, _, state in rows if state == "open" and name.lower() != "tracker"
                ]
                return open_rows[0] if open_rows else None
    plan = parse_plan(conv.tag("full_plan") or "")
    return next((s.role for s in plan.sections if not s.done and s.role != "tracker"), None)


def supervisor(conv: Conversation) -> Reply:
    exchanges = conv.exchanges()
    if len(exchanges) >= MAX_SUPERVISOR_STEPS:
        return Reply(text=standard_response("ERROR", [], ["Stopped: too many steps without finishing the plan."], []))
    last = exchanges[-1] if exchanges else None
    if last is not None and last.name != "tracker":
        return Reply.call("tracker", input=f"Tick the items that {last.name} completed, by their exact wording.")
    agents = [e for e in exchanges if e.name != "tracker"]
    found = re.search(r"Maximum Reporter retries[^:\n]*:\s*(\d+)", conv.system_prompt)
    retries = int(found.group(1)) if found else 2
    audits = [e for e in agents if e.name == "auditor"]
    if audits and agents[-1].name == "auditor" and re.search(r"verdict\W+retry", audits[-1].result, re.I):
        if len(audits) <= retries:
            return Reply.call(
                "reporter",
                input="The Auditor asked for a retry. Patch only the flagged sections "
                "(see audit_findings.json) and render the report again.",
            )
    if (
        agents[-1:]
        and agents[-1].name == "reporter"
        and audits
        and re.search(r"verdict\W+retry", audits[-1].result, re.I)
    ):
        return Reply.call("auditor", input="Audit the re-rendered report.")
    role = _next_role(conv)
    if role is None:
        return Reply(text=standard_response("SUCCESS", ["All plan sections are complete."], [], ["final_report.docx"]))
    stuck = [e.name for e in agents[-3:]]
    if len(stuck) == 3 and set(stuck) == {role}:
        return Reply(text=standard_response("ERROR", [], [f"{role} made no progress after three calls."], []))
    return Reply.call(role, input=f"Do the open items of your plan section ({role}).")


def coder(conv: Conversation) -> Reply:
    from .analyst import parse_item, script_for

    profile = conv.json_tag("data_profile") or {"tables": [], "aliases": {}, "language": "en"}
    language = _language(conv)
    section = conv.tag("plan_section") or ""
    items = [m.group(1).strip() for m in re.finditer(r"^\s*-\s*\[ \]\s+(.*)$", section, re.M)]
    runs = [e for e in conv.exchanges() if e.name == "write_and_execute_tool"]
    if len(runs) < len(items):
        item = items[len(runs)]
        spec = parse_item(item, profile)
        if spec is not None:
            name, source = script_for(spec, profile, language)
            return Reply.call("write_and_execute_tool", file_path=name, content=source, timeout=120)
        return Reply.call(
            "write_and_execute_tool",
            file_path=f"{len(runs) + 1:02d}_note.py",
            content=f"print({json.dumps('No offline analysis matches: ' + item)})\n",
            timeout=30,
        )
    completed, insights, files = [], [], []
    for item, run in zip(items, runs, strict=False):
        if run.status == "success":
            completed.append(item)
            first = next((ln.strip() for ln in run.result.splitlines() if ln.strip().startswith(("stdout", "|"))), "")
            insights.append(f"{item.split(':')[0]}: done" + (f" ({first[:80]})" if first else ""))
            files.append(f"code/{run.input.get('file_path', '')}")
        else:
            insights.append(f"{item.split(':')[0]}: failed ({run.result.splitlines()[0][:120] if run.result else ''})")
    status = "SUCCESS" if len(completed) == len(items) else ("PARTIAL_SUCCESS" if completed else "ERROR")
    return Reply(
        text=standard_response(status, completed, insights, files + ["all_results.txt", "calculation_metadata.json"])
    )


def _items(conv: Conversation) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^\s*-\s*\[ \]\s+(.*)$", conv.tag("plan_section") or "", re.M)]


def validator(conv: Conversation) -> Reply:
    last = conv.last()
    if last is None:
        return Reply.call("validate_calculations")
    ok = last.status == "success"
    return Reply(
        text=standard_response(
            "SUCCESS" if ok else "ERROR",
            _items(conv) if ok else [],
            [line for line in last.result.splitlines() if line.strip()][:5],
            ["citations.json", "validation_report.txt"],
        )
    )


def tracker(conv: Conversation) -> Reply:
    last = conv.last()
    if last is None:
        items = completed_tasks(conv.user_text)
        return Reply.call("update_plan", items=items)
    return Reply(
        text=standard_response("SUCCESS" if last.status == "success" else "ERROR", [], [], ["plan.md"])
        + "\n"
        + last.result
    )


def auditor(conv: Conversation) -> Reply:
    last = conv.last()
    if last is None:
        return Reply.call("audit_report")
    verdict = re.search(r"verdict\W+(\w+)", last.result, re.I)
    verdict_text = verdict.group(1).lower() if verdict else "needs_review"
    done = verdict_text in ("pass", "needs_review")
    status = "SUCCESS" if verdict_text == "pass" else "PARTIAL_SUCCESS"
    return Reply(
        text=standard_response(
            status,
            _items(conv) if done else [],
            [f"Verdict: {verdict_text}"] + last.result.splitlines()[1:4],
            ["audit_findings.json"],
        )
    )


def summarizer(conv: Conversation) -> Reply:
    """Extractive summary for Strands' SummarizingConversationManager: keep plan/clue/tracking lines verbatim."""
    keep = [ln for ln in conv.user_text.splitlines() if re.match(r"^\s*(- \[[ x]\]|##|<clues>|Here is clues|calc)", ln)]
    return Reply(text="Summary of earlier work:\n" + "\n".join(keep[:200]))


ROLES: dict[str, Callable[[Conversation], Reply]] = {
    "coordinator": coordinator,
    "planner": planner,
    "supervisor": supervisor,
    "coder": coder,
    "validator": validator,
    "reporter": reporter_writer.reporter,
    "tracker": tracker,
    "auditor": auditor,
}


def respond(role: str, conv: Conversation) -> Reply:
    """The next reply for ``role``; summarization requests are recognised by their prompt."""
    if "summar" in conv.system_prompt[:400].lower() and not conv.tool_names:
        return summarizer(conv)
    return ROLES[role](conv)


__all__ = ["respond", "standard_response", "response_status"]
