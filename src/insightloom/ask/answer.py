"""Answer a follow-up question about finished jobs: retrieve, select, prompt, answer, validate, remember, record.

The path abstains without calling the model when no fragment passes the relevance threshold. Otherwise one Strands
agent without tools answers from the fragments with the Reporter's model spec (role ``answerer``); the answer is
checked in code (``validate``), retried once with the problems named, and replaced by the abstention sentence when it
is still wrong. With ``analyze`` a bounded follow-up analysis first adds verified numbers to the job
(``ask.analyze``), and the answer can cite them.

The answer is handed to ``on_text`` only once it passed validation (in sentence-sized pieces), so no unverified
number is ever shown, not even for the moment before a retry replaces it.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strands import Agent
from strands.agent.conversation_manager import NullConversationManager
from strands.hooks import AfterModelCallEvent, HookProvider, HookRegistry
from strands.models import Model

from ..agents.factory import CACHE_POINT_PROVIDERS, system_prompt_for
from ..config import Settings
from ..context.budget import split_units
from ..errors import BadInputError, UnsafePathError
from ..fileio import is_regular_file, read_json
from ..jobs import JobFolder
from ..models import make_model
from ..models.retries import agent_retry_strategy
from ..report.render import DOCX_NAME, MARKDOWN_NAME
from ..statistics.parse import UNEXPRESSED, Refusal, parse_question
from ..statistics.request import StatRequest
from ..statistics.wording import describe_request
from ..telemetry.hooks import call_record
from ..telemetry.pricing import PriceTable
from ..telemetry.usage import AgentUsage
from ..validation.jobfiles import load_calculations
from .embeddings import HybridRetriever, make_embedder
from .events import append_ask_events, ask_event, record_ask_usage
from .fragments import LEADING_VALUES, KnowledgeFragment, load_knowledge
from .memory import MemoryStore, Turn, open_memory
from .missing import uncovered_periods
from .prompt import AskPrompt, abstention_sentence, build_prompt, question_language
from .request_tool import RequestState, make_request_tool
from .retrieval import Hit
from .select import conflicts, select_hits
from .stat_answer import (
    Matched,
    computed_block,
    match_request,
    not_computed_sentence,
    parameter_numbers,
    refusal_reason,
    refusal_sentence,
    request_problems,
)
from .validate import check_answer, cited_ids, render_answer, retry_message

if TYPE_CHECKING:
    from .analyze import FollowupResult

logger = logging.getLogger(__name__)

ROLE = "answerer"
#: The Reporter's model answers follow-ups.
SPEC_ROLE = "reporter"
#: Hits at or above this ``Hit.score`` are relevant; below it the path abstains without a model call. Calibrated by
#: ``benchmarks/ask_eval.py`` on the ``calibrate`` half of the labelled question set (the middle of the best-F1
#: plateau: its unanswerables top out at 0.243, its answerables start at 0.387) and reported on the held-out half.
RELEVANCE_THRESHOLD = 0.315
RETRIEVE_K = 20
SELECT_LIMIT = 8
#: Prompt and answer together; the answer's share is ``ANSWER_TOKENS``.
PROMPT_LIMIT_TOKENS = 6000
ANSWER_TOKENS = 1024
HISTORY_TURNS = 20
_TERMINAL_WITH_REPORT = ("completed", "needs_review")


@dataclass
class AskResult:
    """One answered (or abstained) question.

    Attributes:
        question: The question as asked.
        answer: The answer as shown: references printed with their values, or the abstention sentence.
        citations: One entry per fragment the answer cites: ``id`` (as printed), ``fragment_id``, ``job_id``,
            ``source``, ``section``, ``date``, ``calc_ids`` and the ``text`` the model read.
        abstained: Whether the answer is the abstention sentence.
        reason: Why it abstained (``no_relevant_fragments``, ``model_abstained``, ``invalid_answer``), else empty.
        model_calls: Model calls the answer took (0 when nothing was relevant; follow-up analysis excluded).
        retrieval: ``bm25`` or ``hybrid``.
        seconds: Retrieval to answer, follow-up analysis excluded.
        tokens: The answer's model tokens by kind, its estimated ``cost_usd`` and the ``prompt`` size.
        analyzed: Whether a follow-up analysis ran.
        new_calc_ids: Calculations the follow-up analysis merged into the job.
        problems: What validation found in the rejected attempts (empty when the first answer passed).
        request: The statistics request the question was read as (``insightloom.statistics``), or None.
        computed: What was computed, in words ("mean of `Volume`, 2 decimals"), or empty.
    """

    question: str
    answer: str
    citations: list[dict[str, Any]]
    abstained: bool
    reason: str
    model_calls: int
    retrieval: str
    seconds: float
    tokens: dict[str, Any]
    analyzed: bool = False
    new_calc_ids: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    request: dict[str, Any] | None = None
    computed: str = ""


class _UsageMeter(HookProvider):
    """Counts the answerer's model calls and tokens, priced like every agent's."""

    def __init__(self, prices: PriceTable) -> None:
        self.prices = prices
        self.usage = AgentUsage()

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(AfterModelCallEvent, self._after_model_call)

    def _after_model_call(self, event: AfterModelCallEvent) -> None:
        model_id = str(event.agent.model.get_config().get("model_id", ""))
        record = call_record(ROLE, model_id, event, self.prices)
        if record is not None:
            self.usage.add(record.usage())


@dataclass
class _Job:
    root: Path
    id: str


@dataclass
class _Question:
    """One question's running state: its telemetry and what the answer needs."""

    text: str
    jobs: list[_Job]
    ask_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def emit(self, kind: str, **data: Any) -> None:
        self.events.append((kind, data))


