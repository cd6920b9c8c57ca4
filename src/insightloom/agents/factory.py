"""The one factory that builds every agent the same way: model, prompt, tools, conversation manager and hooks."""

from __future__ import annotations

import logging
from typing import Any

from strands import Agent
from strands.agent.conversation_manager import NullConversationManager, SummarizingConversationManager
from strands.event_loop._retry import ModelRetryStrategy
from strands.tools.executors import SequentialToolExecutor

from ..models import make_model
from ..prompting import load_prompt
from ..runtime import JobRuntime
from ..telemetry import AgentTelemetry
from .guards import CancelGuard

logger = logging.getLogger(__name__)

# Long-running agents get Strands' summarizing safety net; the others live for one short call.
SUMMARIZED_ROLES = frozenset({"supervisor", "coder", "reporter"})
SUMMARY_RATIO = 0.5
PRESERVED_MESSAGES = 10


def _conversation_manager(role: str, rt: JobRuntime) -> Any:
    if role not in SUMMARIZED_ROLES:
        return NullConversationManager()
    prompt = load_prompt("summarization", rt.settings.prompts_dir).replace("${max_tokens}", "2000")
    prompt = prompt.replace("<!-- dynamic -->\n", "")
    return SummarizingConversationManager(
        summary_ratio=SUMMARY_RATIO,
        preserve_recent_messages=PRESERVED_MESSAGES,
        summarization_system_prompt=prompt,
    )


def build_agent(
    role: str, rt: JobRuntime, system_prompt: str, tools: list[Any] | None = None, hooks: list[Any] | None = None
) -> Agent:
    """Build one agent for this job.

    Args:
        role: Lower-case role name; picks the model spec, transcript file and usage key.
        rt: The job's runtime.
        system_prompt: The rendered prompt (static part first, per-call part after).
        tools: The agent's tools.
        hooks: Extra hook providers (e.g. a skill's allowed-tools guard).
    """
    spec = rt.settings.spec(role)
    models: dict[str, Any] = rt.extras.setdefault("models", {})
    if role not in models:  # one model object per role and job: offline call counters and clients are reused
        models[role] = make_model(spec, role, rt.settings)
    telemetry = AgentTelemetry(role, rt.job.events, rt.ledger, rt.job.path("transcripts"))
    return Agent(
        model=models[role],
        system_prompt=system_prompt.replace("<!-- dynamic -->\n", ""),
        tools=tools or [],
        name=role,
        callback_handler=None,
        conversation_manager=_conversation_manager(role, rt),
        hooks=[telemetry, CancelGuard(rt), *(hooks or [])],
        tool_executor=SequentialToolExecutor(),
        retry_strategy=ModelRetryStrategy(max_attempts=rt.settings.model_max_attempts, initial_delay=2, max_delay=30),
    )
