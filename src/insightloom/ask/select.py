"""Which retrieved fragments go to the model, and in what order: rerank, dedup in three stages, then order.

1. Rerank (:class:`Reranker`; the default, :class:`MetadataReranker`, mixes the retrieval score with the fragment's
   calculation importance and its job's recency; a cross-encoder or Bedrock rerank plugs in behind the same protocol).
2. Dedup: the exact hash of the normalised text; near duplicates (Jaccard of character shingles >= 0.8) keep the
   better one; then MMR for diversity. Fragments that disagree (the same calculation with different values, or
   fragments of different jobs: an older and a newer run) are never deduplicated against each other: both are sent
   with their dates and the prompt says to state the conflict. Identical text is the one exception: it cannot
   disagree.
3. Order: with more than 5 fragments, best first, second best last, the weakest in the middle ("lost in the middle").
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from insightloom.ask.retrieval import Hit

__all__ = [
    "MetadataReranker",
    "Reranker",
    "conflicts",
    "lost_in_the_middle",
    "near_duplicate",
    "select_hits",
]

NEAR_DUPLICATE = 0.8
MMR_LAMBDA = 0.7
SHINGLE = 4
_SPACES_RE = re.compile(r"\s+")


class Reranker(Protocol):
    """Reorders hits for a query; each returned hit's ``score`` is the reranker's own 0..1 score."""

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        """The hits, best first."""
        ...


def _when(date: str) -> float | None:
    try:
        return datetime.fromisoformat(date.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True)
class MetadataReranker:
    """The cheap default: ``retrieval * score + importance * calc importance + recency * freshness``.

    Freshness halves every ``half_life_days`` the fragment's job is older than the newest job among the hits, so
    one job's fragments are all equally fresh and a newer run outranks an older one on a tie.
    """

    retrieval: float = 0.8
    importance: float = 0.15
    recency: float = 0.05
    half_life_days: float = 30.0

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        """The hits with their combined score, best first (ties keep retrieval order)."""
        times = [_when(hit.fragment.date) for hit in hits]
        newest = max((t for t in times if t is not None), default=None)
        total = self.retrieval + self.importance + self.recency
        scored = []
        for hit, when in zip(hits, times, strict=True):
            age_days = (newest - when) / 86400 if newest is not None and when is not None else 0.0
            fresh = 0.5 ** (age_days / self.half_life_days)
            score = self.retrieval * hit.score + self.importance * hit.fragment.importance + self.recency * fresh
            scored.append(replace(hit, score=score / total if total else 0.0))
        return sorted(scored, key=lambda hit: -hit.score)


def _normal(text: str) -> str:
    return _SPACES_RE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _key(hit: Hit) -> tuple[str, str]:
    """A fragment's identity across jobs (each job numbers its own from F1)."""
    return hit.fragment.job_id, hit.fragment.id


def _digest(hit: Hit) -> str:
    return hashlib.sha256(_normal(hit.fragment.text).encode("utf-8")).hexdigest()


def _shingles(text: str) -> frozenset[str]:
    normal = _normal(text)
    if len(normal) <= SHINGLE:
        return frozenset({normal})
    return frozenset(normal[i : i + SHINGLE] for i in range(len(normal) - SHINGLE + 1))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def near_duplicate(a: str, b: str) -> float:
    """The Jaccard similarity of two texts' character shingles (0..1), in either language."""
    return _jaccard(_shingles(a), _shingles(b))


def _value_conflict(a: Hit, b: Hit) -> bool:
    shared = set(a.fragment.values) & set(b.fragment.values)
    return any(a.fragment.values[c] != b.fragment.values[c] for c in shared)


def _disagree(a: Hit, b: Hit) -> bool:
    """Whether both must be sent: the same calculation with different values, or different jobs."""
    return a.fragment.job_id != b.fragment.job_id or _value_conflict(a, b)


def _exact_dedup(hits: list[Hit]) -> list[Hit]:
    seen: set[str] = set()
    kept = []
    for hit in hits:
        digest = _digest(hit)
        if digest not in seen:
            seen.add(digest)
            kept.append(hit)
    return kept


def _near_dedup(hits: list[Hit], shingles: dict[tuple[str, str], frozenset[str]]) -> list[Hit]:
    """Drop a hit nearly identical to a better one it does not disagree with (hits come best first)."""
    kept: list[Hit] = []
    for hit in hits:
        mine = shingles[_key(hit)]
        if not any(
            not _disagree(hit, better) and _jaccard(mine, shingles[_key(better)]) >= NEAR_DUPLICATE for better in kept
        ):
            kept.append(hit)
    return kept


def _mmr(hits: list[Hit], shingles: dict[tuple[str, str], frozenset[str]], limit: int) -> list[Hit]:
    """Maximal marginal relevance; a hit is never penalised for resembling one it disagrees with."""
    chosen: list[Hit] = []
    pool = list(hits)
    while pool and len(chosen) < limit:

        def gain(hit: Hit) -> float:
            mine = shingles[_key(hit)]
            similar = [_jaccard(mine, shingles[_key(c)]) for c in chosen if not _disagree(hit, c)]
            return MMR_LAMBDA * hit.score - (1 - MMR_LAMBDA) * max(similar, default=0.0)

        best = max(pool, key=gain)  # max keeps the first of equals: the better-ranked one
        chosen.append(best)
        pool.remove(best)
    return chosen


def _with_conflicts(chosen: list[Hit], pool: list[Hit], limit: int) -> list[Hit]:
    """Bring in each left-out hit whose value contradicts a chosen one, dropping the weakest uninvolved hits."""
    partners = [h for h in pool if h not in chosen and any(_value_conflict(h, c) for c in chosen)]
    result = [*chosen, *partners]
    while len(result) > limit:
        involved = [any(_value_conflict(h, o) for o in result if o is not h) for h in result]
        free = [i for i, flag in enumerate(involved) if not flag]
        result.pop(free[-1] if free else len(result) - 1)
    return sorted(result, key=lambda hit: -hit.score)


def lost_in_the_middle(items: Sequence[Hit]) -> list[Hit]:
    """Best-first items reordered for a long context: 1st, 3rd, 5th... then ...6th, 4th, 2nd (> 5 items only)."""
    items = list(items)
    if len(items) <= 5:
        return items
    return items[0::2] + items[1::2][::-1]


def select_hits(query: str, hits: list[Hit], *, reranker: Reranker | None = None, limit: int = 8) -> list[Hit]:
    """The hits to send: reranked, deduplicated (conflicts kept), at most ``limit``, in prompt order.

    Args:
        query: The question.
        hits: Retrieved hits (:meth:`Retriever.search`).
        reranker: Default :class:`MetadataReranker`.
        limit: The most fragments to send.
    """
    if not hits or limit <= 0:
        return []
    ranked = (reranker or MetadataReranker()).rerank(query, list(hits))
    unique = _exact_dedup(ranked)
    shingles = {_key(hit): _shingles(hit.fragment.text) for hit in unique}
    distinct = _near_dedup(unique, shingles)
    chosen = _with_conflicts(_mmr(distinct, shingles, limit), distinct, limit)
    return lost_in_the_middle(chosen)


def conflicts(hits: list[Hit]) -> list[tuple[str, list[Hit]]]:
    """Each calculation id that the hits print with different values, with the hits that hold it (in order)."""
    holders: dict[str, list[Hit]] = {}
    for hit in hits:
        for calc_id in hit.fragment.values:
            holders.setdefault(calc_id, []).append(hit)
    return [
        (calc_id, group)
        for calc_id, group in holders.items()
        if len({hit.fragment.values[calc_id] for hit in group}) > 1
    ]
