"""The follow-up prompt: role, fidelity rules, citation format, fragments, history and the question, in that order.

It is packed with the product's ``TokenBudget`` as it is: the system prompt, the question and the frame around the
fragments are fixed (the answer's reserve is taken off the limit first), conversation turns are ``history`` and the
fragments are ``documents``, compressed first. A fragment is sent whole, compressed by whole sentences (first to the
sentences that share words with the question, then by the budget's own rule) or dropped: never cut.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..context.budget import Fragment, Packing, TokenBudget, split_units
from ..context.tokens import count_tokens
from ..errors import ConfigError
from ..report.render import is_korean
from .missing import missing_data
from .retrieval import tokenize

if TYPE_CHECKING:
    from .fragments import KnowledgeFragment
    from .memory import Turn
    from .retrieval import Hit

#: The fixed abstention sentences; ``{needed}`` names the data that would answer the question.
ABSTAIN: dict[str, str] = {
    "en": "The analysis results do not hold the information to answer this question; it would need data on {needed}.",
    "ko": "분석 결과에는 이 질문에 답할 정보가 없습니다. 답하려면 {needed}에 대한 데이터가 필요합니다.",
}
#: The sentence when the data hold everything the question names, but the results no verified figure for it.
NOT_HELD: dict[str, str] = {
    "en": "The analysis results hold no verified figure that answers this question about {columns}; a follow-up "
    "analysis (insightloom ask --analyze) can compute it.",
    "ko": "분석 결과에는 {columns}에 대한 이 질문의 답이 되는 검증된 수치가 없습니다. 후속 분석(insightloom ask "
    "--analyze)으로 계산할 수 있습니다.",
}
_LANGUAGE_NAMES = {"en": "English", "ko": "Korean (한국어)"}

SYSTEM_TEMPLATE = """# Role and scope
You answer follow-up questions about finished data-analysis jobs. Everything you know about the jobs is in the
fragments of the user's message: verified results, calculations, report paragraphs, chart captions, column
definitions and the data profile. You do not run analyses and you know nothing else about the data.

# Fidelity rules
- Use only the facts in the fragments. No outside knowledge, no estimates, no arithmetic of your own.
- Copy every number exactly as a fragment prints it (a value followed by [calc:ID] is a verified calculation: copy it
  with or without the tag, or write {{{{calc:ID}}}} instead). Never type a number that is not in a fragment you cite.
- When fragments disagree (the same calculation with different values, or an older and a newer job), say so and give
  each value with its fragment's date.
- A <computed> block, when given, holds the verified answer to the statistics request the question was read as:
  answer with its sentences, keeping each {{{{calc:ID}}}} as written and its Yes/No first. When the question asks
  for a statistic and there is no <computed> block, call the statistics_request tool (if you have it) with the
  request filled in, and answer with the sentences it returns.
- When the fragments are not enough to answer, answer exactly this sentence and nothing else:
<abstention>{abstention}</abstention>

