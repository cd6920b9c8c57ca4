"""Retrieval: English and Korean tokens, scores comparable across queries, no zero-score hits, hybrid fusion."""

from __future__ import annotations

import pytest

from insightloom.ask.fragments import KnowledgeFragment
from insightloom.ask.retrieval import Retriever, tokenize


def fragment(fid: str, text: str, job: str = "job-a") -> KnowledgeFragment:
    return KnowledgeFragment(id=fid, text=text, job_id=job, source="results", section="s", date="2025-01-01T00:00:00Z")


CORPUS = [
    fragment("F1", "Total revenue is 1,234 KRW [calc:total_revenue]; the West region leads."),
    fragment("F2", "매체별 광고비용 대비 전환수는 쿠빵이 가장 높습니다."),
    fragment("F3", "The Pearson correlation between amount and quantity is moderate."),
    fragment("F4", "카테고리별 매출액은 간편식이 가장 큽니다."),
]


def test_tokenize_english_words_and_korean_bigrams() -> None:
    assert tokenize("What was the Revenue in March?") == ["revenu", "march"]
    assert tokenize("매출액은 얼마?") == ["매출", "출액"]
    assert tokenize("CTR 광고비") == ["ctr", "광고", "고비"]
    assert tokenize("") == [] and tokenize("the of and") == []


def test_korean_particles_endings_and_question_words_are_left_out() -> None:
    assert tokenize("Amount 합계는 얼마인가요?") == ["amount", "합계"]
    assert tokenize("성별로 보면 누가 더 많이 구매했나요?") == ["성별", "구매"]
    assert tokenize("데이터의 행 수는 몇 개인가요?") == ["데이", "이터", "행", "수"]
    assert tokenize("Amount와 Qty의 상관계수") == ["amount", "qty", "상관", "관계", "계수"]
    # A syllable is a particle only after the right kind of syllable: the "가" of "단가" (unit price) stays.
    assert tokenize("회사가 단가를") == ["회사", "단가"]
    assert tokenize("무엇인가요? 어떤가요? 언제인가요?") == []


def test_english_words_lose_plural_and_inflection_endings() -> None:
    assert tokenize("regions categories correlated correlation monthly status") == [
        "region",
        "category",
        "correlat",
        "correlat",
        "month",
        "status",
    ]
    hits = Retriever(CORPUS).search("How are amounts and quantities correlated?")
    assert hits and hits[0].fragment.id == "F3"


def test_numbers_are_whole_tokens() -> None:
    assert tokenize("10월 매출 10,000,000,000 KRW, 10.3%") == ["10", "월", "매출", "10,000,000,000", "krw", "10.3"]
    corpus = [fragment("F1", "Explained variance is 10.3% [calc:r2]; advertising cost is 10,000,000,000 KRW.")]
    assert Retriever(corpus).search("10월") == []


def test_korean_and_english_questions_score_alike() -> None:
    corpus = [
        *CORPUS,
        fragment("F5", "Total Amount is 16,431,923 KRW [calc:amount_total]."),
        fragment("F6", "Amount의 합계는 16,431,923 KRW [calc:amount_total]입니다."),
        fragment("F7", "Qty의 합계는 2,788 [calc:qty_total]입니다."),
        fragment("F8", "Average Amount is 19,655 KRW [calc:amount_mean]."),
    ]
    retriever = Retriever(corpus)
    english = retriever.search("What is the total Amount?", k=1)[0]
    korean = retriever.search("Amount 합계는 얼마인가요?", k=1)[0]
    assert (english.fragment.id, korean.fragment.id) == ("F5", "F6")
    # Before the question ending was dropped, its bigrams (얼마, 마인, 인가, 가요) held the Korean score near 0.3.
    assert korean.score > 0.75 and abs(english.score - korean.score) < 0.2


def test_words_about_the_conversation_count_only_when_the_data_uses_them() -> None:
    revenue = [fragment("F1", "Total revenue is 1,234 KRW [calc:total_revenue]."), *CORPUS[1:]]
    assert Retriever(revenue).search("total revenue in each job", k=1)[0].score == pytest.approx(
        Retriever(revenue).search("total revenue", k=1)[0].score
    )
    roles = [*CORPUS, fragment("F5", "Average score by Job Role: Data Analyst leads.")]
    assert tokenize("job role") == ["job", "role"]
    assert Retriever(roles).search("which job role leads", k=1)[0].fragment.id == "F5"


def test_korean_question_matches_the_korean_fragment() -> None:
    hits = Retriever(CORPUS).search("광고비 대비 전환이 가장 좋은 매체는?")
    assert hits and hits[0].fragment.id == "F2"
    assert Retriever(CORPUS).search("매출액 합계는?")[0].fragment.id == "F4"


def test_unrelated_query_gives_no_hits() -> None:
    retriever = Retriever(CORPUS)
    assert retriever.search("what is the weather in Paris tomorrow") == []
    assert retriever.search("") == [] and retriever.search("what was it?") == []
    assert Retriever([]).search("revenue") == []


def test_no_zero_score_hits_even_when_k_exceeds_matches() -> None:
    hits = Retriever(CORPUS).search("west revenue", k=50)
    assert [h.fragment.id for h in hits] == ["F1"]
    assert all(0 < h.score <= 1 and h.score == h.bm25 and h.dense is None for h in hits)


def test_scores_are_normalised_by_the_query_against_itself() -> None:
    retriever = Retriever(CORPUS)
    text = CORPUS[2].text
    assert retriever.search(text, k=1)[0].score == pytest.approx(1.0)  # the query is the fragment itself
    weak = retriever.search("moderate rainfall", k=1)[0]  # one of two words matches: not scaled up to 1
    strong = retriever.search("pearson correlation amount quantity", k=1)[0]
    assert weak.fragment.id == strong.fragment.id == "F3"
    assert 0 < weak.score < 0.75 < strong.score <= 1.0
    assert retriever.mode == "bm25"


class KeywordEmbedder:
    """A toy embedder: one dimension per keyword."""

    KEYS = ("revenue", "korean", "correlation")

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return [[1.0 if key in text.lower() else 0.0 for key in self.KEYS] + [0.1] for text in texts]


def test_hybrid_combines_dense_and_bm25() -> None:
    embedder = KeywordEmbedder()
    retriever = Retriever(CORPUS, embedder=embedder, alpha=0.25)
    assert retriever.mode == "hybrid"
    hits = retriever.search("revenue growth")
    by_id = {h.fragment.id: h for h in hits}
    top = by_id["F1"]
    assert hits[0] is top and top.dense is not None and top.dense > 0.9
    assert top.score == pytest.approx(0.25 * top.dense + 0.75 * top.bm25)
    assert all(h.score > 0 for h in hits)
    retriever.search("correlation")
    assert embedder.calls == 3  # the fragments once, then one call per query
    with pytest.raises(ValueError):
        Retriever(CORPUS, alpha=1.5)
