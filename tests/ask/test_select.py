"""Selection: rerank, dedup (exact, near, MMR) that keeps conflicts, and lost-in-the-middle order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from insightloom.ask.fragments import KnowledgeFragment
from insightloom.ask.retrieval import Hit
from insightloom.ask.select import MetadataReranker, conflicts, lost_in_the_middle, near_duplicate, select_hits

TOPICS = ["revenue", "margin", "region", "channel", "season", "product", "customer", "discount", "return"]


class Identity:
    """A reranker that keeps the retrieval order and scores."""

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        return sorted(hits, key=lambda hit: -hit.score)


def hit(
    fid: str,
    text: str,
    score: float,
    job: str = "job-a",
    values: dict[str, str] | None = None,
    date: str = "2025-01-01T00:00:00Z",
    importance: float = 0.5,
) -> Hit:
    fragment = KnowledgeFragment(
        id=fid,
        text=text,
        job_id=job,
        source="results",
        section="s",
        calc_ids=tuple(values or {}),
        values=values or {},
        date=date,
        importance=importance,
    )
    return Hit(fragment=fragment, score=score, bm25=score)


def distinct(n: int) -> list[Hit]:
    return [hit(f"F{i + 1}", f"Finding about {TOPICS[i]} number {chr(65 + i)}.", 1.0 - i * 0.1) for i in range(n)]


def test_conflicting_values_across_two_jobs_are_both_kept() -> None:
    old = hit("F1", "Total revenue is 1,000 KRW [calc:total_revenue].", 0.9, "job-old", {"total_revenue": "1,000 KRW"})
    new = hit("F1", "Total revenue is 1,200 KRW [calc:total_revenue].", 0.8, "job-new", {"total_revenue": "1,200 KRW"})
    assert near_duplicate(old.fragment.text, new.fragment.text) >= 0.8
    chosen = select_hits("total revenue", [old, new], reranker=Identity())
    assert {h.fragment.job_id for h in chosen} == {"job-old", "job-new"}
    [(calc_id, group)] = conflicts(chosen)
    assert calc_id == "total_revenue" and {h.fragment.values[calc_id] for h in group} == {"1,000 KRW", "1,200 KRW"}


def test_a_conflicting_partner_is_kept_even_past_the_limit() -> None:
    hits = distinct(4)
    partner = hit("F9", "Revenue was 900 KRW [calc:rev].", 0.05, "job-b", {"rev": "900 KRW"})
    hits[0] = hit("F1", "Revenue was 800 KRW [calc:rev].", 1.0, "job-a", {"rev": "800 KRW"})
    chosen = select_hits("revenue", [*hits, partner], reranker=Identity(), limit=3)
    assert len(chosen) == 3 and {"800 KRW", "900 KRW"} <= {h.fragment.values.get("rev") for h in chosen}


def test_near_duplicates_keep_the_better_one() -> None:
    better = hit("F1", "The West region leads with 45.2% [calc:west_share] of total revenue in the year.", 0.9)
    worse = hit("F7", "The West region leads with 45.2% [calc:west_share] of total revenue in the year!", 0.6)
    other = hit("F3", "Returns were rare in every month of the season.", 0.5)
    chosen = select_hits("west", [worse, other, better], reranker=Identity())
    assert [h.fragment.id for h in chosen] == ["F1", "F3"]


def test_exact_duplicates_are_dropped_whatever_the_spacing() -> None:
    a = hit("F1", "West leads.", 0.9)
    b = hit("F2", "  west   LEADS. ", 0.8)
    assert [h.fragment.id for h in select_hits("west", [a, b], reranker=Identity())] == ["F1"]


def test_more_than_five_are_ordered_best_first_second_best_last() -> None:
    hits = distinct(7)
    chosen = select_hits("finding", list(reversed(hits)), reranker=Identity(), limit=7)
    assert [h.fragment.id for h in chosen] == ["F1", "F3", "F5", "F7", "F6", "F4", "F2"]
    assert [h.fragment.id for h in select_hits("finding", hits[:5], reranker=Identity())] == [
        "F1",
        "F2",
        "F3",
        "F4",
        "F5",
    ]
    assert lost_in_the_middle([]) == []


def test_limit_and_empty_input() -> None:
    assert len(select_hits("finding", distinct(9), limit=4)) == 4
    assert select_hits("finding", []) == [] and select_hits("finding", distinct(3), limit=0) == []


def test_metadata_reranker_prefers_important_and_recent_fragments() -> None:
    plain = hit("F1", "Revenue by region.", 0.5, importance=0.3)
    important = hit("F2", "Revenue total.", 0.5, importance=1.0)
    old = hit("F3", "Revenue by month.", 0.5, "job-old", date="2024-01-01T00:00:00Z", importance=0.3)
    ranked = MetadataReranker().rerank("revenue", [old, plain, important])
    assert [h.fragment.id for h in ranked] == ["F2", "F1", "F3"]
    assert all(0 < h.score <= 1 for h in ranked) and ranked[0].bm25 == 0.5


texts = st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4).map(" ".join)
hits_strategy = st.lists(
    st.tuples(texts, st.floats(0.01, 1.0), st.sampled_from(["job-a", "job-b"]), st.sampled_from(["1", "2", ""])),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(hits_strategy, st.integers(1, 12))
def test_select_hits_never_returns_duplicate_texts(rows: list[tuple[str, float, str, str]], limit: int) -> None:
    hits = [
        hit(f"F{i + 1}", f"{text} {value}".strip(), score, job, {"x": value} if value else {})
        for i, (text, score, job, value) in enumerate(rows)
    ]
    chosen = select_hits("revenue margin", hits, limit=limit)
    normal = [" ".join(h.fragment.text.casefold().split()) for h in chosen]
    assert len(normal) == len(set(normal))
    assert len(chosen) <= limit and all(any(h.fragment is g.fragment for g in hits) for h in chosen)
    assert bool(chosen) == bool(hits)