# Output and citation format
- Answer in {language_name}, in a few short sentences.
- End each sentence that uses a fragment with the fragment's id in square brackets, such as [F3]; cite only ids of
  fragments you were given."""


@dataclass
class AskPrompt:
    """The prompt as it will be sent, and what became of each retrieved fragment.

    Attributes:
        system: Role and scope, fidelity rules (with the abstention sentence), output and citation format.
        user: The fragments, the conversation so far and the question, last.
        sent: The fragments in the prompt, in prompt order, with their prompt id and the text as sent.
        modes: Prompt id -> ``whole``, ``compressed`` or ``dropped``, for every hit given.
        origin: Prompt id -> the fragment as retrieved (ids are renumbered only when two jobs share one).
        abstention: The abstention sentence for this question.
        tokens: Tokens of ``system`` and ``user`` together (the answer's reserve is on top).
    """

    system: str
    user: str
    sent: list[KnowledgeFragment]
    modes: dict[str, str]
    origin: dict[str, KnowledgeFragment] = field(default_factory=dict)
    abstention: str = ""
    tokens: int = 0


def question_language(question: str) -> str:
    """``ko`` when the question holds Hangul, else ``en``."""
    return "ko" if is_korean(question) else "en"


def abstention_sentence(question: str, language: str | None = None, profile: Mapping[str, Any] | None = None) -> str:
    """The fixed abstention sentence in the question's language (or ``language``).

    With the job's data ``profile`` it names what the data lack (``ask.missing``): a column, value or period the
    question names and the data do not hold, or, when the data hold all of it, the columns that no verified figure
    answers yet. Without one, the question's key words.
    """
    lang = language if language in ABSTAIN else question_language(question)
    missing = missing_data(question, profile)
    if missing.data_present:
        return NOT_HELD[lang].format(columns=", ".join(f"`{c}`" for c in missing.columns))
    return ABSTAIN[lang].format(needed=missing.needed(lang) or question.strip())


def _attr(value: str) -> str:
    return '"' + " ".join(str(value).replace('"', "'").split()) + '"'


def fragment_open(fragment: KnowledgeFragment) -> str:
    """The opening tag of a fragment: id and metadata."""
    meta = " ".join(f"{key}={_attr(getattr(fragment, key))}" for key in ("id", "source", "section", "date"))
    return f"<fragment {meta} job={_attr(fragment.job_id)}>"


def _body(text: str) -> str:
    # A fragment's text may not close its own tag early.
    return text.replace("</fragment", "</ fragment")


def fragment_block(fragment: KnowledgeFragment, text: str | None = None) -> str:
    """A fragment in its tags, with ``text`` instead of its own when given (a compressed form)."""
    return f"{fragment_open(fragment)}{_body(fragment.text if text is None else text)}</fragment>"


def focus_sentences(text: str, question: str) -> str:
    """The sentences of ``text`` that share a word with the question, whole and in their order (``text`` when none
    does, so the budget's own rule decides)."""
    terms = set(tokenize(question))
    units = split_units(text)
    kept = [unit for unit in units if terms & set(tokenize(unit))]
    return "".join(kept).rstrip() if kept and len(kept) < len(units) else text


def _prompt_ids(hits: Sequence[Hit]) -> list[KnowledgeFragment]:
    """The hits' fragments, renumbered F1... in order only when two of them share an id (two jobs' F1)."""
    fragments = [hit.fragment for hit in hits]
    if len({f.id for f in fragments}) == len(fragments):
        return fragments
    return [dataclasses.replace(f, id=f"F{i}") for i, f in enumerate(fragments, start=1)]


def _turn_text(turn: Turn) -> str:
    return f"{'User' if turn.role == 'user' else 'Assistant'}: {turn.text.strip()}"


@dataclass
class _Parts:
    system: str
    question: str
    fragments: list[KnowledgeFragment]
    bodies: dict[str, str]
    order: list[str]  # prompt ids, most relevant first: the budget compresses the last first
    history: list[str]


def _pack(parts: _Parts, limit: int) -> Packing:
    headings = Fragment("# Fragments\n\n# Conversation so far\n", "tools", "frame")  # fixed; tags are repacked
    pieces = [Fragment(parts.system, "system", "system"), Fragment(parts.question, "system", "question"), headings]
    pieces += [Fragment(text, "history", f"turn{i}") for i, text in enumerate(parts.history)]
    pieces += [Fragment(parts.bodies[fid], "documents", fid) for fid in parts.order]
    return TokenBudget(limit).pack(pieces)


def _assemble(parts: _Parts, packing: Packing) -> tuple[str, list[KnowledgeFragment]]:
    kept = {item.fragment.id: item.text for item in packing.items if item.text}
    sent = [dataclasses.replace(f, text=kept[f.id]) for f in parts.fragments if f.id in kept]
    sections = []
    if sent:
        sections.append("# Fragments\n" + "\n".join(fragment_block(f) for f in sent))
    turns = [kept[f"turn{i}"] for i in range(len(parts.history)) if f"turn{i}" in kept]
    if turns:
        sections.append("# Conversation so far\n" + "\n".join(turns))
    sections.append(parts.question)
    return "\n\n".join(sections), sent


def build_prompt(
    question: str,
    hits: Sequence[Hit],
    history: Sequence[Turn],
    *,
    language: str,
    limit_tokens: int,
    answer_reserve: int,
    profile: Mapping[str, Any] | None = None,
) -> AskPrompt:
    """The prompt for ``question`` over ``hits`` (in the order they are to be read) and the conversation so far.

    Args:
        question: The user's question; it comes last.
        hits: The selected hits, in prompt order (``select_hits``'s lost-in-the-middle order).
        history: Earlier turns of the session, chronological.
        language: ``en`` or ``ko``: the answer's language and the abstention sentence's.
        limit_tokens: The most tokens the prompt and the answer together may take.
        answer_reserve: Tokens kept free for the answer.
        profile: The first job's data profile: the abstention sentence then names what the data lack.

    Raises:
        ConfigError: The system prompt and the question alone are over the budget.
    """
    lang = language if language in ABSTAIN else "en"
    abstention = abstention_sentence(question, lang, profile)
    system = SYSTEM_TEMPLATE.format(abstention=abstention, language_name=_LANGUAGE_NAMES[lang])
    fragments = _prompt_ids(hits)
    scores = {f.id: hit.score for f, hit in zip(fragments, hits, strict=True)}
    order = sorted(scores, key=lambda fid: -scores[fid])  # stable: ties keep prompt order
    parts = _Parts(
        system=system,
        question=f"# Question\n<question>{question.strip()}</question>",
        fragments=fragments,
        bodies={f.id: f.text for f in fragments},
        order=order,
        history=[_turn_text(turn) for turn in history],
    )
    limit = limit_tokens - answer_reserve
    if limit < 0:
        raise ConfigError(
            f"The answer's reserve ({answer_reserve} tokens) is over the {limit_tokens}-token prompt limit.",
            "raise the limit or lower the reserve.",
        )
    packing = _pack(parts, limit)
    squeezed = [fid for fid in order if packing.mode(fid) != "whole"]
    if squeezed:  # query-aware first: keep the sentences that speak to the question, then let the budget decide
        parts.bodies.update({fid: focus_sentences(parts.bodies[fid], question) for fid in squeezed})
        packing = _pack(parts, limit)
    user, sent = _fit(parts, packing, limit)
    texts = {f.id: f.text for f in sent}
    return AskPrompt(
        system=system,
        user=user,
        sent=sent,
        modes={f.id: _mode(f.text, texts.get(f.id)) for f in fragments},
        origin={f.id: hit.fragment for f, hit in zip(fragments, hits, strict=True)},
        abstention=abstention,
        tokens=count_tokens(system) + count_tokens(user),
    )


def _fit(parts: _Parts, packing: Packing, limit: int) -> tuple[str, list[KnowledgeFragment]]:
    """The assembled user message within ``limit`` with the system prompt.

    The budget counts the bodies, not the tags around them (so a tag is never compressed away), so the assembled
    text may count a little more: the budget is lowered by the excess and the parts packed again until it fits.
    """
    user, sent = _assemble(parts, packing)
    budget = limit
    while (over := count_tokens(parts.system) + count_tokens(user) - limit) > 0:
        budget -= over
        try:
            packing = _pack(parts, budget)
        except ConfigError:  # not even the tags fit beside the fixed parts: send the question alone
            user, sent = parts.question, []
            if count_tokens(parts.system) + count_tokens(user) > limit:
                raise
            break
        user, sent = _assemble(parts, packing)
    return user, sent


def _mode(original: str, sent: str | None) -> str:
    if sent is None:
        return "dropped"
    return "whole" if sent == original else "compressed"