def answerable_jobs(job_dirs: Sequence[Path]) -> list[_Job]:
    """The finished jobs among ``job_dirs`` (completed or needs_review, with a report), in order.

    Raises:
        BadInputError: None of them is a finished job with a report.
    """
    jobs: list[_Job] = []
    for job_dir in job_dirs:
        root = Path(job_dir).resolve()
        try:
            status = read_json(root / "job.json", beneath=root)
        except (OSError, ValueError, UnsafePathError):
            logger.warning("skipping %s: it is no job folder", root)
            continue
        has_report = any(is_regular_file(root / name, beneath=root) for name in (DOCX_NAME, MARKDOWN_NAME))
        if status.get("status") in _TERMINAL_WITH_REPORT and has_report:
            jobs.append(_Job(root, JobFolder.open(root).id))  # the id from the folder, checked against job.json
    if not jobs:
        names = ", ".join(str(p) for p in job_dirs) or "none given"
        raise BadInputError(
            f"No finished job with a report to ask about ({names}).",
            "ask about a job whose status is completed or needs_review; run it to the end first.",
        )
    return jobs


def _citation(pid: str, sent: KnowledgeFragment, origin: KnowledgeFragment) -> dict[str, Any]:
    return {
        "id": pid,
        "fragment_id": origin.id,
        "job_id": origin.job_id,
        "source": origin.source,
        "section": origin.section,
        "date": origin.date,
        "calc_ids": list(origin.calc_ids),
        "text": sent.text,
    }


@dataclass
class _Answer:
    text: str
    abstained: bool
    reason: str
    citations: list[dict[str, Any]]
    problems: list[str]
    retried: bool


def _verified(prompt: AskPrompt, knowledge: Sequence[KnowledgeFragment]) -> dict[str, str]:
    """Calculation id -> its value as printed: what the prompt showed first, then the rest of the knowledge."""
    values: dict[str, str] = {}
    for fragment in [*prompt.sent, *knowledge]:
        for calc_id, value in fragment.values.items():
            values.setdefault(calc_id, value)
    return values


def _calc_citations(
    answer: str, prompt: AskPrompt, knowledge: Sequence[KnowledgeFragment]
) -> tuple[dict[str, str], dict[str, tuple[KnowledgeFragment, KnowledgeFragment]]]:
    """For each referenced calculation, the fragment that cites it: a sent one, else the knowledge fragment holding
    it under a fresh prompt id. Returns calc id -> prompt id, and the extra prompt ids' (sent, origin) fragments."""
    from ..calc_refs import calc_ids

    holders = {calc_id: f.id for f in reversed(prompt.sent) for calc_id in f.calc_ids}
    extra: dict[str, tuple[KnowledgeFragment, KnowledgeFragment]] = {}
    used = {*prompt.origin, *prompt.modes}
    next_no = 1 + max((int(pid[1:]) for pid in used if pid[1:].isdigit()), default=0)
    for calc_id in calc_ids(answer):
        if calc_id in holders:
            continue
        holder = next((f for f in knowledge if calc_id in f.calc_ids), None)
        if holder is not None:
            pid = f"F{next_no}"
            next_no += 1
            holders[calc_id] = pid
            extra[pid] = (dataclasses.replace(holder, id=pid), holder)
    return holders, extra


