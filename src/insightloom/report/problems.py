"""One line per passage the renderer refuses: what a refusal prints, and what a model reads back from it.

Every line has one fixed form, documented in the Reporter's prompt, so a hosted model and the offline Reporter read
the same thing (the offline Reporter parses it with :func:`read_problems`, never with its own patterns)::

    - <kind> '<subject>' in section '<section>', <where>: "<excerpt>" — fix: <fix>

The kinds: ``typed number`` (subject: the number), ``unknown reference``, ``unverified reference`` and ``unchecked
reference`` (subject: the ``{{calc:ID}}`` reference), ``near-miss reference`` (subject: the text as written; also a
reference with a sign, digit or unit glued to it) and ``control character`` (subject: its code point, ``U+0000``).
``<where>`` is ``title``, ``heading``, ``paragraph N``, ``table N row R col C``, ``alt text of charts/x.png`` or
``caption of charts/x.png``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from insightloom.calc_refs import reference

__all__ = ["CAPTION_WHERE", "KINDS", "ProblemLine", "describe_problem", "read_problems"]

TYPED, UNKNOWN, UNVERIFIED, UNCHECKED, NEAR_MISS = (
    "typed number",
    "unknown reference",
    "unverified reference",
    "unchecked reference",
    "near-miss reference",
)
CONTROL = "control character"
KINDS = (TYPED, UNKNOWN, UNVERIFIED, UNCHECKED, NEAR_MISS, CONTROL)
CAPTION_WHERE = "caption of "
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
        """The chart whose sidecar caption holds the problem (``charts/x.png``), if that is where it is."""
        return self.where.removeprefix(CAPTION_WHERE) if self.where.startswith(CAPTION_WHERE) else None


def _kind_and_subject(problem: dict[str, Any]) -> tuple[str, str]:
    kind = problem.get("kind", "reference")
    if kind == "typed_number":
        return TYPED, str(problem["number"])
    if kind == "near_miss":
        return NEAR_MISS, str(problem["written"])
    if kind == "control_char":
        return CONTROL, str(problem["written"])
    status = problem.get("status")
    word = UNKNOWN if status == "unknown" else UNCHECKED if status == UNVALIDATED else UNVERIFIED
    return word, reference(str(problem["calc_id"]))


def _fix(problem: dict[str, Any]) -> str:
    if problem.get("fix"):
        return str(problem["fix"])
    kind, ref = problem.get("kind", "reference"), reference(str(problem.get("calc_id", "")))
    if kind == "typed_number":
        return _TYPED_FIX + _HEADING_FIX.get(str(problem.get("where")), "")
    if kind in ("near_miss", "control_char"):
        return str(problem["advice"])
    status = problem["status"]
    if status == "unknown":
        closest = problem.get("closest") or []
        near = f" (closest tracked ids: {', '.join(closest)})" if closest else ""
        return f"{ref} is not a tracked calculation{near}: reference a tracked, verified id or drop the claim"
    if status == UNVALIDATED:
        return f"{ref} cannot be checked (citations.json is missing: run validation first)"
    return f"{ref} has status '{status}' and cannot be printed: drop the value, or the claim that needs it"


def describe_problem(problem: dict[str, Any]) -> str:
    """The refusal's line for one problem (without the leading ``- ``): what, where, the passage, and the fix."""
    kind, subject = _kind_and_subject(problem)
    where = f"in section '{problem['section']}', {problem.get('where') or 'text'}"
    return f"{kind} '{subject}' {where}: \"{problem['excerpt']}\" — fix: {_fix(problem)}"


def read_problems(text: str) -> list[ProblemLine]:
    """Every problem line in a refusal's text (a tool result), in order."""
    return [ProblemLine(m["kind"], m["subject"], m["section"], m["where"]) for m in _LINE_RE.finditer(text)]
