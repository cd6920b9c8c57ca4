"""The ``{{calc:ID}}`` and ``{{claim:ID}}`` reference syntax, and the near misses a model (or an f-string) writes.

A reference is ``{{calc:ID}}`` (a tracked number) or ``{{claim:ID}}`` (a tracked claim, a verdict such as "rising"),
inner spaces allowed (``{{ calc : ID }}``). Anything that is almost one, like
``{calc:ID}`` (the f-string slip ``f"{{calc:{cid}}}"``), ``{{calc:ID}``, ``{calc:ID}}``, ``{{{calc:ID}}}``,
``{{Calc:ID}}``, ``{{ calc.ID }}``, ``{{calc: total revenue}}`` or ``{{calc:}}``, and any other double-braced text
(``{{total_revenue}}``, a template left unfilled, however long), would be printed literally; so would a reference in
full-width or HTML-escaped characters (``｛｛calc:x｝｝``, ``&#123;&#123;calc:x&#125;&#125;``) and any other
``calc:ID`` outside a reference (``[[calc:x]]``, ``<calc:x>``, a bare ``calc:x``). The same goes for claims
(``{claim:x}``, ``{{Claim:x}}``, ``{{claim:}}``, ``[[claim:x]]``). The search reads an NFKC-normalised, HTML-unescaped
copy and reports what was written in the original. So every place that reads references
(``append_result``, the renderer, the audit) finds those here and names the exact correction, with the id resolved
against the tracked ids when they are known. Pure standard library: analysis scripts import it too.
"""

from __future__ import annotations

import bisect
import difflib
import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace

__all__ = [
    "ANY_REF_RE",
    "CALC_REF_RE",
    "CLAIM_FSTRING_HINT",
    "CLAIM_REF_RE",
    "FSTRING_HINT",
    "NearMiss",
    "calc_ids",
    "claim_ids",
    "claim_reference",
    "closest_ids",
    "find_near_misses",
    "reference",
    "resolve_id",
    "unknown_id_advice",
]

CALC_REF_RE = re.compile(r"\{\{\s*calc\s*:\s*([^{}\s]+?)\s*\}\}")
# A tracked claim ("rising", "main driver", ...), cited like a number: ``{{claim:ID}}``.
CLAIM_REF_RE = re.compile(r"\{\{\s*claim\s*:\s*([^{}\s]+?)\s*\}\}")
#: Either reference, in one pass: group 1 is its kind ("calc" or "claim"), group 2 the id.
ANY_REF_RE = re.compile(r"\{\{\s*(calc|claim)\s*:\s*([^{}\s]+?)\s*\}\}")
# Every braced text: a whole run of opening braces (possessive and never started inside a run, so a long run of
# braces costs one pass, not a quadratic search), any text without braces or line breaks, then a whole run of
# closing braces.
_BRACED_RE = re.compile(r"(?<!\{)(\{++)([^{}\n]*+)(\}++)")
# "calc:ID" anywhere else: "[[calc:x]]", "<calc:x>", a bare "calc:x"; "claim:ID" only without a space after the
# colon ("[[claim:x]]", "<claim:x>"), since "the claim: revenue rose" is prose.
_BARE_REF_RE = re.compile(r"(?<![\w])(?:calc\s*[:：]\s*|claim[:：])[\w.-]*\w", re.IGNORECASE)
_ENTITY_RE = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,30});")
# Braces and "calc" (or "claim") that no closing brace follows ("{{calc:total_revenue" at the end of a line).
_UNCLOSED_RE = re.compile(r"(?<!\{)\{++[ \t]*(?:calc|claim)\b[ \t]*[:.=]?[ \t]*[^{}\s]{0,100}", re.IGNORECASE)
_REF_INNER_RE = re.compile(r"^\s*(calc|claim)\b\s*(?:[:.=]\s*)?(.*?)\s*$", re.IGNORECASE | re.DOTALL)
_ID_SEPARATORS_RE = re.compile(r"[\s.\-]+")
FSTRING_HINT = 'in an f-string that is f"{{{{calc:{cid}}}}}"'
CLAIM_FSTRING_HINT = 'in an f-string that is f"{{{{claim:{cid}}}}}"'


def reference(calc_id: str) -> str:
    """The reference to ``calc_id`` as it must be written."""
    return "{{calc:" + calc_id + "}}"


def claim_reference(claim_id: str) -> str:
    """The reference to the tracked claim ``claim_id`` as it must be written."""
    return "{{claim:" + claim_id + "}}"


def calc_ids(text: str) -> list[str]:
    """The calculation ids referenced in ``text``, in order, without repeats."""
    return list(dict.fromkeys(CALC_REF_RE.findall(text)))


def claim_ids(text: str) -> list[str]:
    """The claim ids referenced as ``{{claim:ID}}`` in ``text``, in order, without repeats."""
    return list(dict.fromkeys(CLAIM_REF_RE.findall(text)))