def _accepted(
    text: str,
    prompt: AskPrompt,
    knowledge: Sequence[KnowledgeFragment],
    retried: bool,
    verified: Mapping[str, str] | None = None,
) -> _Answer:
    holders, extra = _calc_citations(text, prompt, knowledge)
    shown = render_answer(text, verified if verified is not None else _verified(prompt, knowledge), holders)
    sent = {f.id: f for f in prompt.sent}
    citations = []
    for pid in cited_ids(shown):
        if pid in sent:
            citations.append(_citation(pid, sent[pid], prompt.origin[pid]))
        elif pid in extra:
            citations.append(_citation(pid, *extra[pid]))
    return _Answer(shown, False, "", citations, [], retried)


#: A question that asks for a figure or a name: a column's description never answers it.
#: Words ending in "est" that are no superlative.
_NOT_SUPERLATIVE = (
    "arrest|chest|contest|crest|digest|earnest|forest|guest|harvest|honest|inquest|interest|invest|lest|"
    "manifest|modest|nest|pest|priest|protest|quest|request|rest|suggest|test|vest|west|zest"
)
FIGURE_ASKED_RE = re.compile(
    r"\b(?:how\s+many|how\s+much|number\s+of|average|mean|total|median|most|least|maximum|minimum|best|worst)\b|"
    rf"\b(?!(?:{_NOT_SUPERLATIVE})\b)[a-z]{{2,}}est\b|"  # any superlative: "hardest water", "wettest month"
    r"몇|얼마|가장|평균|합계|최대|최소|최고|최저|제일",
    re.IGNORECASE,
)


def _describes_only(citations: Sequence[Mapping[str, Any]], answer: str) -> bool:
    """Whether an answer cites only what the data's columns are: column descriptions, or profile lines whose leading
    values it does not name (a profile's leading values are ordered by count, so they may answer "which … the
    most"; a line that lists them for another column answers nothing here)."""

    def description(c: Mapping[str, Any]) -> bool:
        if c.get("source") == "columns":
            return True
        if c.get("source") != "profile":
            return False
        named = [v for line in _LEADING_LINE.findall(c.get("text", "")) for v in line.split(", ")]
        return not any(re.search(rf"(?<!\w){re.escape(v)}(?!\w)", answer) for v in named if v)

    return bool(citations) and all(description(c) for c in citations)


_LEADING_LINE = re.compile(rf"{LEADING_VALUES}: ([^\n]*?)\.?$", re.MULTILINE)


def _is_abstention(text: str, prompt: AskPrompt) -> bool:
    return " ".join(text.split()) == " ".join(prompt.abstention.split())


def _answer(
    agent: Agent,
    prompt: AskPrompt,
    knowledge: Sequence[KnowledgeFragment],
    matched: Matched | None = None,
    calcs: Mapping[str, Mapping[str, Any]] | None = None,
    state: RequestState | None = None,
) -> _Answer:
    """Ask the model, check the answer (and, for a statistics request, that it answers that request: the parsed one,
    or the one the model filled through its ``statistics_request`` tool), retry once with the problems named; the
    abstention when still wrong."""
    text = str(agent(prompt.user)).strip()
    found: list[str] = []
    for attempt in range(2):
        if _is_abstention(text, prompt):
            return _Answer(prompt.abstention, True, "model_abstained", [], found, attempt > 0)
        if matched is None and state is not None and state.matched is not None and state.matched.complete:
            matched, calcs = state.matched, calcs or {str(c["id"]): c for c in state.calcs}
        verified = _verified(prompt, knowledge) | (matched.display if matched else {})
        problems = check_answer(text, prompt.sent, verified, parameter_numbers(matched) if matched else ())
        if matched is not None:
            problems += request_problems(text, matched, calcs or {})
        if not problems:
            accepted = _accepted(text, prompt, knowledge, attempt > 0, verified)
            accepted.problems = found
            return accepted
        found += problems
        logger.info("answer rejected (attempt %d): %s", attempt + 1, "; ".join(problems))
        if attempt == 0:
            text = str(agent(retry_message(problems, prompt.abstention))).strip()
    return _Answer(prompt.abstention, True, "invalid_answer", [], found, True)


