"""View names for parsed tables.

DuckDB checks and ``load_df`` address each table by a view name derived from its file stem (and sheet), so the rule
must be deterministic and identical everywhere: lower-case ASCII letters and digits are kept, every other character
becomes ``_``, a leading digit gets a ``t_`` prefix, and collisions get ``_2``, ``_3``.
"""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)

FIRST_INPUT_ALIAS = "data"


def sanitize(stem: str) -> str:
    """Map a file stem (or ``<stem>_<sheet>``) to a bare SQL-safe identifier, without collision handling.

    Args:
        stem: File stem, possibly with a sheet suffix; any characters.

    Returns:
        The identifier. Each character that is not an ASCII letter or digit becomes ``_`` (one per character, so a
        Korean stem becomes underscores), and a leading digit gets ``t_`` so the name is a valid identifier.
    """
    chars = [ch if ch.isascii() and ch.isalnum() else "_" for ch in stem.lower()]
    name = "".join(chars) or "table"
    if name[0].isdigit():
        name = f"t_{name}"
    return name


def view_name(stem: str, taken: set[str]) -> str:
    """Return the view name for ``stem`` that is not yet in ``taken``.

    ``taken`` is not modified: the caller adds the result once it commits to it, which keeps this a pure function.

    Args:
        stem: File stem (``moon-market-fresh-food-sales``) or ``<stem>_<sheet>``.
        taken: View names and aliases already assigned in this job.

    Returns:
        The sanitized name, with ``_2``, ``_3`` … appended on collision.
    """
    base = sanitize(stem)
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    logger.debug("view name %s taken, using %s_%d", base, base, n)
    return f"{base}_{n}"


def assign_views(stems: list[str]) -> tuple[list[str], dict[str, str]]:
    """View names for inputs in order (table names, say), with the ``data`` alias for the first one.

    The same rule as files: each stem sanitized and made unique, and ``data`` reserved once the first input is named
    (so a later table called ``data`` becomes ``data_2``), naming the first input unless it is ``data`` itself.

    Returns:
        The view names, in the order of ``stems``, and the aliases.
    """
    taken: set[str] = set()
    views: list[str] = []
    aliases: dict[str, str] = {}
    for index, stem in enumerate(stems):
        view = view_name(stem, taken)
        taken.add(view)
        views.append(view)
        if index == 0 and view != FIRST_INPUT_ALIAS:
            aliases[FIRST_INPUT_ALIAS] = view
            taken.add(FIRST_INPUT_ALIAS)
    return views, aliases