def _normal(calc_id: str) -> str:
    return _ID_SEPARATORS_RE.sub("_", calc_id.strip()).strip("_")


def resolve_id(written: str, known: Iterable[str] = ()) -> str:
    """The tracked id that ``written`` means: itself, one differing only in case, or one with ``_`` for spaces.

    Without a tracked id that matches, ``written`` with its spaces and dots as underscores.
    """
    known = list(known)
    normal = _normal(written)
    for candidate in (written.strip(), normal):
        if candidate in known:
            return candidate
    folded = normal.casefold()
    return next((k for k in known if _normal(k).casefold() == folded), normal)


@dataclass(frozen=True)
class NearMiss:
    """Text that is almost a reference (or any double-braced text) that would be printed as it is.

    Attributes:
        written: The text as written (``{calc:total_revenue}``).
        calc_id: The id it means: resolved against the tracked ids when they were given; empty when it names none.
        start: Offset of ``written`` in the searched text.
        tracked: Whether ``calc_id`` is tracked (None when the tracked ids were not given).
        closest: The tracked ids nearest to an untracked ``calc_id``.
        claim: It means a claim (``{{claim:<id>}}``): the tracked id is a claim, or an untracked one was written so.
    """

    written: str
    calc_id: str
    start: int
    tracked: bool | None = None
    closest: tuple[str, ...] = ()
    claim: bool = False

    @property
    def correction(self) -> str:
        """The reference that was meant (``{{calc:<id>}}`` or ``{{claim:<id>}}`` when the text names no id)."""
        return (claim_reference if self.claim else reference)(self.calc_id or "<id>")

    def advice(self) -> str:
        """The exact fix, in words a model can apply in the same turn."""
        what = "claim" if self.claim else "calculation"
        if not self.calc_id:
            return f"it names no {what}: write {self.correction} with a tracked id instead, or delete it"
        fix = f"write {self.correction} instead of {self.written}; {CLAIM_FSTRING_HINT if self.claim else FSTRING_HINT}"
        if self.tracked is False:
            near = f"closest tracked ids: {', '.join(self.closest)}" if self.closest else "use a tracked id"
            fix += f" ('{self.calc_id}' is not tracked: {near}; or delete the text)"
        return fix


@dataclass(frozen=True)
class _Known:
    """The tracked ids (None: not given) and which of them are claims."""

    ids: list[str] | None
    claims: frozenset[str] = frozenset()


def _resolved(written: str, start: int, raw: str, known: _Known, *, named: bool, claim: bool = False) -> NearMiss:
    """The near miss ``written`` at ``start`` for the id ``raw``; ``claim``: written as a claim.

    A tracked id's own kind decides which reference it needs: ``{calc:<a claim's id>}`` means ``{{claim:<id>}}``.
    """
    ids = known.ids
    calc_id = resolve_id(raw, ids or []) if raw.strip() else ""
    if ids is None or not calc_id:
        return NearMiss(written, calc_id, start, claim=claim)
    if calc_id in ids:
        return NearMiss(written, calc_id, start, True, claim=calc_id in known.claims)
    if not named:  # "{{total}}" without "calc" that is no tracked id: no reference to suggest
        return NearMiss(written, "", start)
    pool = [i for i in ids if (i in known.claims) == claim] or ids
    return NearMiss(written, calc_id, start, False, tuple(closest_ids(calc_id, pool)), claim=claim)


def _inner(text: str) -> tuple[str, str] | None:
    """``(kind, id)`` of a reference's inside as written ("calc: x" -> ("calc", "x")), or None without the word."""
    named = _REF_INNER_RE.match(text)
    return (named.group(1).lower(), named.group(2)) if named else None


def _near_miss(match: re.Match[str], known: _Known) -> NearMiss | None:
    written, (opening, inner, closing) = match.group(0), match.groups()
    if ANY_REF_RE.fullmatch(written):
        return None
    named = _inner(inner)
    lowered = inner.lower()
    if named is None and len(opening) < 2 and len(closing) < 2 and "calc" not in lowered and "claim" not in lowered:
        return None  # "{x}": single braces without "calc" are not a reference attempt
    raw, claim = (named[1], named[0] == "claim") if named else (inner, False)
    return _resolved(written, match.start(), raw, known, named=named is not None, claim=claim)


def _normalised(text: str) -> tuple[str, list[int]]:
    """``text`` NFKC-normalised and HTML-unescaped, and for each of its offsets (and its end) the original offset."""
    if text.isascii() and "&" not in text:
        return text, list(range(len(text) + 1))
    pieces: list[str] = []
    origin: list[int] = []

    def add(piece: str, at: int) -> None:
        pieces.append(piece)
        origin.extend([at] * len(piece))

    pos = 0
    for entity in _ENTITY_RE.finditer(text):
        for i in range(pos, entity.start()):
            add(unicodedata.normalize("NFKC", text[i]), i)
        add(unicodedata.normalize("NFKC", html.unescape(entity.group(0))), entity.start())
        pos = entity.end()
    for i in range(pos, len(text)):
        add(unicodedata.normalize("NFKC", text[i]), i)
    return "".join(pieces), [*origin, len(text)]


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    """Whether offset ``at`` lies in one of the sorted, disjoint ``spans`` (a binary search: long texts stay linear)."""
    i = bisect.bisect_right(spans, at, key=lambda span: span[0]) - 1
    return i >= 0 and spans[i][0] <= at < spans[i][1]