def _agent(
    settings: Settings, model: Model | None, prompt: AskPrompt, meter: _UsageMeter, tools: Sequence[Any] = ()
) -> Agent:
    spec = dataclasses.replace(settings.spec(SPEC_ROLE), max_tokens=ANSWER_TOKENS)
    cached = spec.cache and spec.provider in CACHE_POINT_PROVIDERS
    return Agent(
        model=model or make_model(spec, ROLE, settings),
        system_prompt=system_prompt_for(prompt.system, cached),
        tools=list(tools),
        name=ROLE,
        callback_handler=None,
        conversation_manager=NullConversationManager(),
        hooks=[meter],
        retry_strategy=agent_retry_strategy(),
    )


def _stream(text: str, on_text: Callable[[str], None] | None) -> None:
    if on_text is not None:
        for unit in split_units(text):
            on_text(unit)


#: Runs a follow-up analysis on a job folder for a question: here, or on a queue worker (the service's Celery path).
Analyzer = Callable[[Path, str], "FollowupResult"]


def _analyze(q: _Question, settings: Settings, cap_usd: float, analyzer: Analyzer | None) -> list[str]:
    """Run the bounded follow-up analysis on the first job; the verified calculation ids it merged."""
    from .analyze import run_followup

    job = q.jobs[0]
    if analyzer is not None:
        result = analyzer(job.root, q.text)
    else:
        result = run_followup(job.root, q.text, settings=settings, cap_usd=cap_usd)
    q.emit(
        "analyzed",
        new_calc_ids=list(result.new_ids),
        seconds=result.seconds,
        cost_usd=result.cost_usd,
        model_calls=result.model_calls,
        refused=dict(result.refused),
        missing=result.missing,
    )
    return list(result.new_ids)


def _retrieve(
    q: _Question, knowledge: list[KnowledgeFragment], threshold: float, new_ids: list[str], settings: Settings
) -> tuple[str, list[Hit]]:
    """The relevant hits, selected and ordered; hits holding new follow-up calculations always come along.

    Retrieval is hybrid with the configured embedder, and BM25 alone without one or once it fails (the mode returned).
    """
    retriever = HybridRetriever(knowledge, embedder=make_embedder(settings), alpha=settings.ask_alpha)
    hits = retriever.search(q.text, k=RETRIEVE_K)
    relevant = [hit for hit in hits if hit.bm25 >= threshold]  # the calibrated scale, with or without dense scores
    fresh = [f for f in knowledge if set(f.calc_ids) & set(new_ids)]
    seen = {(h.fragment.job_id, h.fragment.id) for h in relevant}
    relevant = [Hit(f, 1.0, 0.0, None) for f in fresh if (f.job_id, f.id) not in seen] + relevant
    q.emit(
        "retrieved",
        mode=retriever.mode,
        hits=len(hits),
        relevant=len(relevant),
        threshold=threshold,
        top_score=round(hits[0].score, 4) if hits else None,
        fragments=[h.fragment.id for h in hits],
    )
    selected = select_hits(q.text, relevant, limit=SELECT_LIMIT) if relevant else []
    q.emit("reranked", kept=[h.fragment.id for h in selected], conflicts=len(conflicts(selected)))
    return retriever.mode, selected


def _memory(settings: Settings, session: str | None, memory: MemoryStore | None) -> MemoryStore | None:
    if session is None:
        return None
    return memory if memory is not None else open_memory(settings.artifacts)


def _record(q: _Question, usage: AgentUsage, retrieval: str, abstained: bool) -> None:
    """The question's stages into every job's ask_events.jsonl; its usage into the first job's usage.json."""
    for job in q.jobs:
        lines = [ask_event(job.id, q.ask_id, seq, kind, **data) for seq, (kind, data) in enumerate(q.events, 1)]
        append_ask_events(job.root, lines)
    record_ask_usage(q.jobs[0].root, usage, retrieval=retrieval, abstained=abstained)


def _tokens(usage: AgentUsage, prompt_tokens: int) -> dict[str, Any]:
    data: dict[str, Any] = dataclasses.asdict(usage)
    data.pop("calls")
    data["cost_usd"] = round(usage.cost_usd, 6)
    data["prompt"] = prompt_tokens
    return data


def _read_profile(job_root: Path) -> dict[str, Any] | None:
    try:
        return dict(read_json(job_root / "cache" / "profile.json", beneath=job_root))
    except (OSError, ValueError, UnsafePathError):
        return None


