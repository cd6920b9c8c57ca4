"""Stable ASCII ids for calculations, charts and scripts, derived from column names.

Calculation ids must be ASCII snake_case, unique per job and the same on every run (so re-running a script replaces
its numbers). Korean column names are romanised syllable by syllable (Revised Romanization, without sound-change
rules), which keeps ids readable (``매출액`` -> ``maechulaek``); when two names still collide, a short hash of the
original name is appended.
"""

from __future__ import annotations

import hashlib
import logging
import re
from typing import Any

logger = logging.getLogger(__name__)

_INITIALS = ["g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h"]
_MEDIALS = [
    "a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo",
    "u", "wo", "we", "wi", "yu", "eu", "ui", "i",
]  # fmt: skip
_FINALS = [
    "", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l",
    "p", "l", "m", "p", "p", "t", "t", "ng", "t", "t", "k", "t", "p", "t",
]  # fmt: skip
_MAX_SLUG = 40


def romanize(text: str) -> str:
    """Romanise Hangul syllables; other characters pass through unchanged."""
    out = []
    for ch in text:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172:
            initial, rest = divmod(code, 588)
            medial, final = divmod(rest, 28)
            out.append(_INITIALS[initial] + _MEDIALS[medial] + _FINALS[final])
        else:
            out.append(ch)
    return "".join(out)


def short_hash(text: str, length: int = 6) -> str:
    """A short, stable hex digest used to keep sanitised names unique."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:length]


def slug(name: str) -> str:
    """ASCII snake_case for an id part: romanised, lower-case letters and digits, other runs become ``_``.

    A name with nothing usable left (e.g. only symbols or CJK ideographs) becomes ``c_<hash>``.
    """
    text = romanize(str(name)).lower()
    text = re.sub(r"[^a-z0-9]+", "_", text).strip("_")
    if len(text) > _MAX_SLUG:
        text = f"{text[: _MAX_SLUG - 7].rstrip('_')}_{short_hash(str(name))}"
    if not text:
        return f"c_{short_hash(str(name))}"
    if text[0].isdigit():
        text = f"c{text}"
    return text


def slug_map(names: list[str]) -> dict[str, str]:
    """Slugs for a set of names, unique among themselves (hash suffix on collision)."""
    result: dict[str, str] = {}
    used: dict[str, str] = {}
    for name in names:
        base = slug(name)
        candidate = base
        if candidate in used and used[candidate] != name:
            candidate = f"{base}_{short_hash(name)}"
            logger.debug("slug collision for %r, using %s", name, candidate)
        used[candidate] = name
        result[name] = candidate
    return result


def column_stems(table: dict[str, Any]) -> dict[str, str]:
    """Calc id stems of a profile table's columns: the profile's ``calc_id_stem``, else :func:`slug_map`.

    Intake writes ``calc_id_stem`` with :func:`slug_map` over the table's columns, so both give the same ids.
    """
    columns = [c for c in table.get("columns", []) if c.get("name") is not None]
    derived = slug_map([str(c["name"]) for c in columns])
    return {str(c["name"]): str(c.get("calc_id_stem") or derived[str(c["name"])]) for c in columns}
