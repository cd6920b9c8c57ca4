"""The one factory that builds every agent the same way: model, prompt, tools, conversation manager and hooks.

The context policy lives here, so every agent gets it the same way:

- the system prompt goes out as content blocks, static rules, a cache point, then the per-call part, for agents
  whose spec asks for caching, so the static prefix stays cacheable while the plan section and clues change;
- long-running agents (Supervisor, Coder, Reporter) get Strands' summarizing safety net with proactive compression;
- agents that loop over tools get their older exchanges reduced to stubs (``context.history``);
- every agent carries the cancel guard, the per-job ceilings and the guard against re-sending a failed call.

A ``ContextPolicy`` switches the parts off one by one: the ablation benchmark's naive baseline keeps the full
history with no reduction and no summarizing, and is measured with caching on and off.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from dataclasses import dataclass
from typing import Any

from strands import Agent
from strands.agent.conversation_manager import NullConversationManager, SummarizingConversationManager
from strands.models import CacheConfig, Model
from strands.tools.executors import SequentialToolExecutor
from strands.types.content import SystemContentBlock

from ..context.history import HistoryReducer, ReductionPolicy
from ..context.prompt_cache import static_prefix_note
from ..models import make_model
from ..models.retries import agent_retry_strategy
from ..plan import parse_plan
from ..prompting import load_prompt, split_static
from ..runtime import JobRuntime
from ..telemetry import AgentTelemetry
from ..telemetry.pricing import PriceTable
from ..telemetry.tracing import start_tracing, trace_attributes
from .guards import BudgetGuard, CancelGuard, RepeatGuard, TurnToolCap, start_wall_clock

logger = logging.getLogger(__name__)

# Long-running agents get Strands' summarizing safety net; the others live for one short call.
SUMMARIZED_ROLES = frozenset({"supervisor", "coder", "reporter"})
SUMMARY_RATIO = 0.5
PRESERVED_MESSAGES = 10
SUMMARY_MAX_TOKENS = 2000
#: How each looping agent's older tool exchanges are reduced (see context.history). The Supervisor's tool results
#: are agent responses the plan and clues already hold; the Coder's and Validator's inputs are scripts saved in
#: code/; the Reporter's are report drafts already rendered.
REDUCTION: dict[str, ReductionPolicy] = {
    "supervisor": ReductionPolicy(keep_recent=2, threshold_tokens=600, result_tokens=40, input_tokens=200),
    # A real Coder's script is one to two thousand tokens and lives in code/, its printout in all_results.txt:
    # reduce an older one as soon as the next is written.
    "coder": ReductionPolicy(keep_recent=1, threshold_tokens=1500, result_tokens=400, input_tokens=300),
    "validator": ReductionPolicy(keep_recent=1, threshold_tokens=4000, input_tokens=300),
    "reporter": ReductionPolicy(keep_recent=1, threshold_tokens=1000, input_tokens=300),
}


@dataclass(frozen=True)
class ContextPolicy:
    """Which parts of the context policy an agent gets.

    Attributes:
        cache: Cache points where the agent's spec asks for caching and the provider honours them.
        reduce_history: Older tool exchanges of looping agents reduced to stubs (``context.history``).
        summarize: Strands' summarizing safety net on the long-running agents.
    """

    cache: bool = True
    reduce_history: bool = True
    summarize: bool = True


ENGINEERED = ContextPolicy()
CACHE_POINT: SystemContentBlock = {"cachePoint": {"type": "default"}}
#: Providers that honour a cachePoint block (offline simulates Bedrock); the others get one plain string.
CACHE_POINT_PROVIDERS = frozenset({"bedrock", "anthropic", "offline", "replay"})


def system_prompt_for(prompt: str, cache: bool) -> str | list[SystemContentBlock]:
    """The system prompt as sent: static text, a cache point and the per-call text when caching, else one string."""
    static, dynamic = split_static(prompt)
    if not cache:
        return f"{static}\n\n{dynamic}" if dynamic else static
    blocks: list[SystemContentBlock] = [{"text": static}, dict(CACHE_POINT)]  # type: ignore[list-item]
    if dynamic:
        blocks.append({"text": dynamic})
    return blocks


def _withhold_system_point(model: Model) -> None:
    """No automatic cache point at the end of the system prompt: Strands' ``system_prompt_ttl=False`` on Bedrock,
    the same switch on the offline model's simulation."""
    config = model.get_config()
    cache_config = config.get("cache_config") if isinstance(config, dict) else None
    if isinstance(cache_config, CacheConfig):
        model.update_config(cache_config=dataclasses.replace(cache_config, system_prompt_ttl=False))
    elif isinstance(config, dict) and "system_point" in config:  # the offline model (not imported for a check)
        model.update_config(system_point=False)