def stat_request(job_root: Path, question: str) -> StatRequest | Refusal | None:
    """The statistics request ``question`` makes over the job's data profile (None: it asks for no statistic)."""
    profile = _read_profile(job_root)
    return parse_question(question, profile) if profile is not None else None


def _request_json(asked: StatRequest | Refusal) -> dict[str, Any]:
    if isinstance(asked, StatRequest):
        return asked.to_json() | {"computed": describe_request(asked)}
    return {"refused": asked.kind, "reason": asked.reason, "named": list(asked.named),
            "candidates": list(asked.candidates)}  # fmt: skip


@dataclass
class _Facts:
    """The first job's profile, calculations and verified values as printed: read once per question, the
    calculations after any follow-up merged its numbers."""

    profile: dict[str, Any] | None
    calcs: list[dict[str, Any]]
    verified: dict[str, str]

    @classmethod
    def read(cls, job: _Job, profile: dict[str, Any] | None, knowledge: Sequence[KnowledgeFragment]) -> _Facts:
        verified = {calc_id: v for f in knowledge if f.job_id == job.id for calc_id, v in f.values.items()}
        return cls(profile, load_calculations(job.root), verified)

    def match(self, request: StatRequest) -> Matched:
        return match_request(request, self.calcs, self.verified)


def _request_tool(facts: _Facts) -> tuple[RequestState, list[Any]]:
    """The ``statistics_request`` tool over the first job (a model that reads a statistic the parser could not
    fills the same request), and the state it leaves: the request and its matched calculations."""
    state = RequestState(calcs=facts.calcs)
    if facts.profile is None:
        return state, []
    return state, [make_request_tool(facts.profile, facts.match, state)]


def _strict(request: StatRequest) -> bool:
    """Whether retrieval cannot answer the request as asked: it sets decimals, or asks a yes/no or a name."""
    return request.decimals is not None or request.form != "value"


def _stat_prompt(
    text: str,
    matched: Matched,
    knowledge: Sequence[KnowledgeFragment],
    history: list[Turn],
    language: str,
    profile: dict[str, Any] | None,
) -> AskPrompt:
    """The prompt of a statistics answer: the fragments holding its calculations, and the computed sentences."""
    hits = [Hit(f, 1.0, 0.0, None) for f in knowledge if set(f.calc_ids) & set(matched.calcs)]
    hits = sorted(hits, key=lambda h: (h.fragment.source != "calculation", h.fragment.id))[:SELECT_LIMIT]
    prompt = build_prompt(text, hits, history, language=language, limit_tokens=PROMPT_LIMIT_TOKENS,
                          answer_reserve=ANSWER_TOKENS, profile=profile)  # fmt: skip
    return dataclasses.replace(prompt, user=prompt.user + "\n" + computed_block(matched))


