"""Retrieval over a knowledge base: BM25 (``bm25s``) for English and Korean, optionally fused with dense embeddings.

Scores mean the same across queries, so one relevance threshold can decide abstention: a fragment's BM25 score is
divided by the query's score against itself (the query scored as if it were a document of the same corpus, with
the same idf and average length), capped at 1. A min-max scale per query would give every query's top hit 1, and
``bm25s`` pads its top k with zero scores, so a zero is never a hit.

Korean (and other CJK) text is tokenised into character bigrams: no morphological analyser, nothing to download,
and "매출액은" still matches "매출액".
"""

from __future__ import annotations

import logging
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN_PLUS

from insightloom.ask.fragments import KnowledgeFragment

# bm25s sets its own logger to DEBUG, which a root handler without a level would print.
logging.getLogger("bm25s").setLevel(logging.WARNING)
logger = logging.getLogger(__name__)

__all__ = ["Embedder", "Hit", "Retriever", "tokenize"]

K1, B = 1.5, 0.75
_STOPWORDS = frozenset(STOPWORDS_EN_PLUS) | {"tell", "show", "please", "much", "many"}
_WORD_RE = re.compile(r"[^\W_]+")
_CJK_RE = re.compile(
    r"([\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)"
)


def tokenize(text: str) -> list[str]:
    """Lower-cased words (English stop words left out) and, for Korean/CJK runs, character bigrams."""
    tokens: list[str] = []
    for word in _WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold()):
        for i, part in enumerate(_CJK_RE.split(word)):
            if not part:
                continue
            if i % 2:  # a CJK run: its bigrams, or the single character
                tokens += [part[j : j + 2] for j in range(len(part) - 1)] if len(part) > 1 else [part]
            elif part not in _STOPWORDS:
                tokens.append(part)
    return tokens


class Embedder(Protocol):
    """Dense embeddings from a provider (Bedrock Titan or Cohere, an OpenAI-compatible endpoint...)."""

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...


@dataclass(frozen=True)
class Hit:
    """A retrieved fragment.

    Attributes:
        fragment: The fragment.
        score: 0..1 and comparable across queries: the normalised BM25, or in hybrid mode
            ``alpha * dense + (1 - alpha) * bm25`` (a reranker may replace it with its own 0..1 score).
        bm25: The normalised BM25 score (BM25 / the query's score against itself, capped at 1).
        dense: The cosine similarity clipped at 0, or None without an embedder.
    """

    fragment: KnowledgeFragment
    score: float
    bm25: float
    dense: float | None = None


def _tfc(tf: float, length: float, avg: float) -> float:
    """BM25's term-frequency component, as ``bm25s`` computes it for its default (Lucene) method."""
    return tf / (K1 * ((1 - B) + B * length / avg) + tf)


def _idf(df: int, n: int) -> float:
    """Lucene's idf, as ``bm25s`` computes it."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _unit(vector: Sequence[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=float)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


class Retriever:
    """BM25 over the fragments, fused with dense similarity when an embedder is given.

    Args:
        fragments: The knowledge base (one job's or several).
        embedder: Dense embeddings; None is BM25 alone (the offline default).
        alpha: The dense share of the hybrid score, 0..1.
    """

    def __init__(
        self, fragments: Sequence[KnowledgeFragment], *, embedder: Embedder | None = None, alpha: float = 0.5
    ) -> None:
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be between 0 and 1, not {alpha}")
        self.fragments = list(fragments)
        self.embedder = embedder
        self.alpha = alpha
        corpus = [tokenize(f.text) for f in self.fragments]
        self._df = Counter(token for tokens in corpus for token in set(tokens))
        self._avg = (sum(map(len, corpus)) / len(corpus)) if corpus else 1.0
        self._index: bm25s.BM25 | None = None
        if self._df:
            self._index = bm25s.BM25(k1=K1, b=B, method="lucene")
            self._index.index(corpus, show_progress=False)
        self._vectors: np.ndarray | None = None

    @property
    def mode(self) -> Literal["bm25", "hybrid"]:
        """``hybrid`` with an embedder, else ``bm25``."""
        return "hybrid" if self.embedder is not None else "bm25"

    def _self_score(self, query: list[str]) -> float:
        """The query's BM25 score against itself, as a document of this corpus.

        A term no fragment holds counts too (with the highest idf): a query whose specific words the job never
        mentions ("revenue in March" over a job without months) is only partly matched, not fully.
        """
        counts = Counter(query)
        n = len(self.fragments)
        return sum(_idf(self._df[t], n) * _tfc(tf, len(query), self._avg) for t, tf in counts.items())

    def _bm25(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Each fragment's BM25 score for ``query``: normalised (capped at 1), and relative to the query uncapped."""
        scores = np.zeros(len(self.fragments))
        tokens = tokenize(query)
        known = list(dict.fromkeys(t for t in tokens if t in self._df))  # each query term counted once
        ceiling = self._self_score(tokens)
        if self._index is None or not known or ceiling <= 0:
            return scores, scores
        relative = np.asarray(self._index.get_scores(known), dtype=float) / ceiling
        return np.clip(relative, 0.0, 1.0), relative

    def _dense(self, query: str) -> np.ndarray | None:
        if self.embedder is None or not self.fragments:
            return None
        if self._vectors is None:
            self._vectors = np.stack([_unit(v) for v in self.embedder.embed([f.text for f in self.fragments])])
        query_vector = _unit(self.embedder.embed([query])[0])
        return np.clip(self._vectors @ query_vector, 0.0, 1.0)

    def search(self, query: str, k: int = 20) -> list[Hit]:
        """The ``k`` best fragments for ``query``, best first; a fragment with score 0 is never a hit."""
        bm25, relative = self._bm25(query)
        dense = self._dense(query)
        scores = bm25 if dense is None else self.alpha * dense + (1 - self.alpha) * bm25
        # Ties at the cap (a long fragment can outscore the short query itself) go to the higher raw score.
        ranked = (i for i in range(len(self.fragments)) if scores[i] > 0)
        order = sorted(ranked, key=lambda i: (-scores[i], -relative[i], i))
        return [
            Hit(
                fragment=self.fragments[i],
                score=float(scores[i]),
                bm25=float(bm25[i]),
                dense=None if dense is None else float(dense[i]),
            )
            for i in order[: max(k, 0)]
        ]
