"""Citation and number validation of an answer, in code, with the report's own number rules.

Every ``[F#]`` must be a fragment that was sent. Every number must appear in a fragment the answer cites, or be a
``{{calc:ID}}`` reference to a verified calculation, which is then printed the way the report prints it
(``16,431,923 KRW [F3]``). Numbers are found with the audit's ``find_numbers`` (years, dates, ranks and codes are not
claims) and compared as printed, with their sign and unit: a printed number is right exactly when a fragment prints it
so. "0.23" is not a fragment's "-0.23", and "12%" is not a count of 12. A currency or counter word is not compared
("16,431,923 KRW" may be written "16,431,923 won"), since it does not change what the digits claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..calc_refs import CALC_REF_RE
from ..report.numbers import MINUS_SIGNS, NumberToken, find_numbers

if TYPE_CHECKING:
    from .fragments import KnowledgeFragment

#: A citation as the answer must write it.
CITATION_RE = re.compile(r"\[(F\d+)\]")
# What a model writes when it means a citation but not in the format: "[f3]", "[F 3]", "[F3, F4]", "(F3)".
_CITATION_ATTEMPT_RE = re.compile(r"[\[(]\s*[Ff]\s*\d+(?:\s*[,;]\s*[Ff]?\s*\d+)*\s*[\])]")
#: How a fragment names the calculation behind the value before it (``fragments.calc_tag``); the shown answer drops
#: it, since the fragment's citation already says where the value comes from.
CALC_TAG_RE = re.compile(r"[ \t]?\[calc:[^\[\]\s]+\]")
_MINUS = str.maketrans({sign: "-" for sign in MINUS_SIGNS})
# The units that change what a number means, right after it: percentage points before percent, then a multiple.
_UNITS = (
    ("pp", re.compile(r"[ \t]?(?:%p|pp(?![A-Za-z])|p\.p\.|%[ \t]?points?\b|percentage points?\b|퍼센트포인트)")),
    ("%", re.compile(r"[ \t]?(?:%|percent\b|per cent\b|퍼센트|프로)")),
    ("x", re.compile(r"(?:[xX×](?![A-Za-z0-9])|[ \t]?(?:배|times\b))")),
)


def cited_ids(answer: str) -> list[str]:
    """The fragment ids the answer cites, in order, without repeats."""
    return list(dict.fromkeys(CITATION_RE.findall(answer)))


def _unit_after(text: str, end: int) -> str:
    """The unit of the number ending at ``end`` that changes its meaning: ``%``, ``pp``, ``x`` or empty."""
    return next((unit for unit, pattern in _UNITS if pattern.match(text, end)), "")


def _printed(text: str, token: NumberToken) -> str:
    """The number as printed: signed (minus signs unified) with its unit ("-0.23", "45.2%", "3x")."""
    return token.text.translate(_MINUS) + _unit_after(text, token.end)


def fragment_numbers(text: str) -> set[str]:
    """Every number ``text`` prints, signed and with its unit, as the audit reads claims."""
    return {_printed(text, token) for token in find_numbers(text)}


def _masked(answer: str) -> str:
    """The answer with references and citations blanked (same length, so offsets stay), left for the number check."""

    def blank(match: re.Match[str]) -> str:
        return " " * len(match.group(0))

    return CALC_TAG_RE.sub(blank, CITATION_RE.sub(blank, CALC_REF_RE.sub(blank, answer)))


def _citation_problems(answer: str, sent_ids: set[str]) -> list[str]:
    problems = [
        f"[{fid}] is not a fragment you were given: cite only {', '.join(sorted(sent_ids, key=_id_order)) or 'none'}"
        for fid in cited_ids(answer)
        if fid not in sent_ids
    ]
    for match in _CITATION_ATTEMPT_RE.finditer(CITATION_RE.sub("", answer)):
        problems.append(f"'{match.group(0)}' is not a citation: write each one as [F3]")
    return problems


def _reference_problems(answer: str, verified: Mapping[str, str]) -> list[str]:
    return [
        f"{{{{calc:{calc_id}}}}} is not a verified calculation: cite a fragment's number or leave it out"
        for calc_id in dict.fromkeys(CALC_REF_RE.findall(answer))
        if calc_id not in verified
    ]


def _number_problems(answer: str, cited: Iterable[KnowledgeFragment], allowed: Iterable[str] = ()) -> list[str]:
    known: set[str] = set(allowed)
    for fragment in cited:
        known |= fragment_numbers(fragment.text)
    problems = []
    masked = _masked(answer)
    for token in find_numbers(masked):
        number = _printed(masked, token)
        if number not in known:
            problems.append(
                f"the number {number} is in no fragment you cite: copy it exactly from a cited fragment, with its "
                "sign and unit, write {{calc:ID}} for a verified calculation, or leave it out"
            )
    return list(dict.fromkeys(problems))


def _id_order(fid: str) -> tuple[int, str]:
    digits = fid[1:]
    return (int(digits), fid) if digits.isdigit() else (0, fid)


def check_answer(
    answer: str, sent: Sequence[KnowledgeFragment], verified: Mapping[str, str], allowed: Iterable[str] = ()
) -> list[str]:
    """What is wrong with an answer, in words a model can act on; empty when it may be shown.

    Args:
        answer: The model's answer, before its references are filled in.
        sent: The fragments the prompt held, with their prompt ids and the text as sent.
        verified: Calculation id -> its value as the report prints it, for every verified calculation.
        allowed: Numbers that are no claim: the parameters the question itself set (α 0.05, |z| > 3), as printed.
    """
    by_id = {fragment.id: fragment for fragment in sent}
    cited = [by_id[fid] for fid in cited_ids(answer) if fid in by_id]
    return (
        _citation_problems(answer, set(by_id))
        + _reference_problems(answer, verified)
        + _number_problems(answer, cited, allowed)
    )


def render_answer(answer: str, verified: Mapping[str, str], calc_fragments: Mapping[str, str]) -> str:
    """The answer with each ``{{calc:ID}}`` printed like the report: its formatted value and the fragment citing it
    (and the fragments' own ``[calc:ID]`` tags left out).

    Args:
        answer: A checked answer (every reference names a verified calculation).
        verified: Calculation id -> the value as printed.
        calc_fragments: Calculation id -> the id of the fragment that holds it (its citation).
    """

    def value(match: re.Match[str]) -> str:
        calc_id = match.group(1)
        marker = f" [{calc_fragments[calc_id]}]" if calc_id in calc_fragments else ""
        return f"{verified[calc_id]}{marker}"

    return CALC_REF_RE.sub(value, CALC_TAG_RE.sub("", answer))


def retry_message(problems: Sequence[str], abstention: str) -> str:
    """The second request after a rejected answer: the problems named, and the way out."""
    listed = "\n".join(f"- {problem}" for problem in problems)
    return (
        "Your answer cannot be shown:\n"
        f"<problems>\n{listed}\n</problems>\n"
        "Answer again following the rules: cite only the fragments you were given and copy their numbers exactly. "
        f"If the fragments cannot answer the question, answer exactly: {abstention}"
    )
