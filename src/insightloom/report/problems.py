"""One line per passage the renderer refuses: what a refusal prints, and what a model reads back from it.

Every line has one fixed form, documented in the Reporter's prompt, so a hosted model and the offline Reporter read
the same thing (the offline Reporter parses it with :func:`read_problems`, never with its own patterns)::

    - <kind> '<subject>' in section '<section>', <where>: "<excerpt>" — fix: <fix>

The kinds: ``typed number`` (subject: the number), ``unknown reference``, ``unverified reference``, ``unchecked
reference`` and ``wrong-kind reference`` (subject: the ``{{calc:ID}}`` or ``{{claim:ID}}`` reference; wrong-kind: a
claim cited as ``{{calc:ID}}`` or a number as ``{{claim:ID}}``), ``near-miss reference`` (subject: the text as
written; also a reference with a sign, digit or unit glued to it), ``control character`` (subject: its code point,
``U+0000``), ``unsupported claim`` (subject: the claim phrase, "is rising", in a sentence citing no claim) and
``contradicting claim`` (subject: the ``{{claim:ID}}`` that contradicts a claim cited before it). ``<where>`` is
``title``, ``heading``, ``paragraph N``, ``table N row R col C``, ``alt text of charts/x.png``, ``caption of
charts/x.png`` or ``title of charts/x.png`` (the title drawn on the chart, from its sidecar).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from insightloom.calc_refs import claim_reference, reference

__all__ = ["CAPTION_WHERE", "KINDS", "TITLE_WHERE", "ProblemLine", "describe_problem", "read_problems"]

TYPED, UNKNOWN, UNVERIFIED, UNCHECKED, NEAR_MISS = (
    "typed number",
    "unknown reference",
    "unverified reference",
    "unchecked reference",
    "near-miss reference",
)
CONTROL = "control character"
WRONG_KIND, UNSUPPORTED, CONTRADICTION = "wrong-kind reference", "unsupported claim", "contradicting claim"
KINDS = (TYPED, UNKNOWN, UNVERIFIED, UNCHECKED, WRONG_KIND, NEAR_MISS, CONTROL, UNSUPPORTED, CONTRADICTION)
CAPTION_WHERE = "caption of "
TITLE_WHERE = "title of "
UNVALIDATED = "unvalidated"
_LINE_RE = re.compile(
    rf"^- (?P<kind>{'|'.join(KINDS)}) '(?P<subject>.*?)' in section '(?P<section>.*?)', (?P<where>[^:\n]*?): \"",
    re.M,
)
_TYPED_FIX = (
    "replace it with the {{calc:<id>}} reference of a verified calculation, or delete it (a name or code from the "
    "data, e.g. a product code, goes in `backticks`; a number goes as {{calc:<id>}})"
)
_HEADING_FIX = {
    "heading": "; in a heading, write it without the number: render_section('<old heading>', '') deletes the old "
    "section, then store it under the new heading",
    "title": "; write the title without the number (render_section('# <new title>', ...))",
}


@dataclass(frozen=True)
class ProblemLine:
    """One refused passage as read back from a refusal's text."""

    kind: str
    subject: str
    section: str
    where: str

    @property
    def chart(self) -> str | None:
        """The chart whose sidecar caption or title holds the problem (``charts/x.png``), if that is where it is."""
        for prefix in (CAPTION_WHERE, TITLE_WHERE):
            if self.where.startswith(prefix):
                return self.where.removeprefix(prefix)
        return None


def _ref(problem: dict[str, Any]) -> str:
    """The reference as it was written: ``{{claim:ID}}`` for a claim reference, else ``{{calc:ID}}``."""
    return (claim_reference if problem.get("ref") == "claim" else reference)(str(problem.get("calc_id", "")))


