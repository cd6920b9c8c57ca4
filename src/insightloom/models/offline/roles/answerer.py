"""The offline Answerer: answer a follow-up question extractively from the fragments in the prompt, with citations.

Given a ``<computed>`` block (a statistics request the product computed and worded), it answers with that
block's sentences. Otherwise it reads only the prompt: the ``<fragment id=...>`` blocks, the ``<question>`` and the
``<abstention>`` sentence. It picks the fragments' sentences that share the most words with the question (the
product's own retrieval tokenizer), copies them exactly, so every number is the fragment's, and cites each one
``[F#]``. When no sentence shares a word with the question it answers the abstention sentence. Asked again with
problems named, it leaves out every sentence that prints a number, and abstains when nothing is left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ....context.budget import split_units
from ..conversation import Conversation, Reply

#: The most sentences an answer quotes.
MAX_SENTENCES = 3
#: A sentence is quoted when it shares at least this share of the best sentence's words with the question.
KEEP_SHARE = 0.5
_FRAGMENT_RE = re.compile(r'<fragment id="(F\d+)"[^>]*>(.*?)</fragment>', re.S)
_DIGIT_RE = re.compile(r"\d")
_COMPUTED_RE = re.compile(r"<computed[^>]*>(.*?)</computed>", re.S)
_END_RE = re.compile(r"[.!?。！？]+$")


@dataclass(frozen=True)
class _Sentence:
    fragment_id: str
    order: int
    text: str
    overlap: int


def _sentences(conv: Conversation, terms: set[str]) -> list[_Sentence]:
    from ....ask.retrieval import tokenize  # the retrieval stack loads only when a question is answered

    found: list[_Sentence] = []
    for match in _FRAGMENT_RE.finditer(conv.user_text):
        for unit in split_units(match.group(2)):
            text = " ".join(unit.split())
            if text:
                found.append(_Sentence(match.group(1), len(found), text, len(terms & set(tokenize(text)))))
    return found


def _cited(sentence: _Sentence) -> str:
    """The sentence with its citation before its final punctuation: "Revenue was 1,234 [F3]."."""
    end = _END_RE.search(sentence.text)
    body, stop = (sentence.text[: end.start()], end.group(0)) if end else (sentence.text, "")
    return f"{body} [{sentence.fragment_id}]{stop}"


def _is_retry(conv: Conversation) -> bool:
    return sum(message["role"] == "user" for message in conv.messages) > 1


def answerer(conv: Conversation) -> Reply:
    computed = _COMPUTED_RE.search(conv.user_text)
    if computed:  # the product computed and worded the answer: restate it, references as written
        return Reply(text=" ".join(computed.group(1).split()))
    abstention = conv.tag("abstention") or ""
    question = conv.tag("question", conv.user_text) or ""
    from ....ask.retrieval import tokenize

    terms = set(tokenize(question))
    candidates = [s for s in _sentences(conv, terms) if s.overlap]
    if _is_retry(conv):  # the checker named problems: keep only what cannot carry a wrong number
        candidates = [s for s in candidates if not _DIGIT_RE.search(s.text)]
    if not candidates:
        return Reply(text=abstention)
    best = max(s.overlap for s in candidates)
    ranked = sorted((s for s in candidates if s.overlap >= best * KEEP_SHARE), key=lambda s: (-s.overlap, s.order))
    chosen = sorted(ranked[:MAX_SENTENCES], key=lambda s: s.order)
    return Reply(text=" ".join(_cited(s) for s in chosen))