def ask(
    job_dirs: list[Path],
    question: str,
    *,
    settings: Settings,
    user: str = "local",
    session: str | None = None,
    memory: MemoryStore | None = None,
    analyze: bool = False,
    on_text: Callable[[str], None] | None = None,
    threshold: float = RELEVANCE_THRESHOLD,
    model: Model | None = None,
    cap_usd: float | None = None,
    analyzer: Analyzer | None = None,
) -> AskResult:
    """Answer ``question`` from the finished jobs in ``job_dirs``, with cited, verified numbers or an abstention.

    Args:
        job_dirs: Job folders; only finished ones with a report are read.
        question: The question, in English or Korean.
        settings: Resolved settings: the Reporter's model spec answers, priced by ``settings.pricing``.
        user: Whose conversation memory this is.
        session: The conversation's name; None asks without memory.
        memory: The conversation store; by default the SQLite file under the artifacts folder.
        analyze: Run a bounded follow-up analysis for numbers no fragment holds (on the first job).
        on_text: Receives the answer as it is shown, piece by piece, once it passed validation.
        threshold: The relevance a hit's score needs for the model to be called at all.
        model: A model to answer with instead of the Reporter's (tests, evaluation).
        cap_usd: The follow-up analysis's cost cap (``ask.analyze`` default when None).
        analyzer: Runs the follow-up analysis instead of this process (a service queues it to a worker).

    Raises:
        BadInputError: The question is empty, or no job folder is a finished job with a report.
    """
    text = question.strip()
    if not text:
        raise BadInputError("The question is empty.", 'ask a question, e.g. "what was total revenue?".')
    q = _Question(text, answerable_jobs(job_dirs))
    profile = _read_profile(q.jobs[0].root)
    asked = parse_question(text, profile) if profile is not None else None
    if asked is not None:
        q.emit("requested", request=_request_json(asked))
    new_ids: list[str] = []
    refused = isinstance(asked, Refusal) and asked.kind != UNEXPRESSED
    # A year the data do not cover: any figure would answer another period's question.
    uncovered = bool(uncovered_periods(text, profile)) if profile is not None else False
    if analyze and not refused and not uncovered:
        from .analyze import DEFAULT_CAP_USD

        new_ids = _analyze(q, settings, DEFAULT_CAP_USD if cap_usd is None else cap_usd, analyzer)
    started = time.perf_counter()
    knowledge = [fragment for job in q.jobs for fragment in load_knowledge(job.root)]
    store = _memory(settings, session, memory)
    history: list[Turn] = store.turns(user, session, query=text, limit=HISTORY_TURNS) if store and session else []
    meter = _UsageMeter(PriceTable(settings.pricing))
    language = question_language(text)
    facts = _Facts.read(q.jobs[0], profile, knowledge)
    matched = facts.match(asked) if isinstance(asked, StatRequest) else None
    retrieval, prompt, calcs = "basis", None, {}
    if uncovered:
        result = _Answer(abstention_sentence(text, language, profile), True, "period_not_covered", [], [], False)
    elif analyze and isinstance(asked, Refusal) and (refused or not new_ids):
        # nothing computed: say what the catalog lacks rather than let a nearby fragment answer
        result = _Answer(refusal_sentence(refusal_reason(asked, language), language), True, "unsupported", [], [],
                         False)  # fmt: skip
    elif matched is not None and matched.complete:
        calcs = {str(c["id"]): c for c in facts.calcs}
        prompt = _stat_prompt(text, matched, knowledge, history, language, profile)
        result = _answer(_agent(settings, model, prompt, meter), prompt, knowledge, matched, calcs)
    elif matched is not None and (analyze or _strict(matched.request)):
        # never a nearby number in its place: a verified number of another question is a wrong answer
        result = _Answer(not_computed_sentence(matched, language, analyze=analyze), True, "not_computed", [], [],
                         False)  # fmt: skip
    else:
        retrieval, selected = _retrieve(q, knowledge, threshold, new_ids, settings)
        prompt = (
            build_prompt(
                text,
                selected,
                history,
                language=language,
                limit_tokens=PROMPT_LIMIT_TOKENS,
                answer_reserve=ANSWER_TOKENS,
                profile=profile,
            )
            if selected
            else None
        )
        if prompt is None or not prompt.sent:  # nothing relevant: the model is not called
            result = _Answer(abstention_sentence(text, profile=profile), True, "no_relevant_fragments", [], [], False)
        else:
            state, tools = _request_tool(facts)
            result = _answer(_agent(settings, model, prompt, meter, tools), prompt, knowledge, state=state)
            if state.request is not None:
                asked = state.request  # the request the model filled is the question's record
            elif (
                not result.abstained and _describes_only(result.citations, result.text) and FIGURE_ASKED_RE.search(text)
            ):
                # "which star is the hottest?" answered with the star column's description answers nothing
                result = _Answer(abstention_sentence(text, language, profile), True, "no_figure", [], [], False)
        if result.abstained and matched is not None:  # name the values the jobs lack, not the question's words
            result.text = not_computed_sentence(matched, language, analyze=False)
    seconds = round(time.perf_counter() - started, 4)
    calls = meter.usage.calls
    if result.abstained:
        q.emit("abstained", reason=result.reason, model_calls=calls, problems=result.problems)
    else:
        cited = [c["id"] for c in result.citations]
        q.emit("answered", citations=cited, model_calls=calls, retried=result.retried, seconds=seconds)
    if store is not None and session is not None:
        store.add(user, session, "user", text)
        store.add(user, session, "assistant", result.text)
    _record(q, meter.usage, retrieval, result.abstained)
    _stream(result.text, on_text)
    return AskResult(
        question=text,
        answer=result.text,
        citations=result.citations,
        abstained=result.abstained,
        reason=result.reason,
        model_calls=calls,
        retrieval=retrieval,
        seconds=seconds,
        tokens=_tokens(meter.usage, prompt.tokens if prompt else 0),
        analyzed=analyze,
        new_calc_ids=new_ids,
        problems=result.problems,
        request=_request_json(asked) if isinstance(asked, StatRequest) else None,
        computed=describe_request(asked) if isinstance(asked, StatRequest) else "",
    )
