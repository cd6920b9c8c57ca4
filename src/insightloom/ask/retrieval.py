"""Retrieval over a knowledge base: BM25 (``bm25s``) for English and Korean, optionally fused with dense embeddings.

Scores mean the same across queries, so one relevance threshold can decide abstention: a fragment's BM25 score is
divided by the query's score against itself (the query scored as if it were a document of the same corpus, with
the same idf and average length), capped at 1. A min-max scale per query would give every query's top hit 1, and
``bm25s`` pads its top k with zero scores, so a zero is never a hit.

Korean (and other CJK) text is tokenised into character bigrams: no morphological analyser, nothing to download.
Each Korean word first loses its particle and its question or copula ending, and question words are dropped
("합계는 얼마인가요" -> "합계"), as English stop words are: a question's self-score then counts its content only, so
the normalised score means the same in both languages. English words get a light stem ("regions" -> "region",
"correlated" and "correlation" -> "correlat"), and a number is one token.
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
# Words about the conversation rather than the data ("the total in each job", "이 보고서"): left out of a query when
# no fragment holds them, so they do not count as missed content; kept when the data uses them ("Job Role").
_META_WORDS = frozenset({"job", "report", "analysis", "작업", "보고", "고서", "분석"})
# A number is one token ("10,000,000,000", "10.3"), so its digit groups do not match other numbers' ("10월").
_WORD_RE = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
_CJK_RE = re.compile(
    r"([\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)"
)
# Korean function words. Their bigrams ("얼마인가요" -> 얼마, 마인, 인가, 가요) match no fragment, so they filled a
# Korean question's self-score and pushed answerable questions down to the scores of unanswerable ones.
# Question, copula and polite endings, stripped from a word's end (longest first).
_KO_ENDINGS = tuple(
    sorted(
        {
            "인가요", "인가", "인지", "입니까", "입니다", "습니까", "습니다", "합니다", "니다", "이에요", "예요",
            "이었나요", "였나요", "었나요", "았나요", "했나요", "되나요", "하나요", "있나요", "나요", "가요", "까요",
            "이며", "이고", "이다", "였던", "았던", "었던", "했던",
        },
        key=len,
        reverse=True,
    )
)  # fmt: skip
# Particles: those after any syllable, then those that follow only a final consonant or only a vowel (so the "가" of
# "단가", after a final consonant, is no particle and stays).
_KO_PARTICLES = ("에서는", "에서", "에게", "까지", "부터", "보다", "처럼", "으로", "이나", "의", "에")
_KO_AFTER_CONSONANT = ("은", "이", "을", "과")
_KO_AFTER_VOWEL = ("는", "가", "를", "와", "로")
# Question words and degree adverbs, dropped whole like English stop words ("what", "most").
_KO_STOPWORDS = frozenset(
    {"얼마", "무엇", "뭐", "어디", "언제", "어느", "누가", "누구", "어떻게", "어떤", "어때", "몇", "왜", "무슨",
     "가장", "더", "많이", "보면", "대한", "대해", "개", "및"}
)  # fmt: skip
_HANGUL_FIRST, _HANGUL_LAST, _JONGSEONG, _RIEUL = 0xAC00, 0xD7A3, 28, 8


def _final(syllable: str) -> int | None:
    """A Hangul syllable's final consonant index (0: none), or None for anything else."""
    code = ord(syllable)
    return (code - _HANGUL_FIRST) % _JONGSEONG if _HANGUL_FIRST <= code <= _HANGUL_LAST else None


def _strip_particle(word: str) -> str:
    for particle in _KO_PARTICLES:
        if word.endswith(particle):
            return word[: -len(particle)]
    if len(word) < 2:  # a lone particle, glued to a Latin word ("Amount와"), goes
        return "" if word in _KO_AFTER_CONSONANT + _KO_AFTER_VOWEL else word
    final, last = _final(word[-2]), word[-1]
    if final is None:
        return word
    if (final and last in _KO_AFTER_CONSONANT) or (
        (not final or (final == _RIEUL and last == "로")) and last in _KO_AFTER_VOWEL
    ):
        return word[:-1]
    return word


def _korean_stem(word: str) -> str:
    """A Korean word without its question or copula ending and its particle; empty for a function word."""
    if word in _KO_STOPWORDS:
        return ""
    for ending in _KO_ENDINGS:
        if word.endswith(ending):
            word = word[: -len(ending)]
            break
    word = _strip_particle(word)
    return "" if word in _KO_STOPWORDS else word


def _singular(word: str) -> str:
    """The word without a plural ending: "categories" -> "category", "regions" -> "region" (not "status")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _english_stem(word: str) -> str:
    """A light stem, the same for a question and the fragments: plural, then one inflection, then a final "e"
    ("correlated" and "correlation" -> "correlat", "scored" and "scores" -> "scor", "monthly" -> "month"; "region"
    stays)."""
    word = _singular(word)
    for suffix, shortest in (("ing", 6), ("ed", 5), ("ion", 8), ("ly", 6)):
        if len(word) >= shortest and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def _cjk_tokens(run: str) -> list[str]:
    """A CJK run's character bigrams (the single character of a one-character run), Korean function words out."""
    run = _korean_stem(run) if _final(run[-1]) is not None else run
    return [run[j : j + 2] for j in range(len(run) - 1)] if len(run) > 1 else ([run] if run else [])


def tokenize(text: str) -> list[str]:
    """Lower-cased words (stop words out, plurals singular) and, for Korean/CJK runs, character bigrams (Korean
    particles, endings and question words out)."""
    tokens: list[str] = []
    for word in _WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold()):
        for i, part in enumerate(_CJK_RE.split(word)):
            if not part:
                continue
            if i % 2:
                tokens += _cjk_tokens(part)
            elif part not in _STOPWORDS:
                tokens.append(_english_stem(part))
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
        tokens = [t for t in tokenize(query) if t in self._df or t not in _META_WORDS]
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