def _conversation_manager(role: str, rt: JobRuntime, policy: ContextPolicy) -> Any:
    if not policy.summarize or role not in SUMMARIZED_ROLES:
        return NullConversationManager()
    prompt = load_prompt("summarization", rt.settings.prompts_dir).replace("${max_tokens}", str(SUMMARY_MAX_TOKENS))
    static, dynamic = split_static(prompt)
    return SummarizingConversationManager(
        summary_ratio=SUMMARY_RATIO,
        preserve_recent_messages=PRESERVED_MESSAGES,
        summarization_system_prompt=f"{static}\n\n{dynamic}".strip(),
        proactive_compression=True,
    )


def open_items_note(rt: JobRuntime, shown: int = 5) -> str:
    """What the Supervisor's shortened results say about the plan: the items open when they were shortened."""
    items = parse_plan(rt.state.full_plan).open_items()
    if not items:
        return "No plan items were open when this result was shortened."
    more = f"; and {len(items) - shown} more" if len(items) > shown else ""
    return f"Open plan items when this result was shortened: {'; '.join(items[:shown])}{more}."


def _model(role: str, rt: JobRuntime) -> Model:
    if role not in rt.models:  # one model object per role and job: offline caches, counters and clients are reused
        rt.models[role] = make_model(rt.settings.spec(role), role, rt.settings)
        if rt.settings.spec(role).provider == "bedrock":
            from ..models.bedrock import watch_throttling

            notify = functools.partial(rt.job.events.emit, "progress", agent=role)
            watch_throttling(rt.models[role], rt.settings, notify)
        if rt.settings.spec(role).provider == "replay":
            from ..models.model_io import ReplayModel

            replay = rt.models[role]
            if isinstance(replay, ReplayModel):  # this job's folder is normalised away like the recorded one
                replay.job_root = str(rt.root)
        if rt.settings.record_model_io:
            from ..models.model_io import MODEL_IO, RecordingModel

            path = rt.job.path("transcripts") / MODEL_IO
            rt.models[role] = RecordingModel(rt.models[role], role, path, job_root=str(rt.root))
    return rt.models[role]


def build_agent(
    role: str,
    rt: JobRuntime,
    system_prompt: str,
    tools: list[Any] | None = None,
    hooks: list[Any] | None = None,
    *,
    model: Model | None = None,
    policy: ContextPolicy = ENGINEERED,
) -> Agent:
    """Build one agent for this job.

    Args:
        role: Lower-case role name; picks the model spec, transcript file and usage key.
        rt: The job's runtime.
        system_prompt: The rendered prompt (static part, the ``<!-- dynamic -->`` line, then the per-call part).
        tools: The agent's tools.
        hooks: Extra hook providers (e.g. a skill's allowed-tools guard).
        model: A model to use instead of the role's configured one (the ablation's naive brain).
        policy: Which parts of the context policy apply; the product always uses ``ENGINEERED``.
    """
    spec = rt.settings.spec(role)
    if rt.prices is None:
        rt.prices = PriceTable(rt.settings.pricing)
    prices = rt.prices
    if role == "supervisor":
        start_wall_clock(rt)  # running time counts from here: the plan review's wait is not the job's work
    cached = policy.cache and spec.cache and spec.provider in CACHE_POINT_PROVIDERS
    model = model or _model(role, rt)
    if cached:
        specs = [t.tool_spec for t in tools or [] if isinstance(getattr(t, "tool_spec", None), dict)]
        below = static_prefix_note(split_static(system_prompt)[0], specs, spec.model_id)
        if below is not None:  # a point Bedrock would ignore: not sent, and the bill says why
            cached = False
            _withhold_system_point(model)
            rt.ledger.note_cache(role, below)
    if rt.settings.trace:
        start_tracing()  # once per process; the CLI starts it before the job, a service on its first agent
    policy_hooks: list[Any] = [CancelGuard(rt), BudgetGuard(rt), RepeatGuard(), TurnToolCap(rt)]
    if policy.reduce_history and role in REDUCTION:
        note = (lambda: open_items_note(rt)) if role == "supervisor" else None
        policy_hooks.append(HistoryReducer(REDUCTION[role], note))
    return Agent(
        model=model,
        system_prompt=system_prompt_for(system_prompt, cached),
        tools=tools or [],
        name=role,
        callback_handler=None,
        conversation_manager=_conversation_manager(role, rt, policy),
        hooks=[AgentTelemetry(role, rt.job.events, rt.ledger, rt.job.path("transcripts"), prices), *policy_hooks]
        + list(hooks or []),
        tool_executor=SequentialToolExecutor(),
        retry_strategy=agent_retry_strategy(),
        trace_attributes=trace_attributes(role, rt),
    )
