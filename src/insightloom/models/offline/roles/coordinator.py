"""The offline Coordinator: hand analysis requests to the Planner, answer small talk itself."""

from __future__ import annotations

import re

from ..conversation import Conversation, Reply

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
