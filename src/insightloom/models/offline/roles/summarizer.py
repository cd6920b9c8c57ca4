"""Extractive summaries for Strands' SummarizingConversationManager, in the shape ``prompts/summarization.md`` asks
for: plan and tracking lines, agent responses and clues, one bullet per tool call, files and calculations, and open
errors. Lines are copied verbatim, never paraphrased, so plan items keep their exact wording."""

from __future__ import annotations

import re

from ....state import completed_tasks, response_status
from ..conversation import Conversation, Reply, ToolExchange

_PLAN_RE = re.compile(r"^\s*(- \[[ x]\] |- \w+: \d+/\d+ \((open|done)\)|Ticked \d+ item|# Plan)")
_VERDICT_RE = re.compile(r"verdict\W+(pass|retry|needs_review)", re.I)
SUMMARY_HEAD = "Summary of earlier work:"
_FILE_RE = re.compile(r"(?:code|charts)/[\w./-]+|[\w-]+\.(?:json|txt|docx|md|pdf)\b")
_CALC_RE = re.compile(r"\{\{calc:[\w.-]+\}\}")
_SECTION_LINES = 60


def _unique(lines: list[str]) -> list[str]:
    return list(dict.fromkeys(lines))[:_SECTION_LINES]


def _texts(conv: Conversation) -> list[str]:
    """Every text the summarized messages hold: user and assistant text and tool results."""
    texts = [block["text"] for m in conv.messages for block in m["content"] if "text" in block]
    texts += [exchange.result for exchange in conv.exchanges()]
    return [t for t in texts if t.strip() != "Please summarize this conversation."]


def _outcome(exchange: ToolExchange) -> str:
    """One line for a tool call: its status heading when it returned a standard response, else its first line."""
    if "## Status" in exchange.result:
        verdict = _VERDICT_RE.search(exchange.result)
        return f"status {response_status(exchange.result)}" + (f", verdict {verdict.group(1)}" if verdict else "")
    return next((ln.strip() for ln in exchange.result.splitlines() if ln.strip()), "(no output)")[:200]


def _responses(conv: Conversation) -> list[str]:
    """Each agent response's status and completed tasks, verbatim, in order."""
    lines: list[str] = []
    for exchange in conv.exchanges():
        if "## Status" not in exchange.result:
            continue
        lines.append(f"- Response from {exchange.name}: {_outcome(exchange)}")
        lines += [f"  - completed: {item}" for item in completed_tasks(exchange.result) if item != "none"]
    return lines


def _previous(conv: Conversation) -> dict[str, list[str]]:
    """The sections of an earlier summary among the summarized messages, so a second summary keeps them."""
    sections: dict[str, list[str]] = {}
    for text in _texts(conv):
        if not text.startswith(SUMMARY_HEAD):
            continue
        current = None
        for line in text.splitlines()[1:]:
            if line.startswith("## "):
                current = sections.setdefault(line[3:].strip(), [])
            elif current is not None and line.strip() and line.strip() != "- none":
                current.append(line.rstrip())
    return sections


def summarizer(conv: Conversation) -> Reply:
    """Summary for Strands' SummarizingConversationManager: plan, tracking and responses kept verbatim."""
    earlier = _previous(conv)
    lines = [line.rstrip() for text in _texts(conv) for line in text.splitlines() if line.strip()]
    plan = [line for line in lines if _PLAN_RE.match(line)]
    clues = [line for line in lines if line.startswith("Here is clues from")]
    text = "\n".join(lines)
    files = [f"- {path}" for path in _FILE_RE.findall(text)] + [f"- {ref}" for ref in _CALC_RE.findall(text)]
    errors = [f"- {e.name}: {_outcome(e)}" for e in conv.exchanges() if e.status == "error"]
    sections = {
        "Plan and tracking": _unique(plan),
        "Clues and agent responses": _unique(earlier.get("Clues and agent responses", []) + clues + _responses(conv)),
        "Tools executed": _unique(
            earlier.get("Tools executed", []) + [f"- {e.name}: {_outcome(e)} ({e.status})" for e in conv.exchanges()]
        ),
        "Files and calculations": _unique(files),
        "Open issues": _unique(earlier.get("Open issues", []) + errors),
    }
    body = "\n".join(f"## {title}\n" + ("\n".join(items) if items else "- none") for title, items in sections.items())
    return Reply(text=f"{SUMMARY_HEAD}\n" + body)
