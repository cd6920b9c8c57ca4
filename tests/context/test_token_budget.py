"""TokenBudget never overflows and never cuts a sentence, on English, Spanish, Korean, Chinese, code and CSV."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from insightloom.context.budget import Fragment, TokenBudget, compress_text, split_units
from insightloom.context.tokens import count_tokens
from insightloom.errors import ConfigError

ENGLISH = [
    "Revenue grew 12% in December.",
    "The West region kept growing through the year!",
    "Is the outlier a data error?",
    "Catering orders are rare but large.",
]
SPANISH = ["Las ventas subieron un 12% en diciembre.", "¿Dónde está el pico?", "¡La región Oeste creció mucho!"]
KOREAN = ["매출은 12월에 12% 증가했습니다.", "서부 지역은 일 년 내내 성장했습니다.", "이상치는 데이터 오류입니까?"]
CHINESE = ["十二月的收入增长了百分之十二。", "西部地区全年持续增长！", "这个异常值是数据错误吗？"]
CODE = [
    "def total(df):\n",
    "    return df['Revenue'].sum()\n",
    "print(total(load_df()))\n",
    "x = [i * 2 for i in range(10)]\n",
]
CSV = ["Date,Region,Revenue\n", "2024-01-01,West,1200\n", "2024-01-02,East,830.5\n", '2024-01-03,"North, Old",77\n']

UNIT_POOLS = {"en": ENGLISH, "es": SPANISH, "ko": KOREAN, "zh": CHINESE, "code": CODE, "csv": CSV}


@st.composite
def texts(draw: st.DrawFn) -> str:
    """Text of one kind made of its sentences (or lines), with random words mixed in to vary the lengths."""
    pool = UNIT_POOLS[draw(st.sampled_from(sorted(UNIT_POOLS)))]
    units = draw(st.lists(st.sampled_from(pool), min_size=0, max_size=12))
    noise = draw(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30))
    separator = "" if pool in (CODE, CSV, CHINESE) else " "
    return separator.join(units) + (noise if draw(st.booleans()) else "")


@st.composite
def fragments(draw: st.DrawFn) -> list[Fragment]:
    regions = st.sampled_from(["system", "tools", "clues", "history", "documents", "documents"])
    return [Fragment(draw(texts()), draw(regions), f"F{i}") for i in range(draw(st.integers(0, 8)))]


def is_sentence_subsequence(kept: str, original: str) -> bool:
    """``kept`` is whole units of ``original``, in their original order (whitespace at the end aside)."""
    units = split_units(original)
    position = 0
    rest = kept
    while rest:
        for index in range(position, len(units)):
            unit = units[index]
            if rest.startswith(unit) or rest == unit.rstrip():
                rest = rest[len(unit) :] if rest.startswith(unit) else ""
                position = index + 1
                break
        else:
            return False
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragments(), st.integers(0, 400))
def test_budget_is_never_exceeded_and_sentences_stay_whole(frags: list[Fragment], limit: int) -> None:
    budget = TokenBudget(limit)
    fixed = "\n\n".join(f.text for f in frags if f.region in ("system", "tools") and f.text)
    if count_tokens(fixed) > limit:
        with pytest.raises(ConfigError, match="budget"):
            budget.pack(frags)
        return
    packing = budget.pack(frags)
    assert packing.used <= limit
    assert count_tokens(packing.text) <= limit
    for item in packing.items:
        original = item.fragment.text
        if item.fragment.region in ("system", "tools"):
            assert item.mode == "whole" and item.text == original
        if item.mode == "whole":
            assert item.text == original
        elif item.mode == "dropped":
            assert item.text == ""
        else:
            assert item.text and item.text != original
            assert is_sentence_subsequence(item.text, original), (item.text, original)


@settings(max_examples=150, deadline=None)
@given(texts(), st.integers(0, 120))
def test_compress_text_keeps_whole_sentences_in_order(text: str, limit: int) -> None:
    kept = compress_text(text, limit)
    assert count_tokens(kept) <= limit
    assert kept == text or is_sentence_subsequence(kept, text)


def test_units_cover_the_text_exactly_for_each_kind() -> None:
    for pool in UNIT_POOLS.values():
        text = "".join(pool)
        assert "".join(split_units(text)) == text
    assert split_units("今天很好。我们走吧！") == ["今天很好。", "我们走吧！"]
    assert split_units("¿Dónde? ¡Aquí! Fin.") == ["¿Dónde? ", "¡Aquí! ", "Fin."]
    assert split_units("It is 3.5 units. Next.") == ["It is 3.5 units. ", "Next."]
    assert split_units("a,b\n1,2\n") == ["a,b\n", "1,2\n"]


def test_documents_are_compressed_before_history_and_the_last_document_first() -> None:
    history = Fragment(" ".join(ENGLISH), "history", "history")
    first = Fragment(" ".join(SPANISH), "documents", "doc1")
    last = Fragment(" ".join(KOREAN), "documents", "doc2")
    system = Fragment("You are an analyst.", "system", "system")
    frags = [system, history, first, last]
    whole = count_tokens("\n\n".join(f.text for f in frags))
    packing = TokenBudget(whole - 5).pack(frags)
    assert packing.mode("doc2") == "compressed" and packing.mode("doc1") == "whole"
    assert packing.mode("history") == "whole" and packing.mode("system") == "whole"
    tight = TokenBudget(count_tokens(system.text) + count_tokens(history.text) + 2).pack(frags)
    assert tight.mode("doc1") == "dropped" and tight.mode("doc2") == "dropped"
    assert tight.mode("history") == "whole"


def test_oldest_history_is_compressed_first() -> None:
    old = Fragment(" ".join(ENGLISH), "clues", "old")
    new = Fragment(" ".join(ENGLISH[::-1]), "clues", "new")
    packing = TokenBudget(count_tokens(old.text) + count_tokens(new.text) - 4).pack([old, new])
    assert packing.mode("old") == "compressed" and packing.mode("new") == "whole"