def _kind_and_subject(problem: dict[str, Any]) -> tuple[str, str]:
    kind = problem.get("kind", "reference")
    if kind == "typed_number":
        return TYPED, str(problem["number"])
    if kind == "near_miss":
        return NEAR_MISS, str(problem["written"])
    if kind == "control_char":
        return CONTROL, str(problem["written"])
    if kind == "unsupported_claim":
        return UNSUPPORTED, str(problem["phrase"])
    if kind == "contradiction":
        return CONTRADICTION, _ref(problem)
    status = problem.get("status")
    word = UNKNOWN if status == "unknown" else UNCHECKED if status == UNVALIDATED else UNVERIFIED
    return WRONG_KIND if status in ("is_claim", "not_claim") else word, _ref(problem)


def _claim_fix(problem: dict[str, Any]) -> str:
    """How to state a claim word: cite a tracked claim in that sentence (naming the verified ones), or drop it."""
    claims = problem.get("claims") or []
    tracked = (
        f"verified claims: {', '.join(claims)}" if claims else "no claim is verified yet (track one with track_claim)"
    )
    phrase = problem["phrase"]
    if problem.get("chart"):
        chart = problem["chart"]
        return (
            f"'{phrase}' states a verdict nobody checked, in the {problem['where'].split(' of ')[0]} of {chart} "
            f"(its sidecar): save the chart again with save_chart(..., title=..., caption=...) without the claim "
            f"word, or leave ![...]({chart}) out of the report"
        )
    return (
        f"'{phrase}' states a verdict nobody checked: state it with {{{{claim:ID}}}} in the same sentence ({tracked}), "
        "or drop the word (a name from the data goes in `backticks`)"
    )


def _fix(problem: dict[str, Any]) -> str:
    if problem.get("fix"):
        return str(problem["fix"])
    kind = problem.get("kind", "reference")
    if kind == "typed_number":
        return _TYPED_FIX + _HEADING_FIX.get(str(problem.get("where")), "")
    if kind in ("near_miss", "control_char"):
        return str(problem["advice"])
    if kind == "unsupported_claim":
        return _claim_fix(problem)
    ref, calc_id = _ref(problem), str(problem.get("calc_id", ""))
    if kind == "contradiction":
        return (
            f"{ref} contradicts {claim_reference(str(problem['other']))} cited before it ({problem['reason']}): "
            "keep one of the two and drop the sentence citing the other"
        )
    what = "claim" if problem.get("ref") == "claim" else "calculation"
    status = problem["status"]
    if status == "is_claim":
        return f"'{calc_id}' is a tracked claim: write {claim_reference(calc_id)} instead of {ref}"
    if status == "not_claim":
        return f"'{calc_id}' is a number, not a claim: write {reference(calc_id)} instead of {ref}"
    if status == "unknown":
        closest = problem.get("closest") or []
        near = f" (closest tracked ids: {', '.join(closest)})" if closest else ""
        return f"{ref} is not a tracked {what}{near}: reference a tracked, verified id or drop the claim"
    if status == UNVALIDATED:
        return f"{ref} cannot be checked (citations.json is missing: run validation first)"
    if status == "malformed":
        return f"{ref} has a claim kind or verdict the claims table does not know: drop the sentence citing it"
    if status == "stale":
        return (f"{ref} changed in calculation_metadata.json after it was verified: run validation again "
                "(insightloom verify JOB), or drop the sentence citing it")  # fmt: skip
    dropped = "verdict" if what == "claim" else "value"
    return f"{ref} has status '{status}' and cannot be printed: drop the {dropped}, or the claim that needs it"


def describe_problem(problem: dict[str, Any]) -> str:
    """The refusal's line for one problem (without the leading ``- ``): what, where, the passage, and the fix."""
    kind, subject = _kind_and_subject(problem)
    where = f"in section '{problem['section']}', {problem.get('where') or 'text'}"
    return f"{kind} '{subject}' {where}: \"{problem['excerpt']}\" — fix: {_fix(problem)}"


def read_problems(text: str) -> list[ProblemLine]:
    """Every problem line in a refusal's text (a tool result), in order."""
    return [ProblemLine(m["kind"], m["subject"], m["section"], m["where"]) for m in _LINE_RE.finditer(text)]