def _named_miss(written: str, start: int, known: _Known) -> NearMiss:
    """The near miss for text starting with "calc" or "claim" after any braces (``calc:x``, ``{{claim:x``)."""
    named = _inner(written.lstrip("{").replace("：", ":"))
    raw, claim = (named[1], named[0] == "claim") if named else ("", False)
    return _resolved(written, start, raw, known, named=True, claim=claim)


def _bare_misses(norm: str, taken: list[tuple[int, int]], known: _Known) -> list[NearMiss]:
    """``calc:ID`` (or ``claim:ID``) outside every braced text (offsets in ``norm``)."""
    taken = sorted(taken)
    return [
        _named_miss(match.group(0), match.start(), known)
        for match in _BARE_REF_RE.finditer(norm)
        if not _inside(taken, match.start())
    ]


def _in_original(miss: NearMiss, text: str, origin: list[int]) -> NearMiss:
    lo, hi = origin[miss.start], origin[miss.start + len(miss.written)]
    if lo == miss.start and text[lo:hi] == miss.written:
        return miss  # the text needed no normalising here: a copy would cost a long run of misses dearly
    return replace(miss, written=text[lo:hi], start=lo)


def _normalised_reference(match: re.Match[str], text: str, origin: list[int], known: _Known) -> NearMiss | None:
    """A reference that is exact only once normalised ("｛｛calc:x｝｝", "&#123;&#123;calc:x&#125;&#125;")."""
    written = text[origin[match.start()] : origin[match.end()]]
    if ANY_REF_RE.fullmatch(written):
        return None
    return _resolved(match.group(0), match.start(), match.group(2), known, named=True, claim=match.group(1) == "claim")


def find_near_misses(text: str, known: Iterable[str] | None = None, claims: Iterable[str] = ()) -> list[NearMiss]:
    """Every near miss and stray double-braced text in ``text``, in order (exact references are not near misses).

    Args:
        text: The text to search.
        known: The tracked ids; when given, each near miss names the tracked id it means (``{{Calc:REVENUE}}`` ->
            ``revenue``) and says whether it is tracked.
        claims: Which tracked ids are claims: a near miss naming one is corrected to ``{{claim:<id>}}``.
    """
    claim_set = frozenset(claims)
    ids = None if known is None else list(dict.fromkeys([*known, *claim_set]))
    tracked = _Known(ids, claim_set)
    norm, origin = _normalised(text)
    misses = [miss for match in _BRACED_RE.finditer(norm) if (miss := _near_miss(match, tracked))]
    if norm != text:
        refs = (_normalised_reference(match, text, origin, tracked) for match in ANY_REF_RE.finditer(norm))
        misses += [miss for miss in refs if miss]
    braced = [(m.start(), m.end()) for m in _BRACED_RE.finditer(norm)]
    taken = list(braced)
    for match in _UNCLOSED_RE.finditer(norm):
        if not _inside(braced, match.start()):
            misses.append(_named_miss(match.group(0), match.start(), tracked))
            taken.append(match.span())
    misses += _bare_misses(norm, taken, tracked)
    return sorted((_in_original(miss, text, origin) for miss in misses), key=lambda miss: miss.start)


def closest_ids(calc_id: str, known: Iterable[str], limit: int = 3) -> list[str]:
    """The known ids nearest to ``calc_id`` (a case-only difference first), for "did you mean" advice."""
    known = list(dict.fromkeys(known))
    same_case = [k for k in known if k.lower() == calc_id.lower() and k != calc_id]
    close = difflib.get_close_matches(calc_id, known, n=limit, cutoff=0.5)
    return list(dict.fromkeys([*same_case, *close]))[:limit]


def unknown_id_advice(calc_id: str, known: Iterable[str], *, claim: bool = False) -> str:
    """Why ``calc_id`` cannot be referenced and which known ids come closest (``claim``: among the tracked claims)."""
    known = list(known)
    what, tracker = ("claim", "track_claim") if claim else ("calculation", "track_calculation")
    if not known:
        return f"'{calc_id}' is not a tracked {what} (nothing is tracked yet: call {tracker} first)"
    near = closest_ids(calc_id, known)
    hint = f"closest tracked ids: {', '.join(near)}" if near else f"tracked ids include: {', '.join(known[:8])}"
    return f"'{calc_id}' is not a tracked {what} ({hint})"
