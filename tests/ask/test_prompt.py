"""The follow-up prompt: its sections in order, its budget never exceeded and no fragment ever cut mid-sentence."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from insightloom.ask.fragments import KnowledgeFragment
from insightloom.ask.memory import Turn
from insightloom.ask.prompt import ABSTAIN, abstention_sentence, build_prompt, question_language
from insightloom.ask.retrieval import Hit
from insightloom.context.budget import split_units
from insightloom.context.tokens import count_tokens
from insightloom.errors import ConfigError

_BLOCK_RE = re.compile(
    r'<fragment id="(F\d+)" source="[^"]*" section="[^"]*" date="[^"]*" job="[^"]*">(.*?)</fragment>', re.S
)


def hit(fid: str, text: str, score: float = 0.5, job: str = "job-a") -> Hit:
    fragment = KnowledgeFragment(fid, text, job, "results", f"Section {fid}", date="2025-01-02T00:00:00Z")
    return Hit(fragment, score, score)


def turn(role: str, text: str) -> Turn:
    return Turn(role, text, 0.0, 0.0, 0.5)  # type: ignore[arg-type]


def units(text: str) -> list[str]:
    return [u.strip() for u in split_units(text) if u.strip()]


def is_whole_sentences(sent: str, original: str) -> bool:
    """``sent`` is a subsequence of ``original``'s sentences, each whole, in order."""
    pool = iter(units(original))
    return all(any(unit == candidate for candidate in pool) for unit in units(sent))


def test_sections_come_in_order_with_the_question_last() -> None:
    hits = [hit("F1", "Total revenue is 1,234 KRW."), hit("F2", "West leads.")]
    prompt = build_prompt(
        "What was revenue?",
        hits,
        [turn("user", "Hi"), turn("assistant", "Hello")],
        language="en",
        limit_tokens=4000,
        answer_reserve=500,
    )
    order = ["# Role and scope", "# Fidelity rules", "# Output and citation format"]
    assert [prompt.system.index(h) for h in order] == sorted(prompt.system.index(h) for h in order)
    assert f"<abstention>{prompt.abstention}</abstention>" in prompt.system and "[F3]" in prompt.system
    positions = [prompt.user.index(h) for h in ("# Fragments", "# Conversation so far", "# Question")]
    assert positions == sorted(positions)
    assert prompt.user.rstrip().endswith("<question>What was revenue?</question>")
    assert [m.group(1) for m in _BLOCK_RE.finditer(prompt.user)] == ["F1", "F2"]
    assert prompt.modes == {"F1": "whole", "F2": "whole"}
    assert "User: Hi" in prompt.user and "Assistant: Hello" in prompt.user


def test_a_fragment_over_budget_keeps_the_sentences_that_answer_the_question() -> None:
    filler = " ".join(f"Store {name} sold many loaves of bread." for name in ("alpha", "beta", "gamma", "delta") * 12)
    text = f"{filler} Revenue in March was 9,876 KRW. {filler}"
    prompt = build_prompt(
        "What was revenue in March?", [hit("F1", text)], [], language="en", limit_tokens=900, answer_reserve=100
    )
    assert prompt.modes["F1"] == "compressed"
    (sent,) = prompt.sent
    assert "Revenue in March was 9,876 KRW." in sent.text and is_whole_sentences(sent.text, text)


def test_two_jobs_sharing_an_id_are_renumbered_and_keep_their_origin() -> None:
    prompt = build_prompt(
        "revenue?",
        [hit("F1", "Revenue A.", job="a"), hit("F1", "Revenue B.", job="b")],
        [],
        language="en",
        limit_tokens=4000,
        answer_reserve=100,
    )
    assert [f.id for f in prompt.sent] == ["F1", "F2"]
    assert prompt.origin["F2"].job_id == "b" and prompt.origin["F2"].id == "F1"


def test_the_abstention_sentence_follows_the_question_language() -> None:
    assert question_language("광고비 대비 전환이 가장 좋은 채널은?") == "ko"
    korean = abstention_sentence("광고비 대비 전환이 가장 좋은 채널은?")
    assert korean.startswith(ABSTAIN["ko"].split("{needed}")[0]) and "광고비" in korean
    english = abstention_sentence("What was the weather on Mars?")
    assert english == ABSTAIN["en"].format(needed="weather, mars")


def test_fixed_parts_over_the_limit_are_refused() -> None:
    with pytest.raises(ConfigError):
        build_prompt("revenue?", [hit("F1", "Revenue.")], [], language="en", limit_tokens=300, answer_reserve=250)


EN = ["Revenue grew 12.5% in March.", "West leads with 1,234 KRW!", "Is East behind?", "Margins held steady."]
KO = ["서쪽 매출은 1,234원입니다.", "광고비 대비 전환이 가장 좋습니다!", "동쪽은 뒤처졌나요?", "이익률은 안정적이었다."]
ZH = ["三月收入增长了百分之十。", "西区领先！", "东区落后了吗？", "利润率保持稳定。"]
SENTENCE = st.sampled_from(EN + KO + ZH)
FRAGMENT_TEXT = st.lists(SENTENCE, min_size=1, max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(FRAGMENT_TEXT, min_size=1, max_size=8),
    turns=st.lists(FRAGMENT_TEXT, max_size=4),
    question=st.sampled_from(["What was revenue in March?", "서쪽 매출은?", "西区收入是多少？"]),
    limit=st.integers(min_value=650, max_value=2500),
    reserve=st.integers(min_value=0, max_value=200),
)
def test_budget_is_never_exceeded_and_no_fragment_is_cut(
    texts: list[str], turns: list[str], question: str, limit: int, reserve: int
) -> None:
    hits = [hit(f"F{i}", text, score=1 / i) for i, text in enumerate(texts, start=1)]
    history = [turn("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(turns)]
    prompt = build_prompt(
        question, hits, history, language=question_language(question), limit_tokens=limit, answer_reserve=reserve
    )
    assert count_tokens(prompt.system) + count_tokens(prompt.user) + reserve <= limit
    assert prompt.tokens + reserve <= limit
    originals = {h.fragment.id: h.fragment.text for h in hits}
    blocks = {m.group(1): m.group(2) for m in _BLOCK_RE.finditer(prompt.user)}
    assert blocks == {f.id: f.text for f in prompt.sent}
    for fid, sent in blocks.items():
        assert sent and is_whole_sentences(sent, originals[fid])
        assert prompt.modes[fid] == ("whole" if sent == originals[fid] else "compressed")
    assert {fid for fid, mode in prompt.modes.items() if mode == "dropped"} == set(originals) - set(blocks)
