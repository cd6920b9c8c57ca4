"""The one ``{{calc:ID}}`` reference syntax, and the near misses a model (or an f-string) writes instead.

A reference is ``{{calc:ID}}``, inner spaces allowed (``{{ calc : ID }}``). Anything that is almost one, like
``{calc:ID}`` (the f-string slip ``f"{{calc:{cid}}}"``), ``{{calc:ID}``, ``{calc:ID}}``, ``{{{calc:ID}}}`` or
``{{Calc:ID}}``, would be printed literally, so every place that reads references (``append_result``, the renderer,
the audit) finds those here and names the exact correction. Pure standard library: analysis scripts import it too.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "CALC_REF_RE",
    "FSTRING_HINT",
    "NearMiss",
    "calc_ids",
    "closest_ids",
    "find_near_misses",
    "reference",
    "unknown_id_advice",
]

CALC_REF_RE = re.compile(r"\{\{\s*calc\s*:\s*([^{}\s]+?)\s*\}\}")
# Any run of braces around "calc:<id>", any case: the exact form above is the only one that is not a near miss.
_ALMOST_RE = re.compile(r"(\{+)[ \t]*(calc)[ \t]*:[ \t]*([^{}\s]+?)[ \t]*(\}+)", re.IGNORECASE)
FSTRING_HINT = 'in an f-string that is f"{{{{calc:{cid}}}}}"'


def reference(calc_id: str) -> str:
    """The reference to ``calc_id`` as it must be written."""
    return "{{calc:" + calc_id + "}}"


def calc_ids(text: str) -> list[str]:
    """The calculation ids referenced in ``text``, in order, without repeats."""
    return list(dict.fromkeys(CALC_REF_RE.findall(text)))


@dataclass(frozen=True)
class NearMiss:
    """Text that is almost a reference but would be printed as it is.

    Attributes:
        written: The text as written (``{calc:total_revenue}``).
        calc_id: The id inside it.
        start: Offset of ``written`` in the searched text.
    """

    written: str
    calc_id: str
    start: int

    @property
    def correction(self) -> str:
        """The reference that was meant."""
        return reference(self.calc_id)

    def advice(self) -> str:
        """The exact fix, in words a model can apply in the same turn."""
        return f"write {self.correction} instead of {self.written}; {FSTRING_HINT}"


def find_near_misses(text: str) -> list[NearMiss]:
    """Every near miss in ``text``, in order (exact references are not near misses)."""
    misses = []
    for match in _ALMOST_RE.finditer(text):
        opening, word, calc_id, closing = match.groups()
        if len(opening) == 2 and len(closing) == 2 and word == "calc":
            continue
        misses.append(NearMiss(match.group(0), calc_id, match.start()))
    return misses


def closest_ids(calc_id: str, known: Iterable[str], limit: int = 3) -> list[str]:
    """The known ids nearest to ``calc_id`` (a case-only difference first), for "did you mean" advice."""
    known = list(dict.fromkeys(known))
    same_case = [k for k in known if k.lower() == calc_id.lower() and k != calc_id]
    close = difflib.get_close_matches(calc_id, known, n=limit, cutoff=0.5)
    return list(dict.fromkeys([*same_case, *close]))[:limit]


def unknown_id_advice(calc_id: str, known: Iterable[str]) -> str:
    """Why ``calc_id`` cannot be referenced and which known ids come closest."""
    known = list(known)
    if not known:
        return f"'{calc_id}' is not a tracked calculation (nothing is tracked yet: call track_calculation first)"
    near = closest_ids(calc_id, known)
    hint = f"closest tracked ids: {', '.join(near)}" if near else f"tracked ids include: {', '.join(known[:8])}"
    return f"'{calc_id}' is not a tracked calculation ({hint})"
