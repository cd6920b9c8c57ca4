"""Joined views in scripts: the pandas frame of ``orders+customers`` and the SQL that lets a check read it.

``load_df("orders+customers")`` and every tracker accept a joined view (:mod:`insightloom.analysis.joins`): the child
left-joined to its parents along the profile's foreign keys. The pandas side merges with ``validate="many_to_one"``,
so data whose parent key repeats is refused however the profile was written. A check names the view as a quoted
identifier (``FROM "orders+customers"``); :func:`expand_joined_views` prefixes the check with the view's definition
as a CTE, so DuckDB re-computes the value through the same join, and returns the join for the calculation's
metadata (``join``), which the Validator re-checks (:mod:`insightloom.validation.joins`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

import pandas as pd

from insightloom.analysis import joins
from insightloom.errors import JoinRefused

logger = logging.getLogger(__name__)

#: A string literal (skipped whole) or a quoted identifier (group 1), so a quote inside a literal is no name.
_MAYBE_JOINED = re.compile(r'"[^"\s]*\+[^"\s]*"')
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"((?:[^\"]|\"\")*)\"")


def joined_frame(profile: dict[str, Any], name: str, load: Any) -> pd.DataFrame:
    """The joined view ``name`` as a DataFrame: the child's rows in order, with the parents' columns.

    Args:
        profile: The job's profile.
        name: The joined view (``orders+customers``).
        load: ``load_df`` for a plain view (passed in: this module sits below the job-folder helpers).

    Raises:
        JoinRefused: The relationships refuse the join, or a parent key repeats in the data (the message names it).
    """
    view = joins.resolve(profile, name)
    frame: pd.DataFrame = load(view.child)
    for step in view.steps:
        parent = load(step.parent)[[step.parent_column, *step.columns]]
        right = parent.rename(columns={step.parent_column: _key_name(frame, step.parent_column)})
        key = right.columns[0]
        try:
            frame = frame.merge(right, how="left", left_on=step.child_column, right_on=key, validate="many_to_one",
                                sort=False)  # fmt: skip
        except pd.errors.MergeError as exc:
            repeats = int(parent[step.parent_column].duplicated().sum())
            raise JoinRefused(
                f"Joining table {view.child!r} to {step.parent!r} on {view.child}.{step.child_column} = "
                f"{step.parent}.{step.parent_column} would multiply rows: {repeats} {step.parent_column!r} value(s) "
                f"repeat in {step.parent!r}, so the data no longer match the profile's relationships.",
                f"re-run intake on the current data, or aggregate {step.parent!r} to one row per "
                f"{step.parent_column!r} first.",
            ) from exc
        if key != step.child_column:
            frame = frame.drop(columns=[key])
    return frame.reset_index(drop=True)


def _key_name(frame: pd.DataFrame, column: str) -> str:
    """A name for the parent's key during the merge that clashes with no child column (dropped afterwards)."""
    name = f"__key_{column}"
    while name in frame.columns:
        name = "_" + name
    return name


def may_name_joined(sql: str) -> bool:
    """A cheap first look: whether the SQL quotes a name with a ``+`` and no space (a joined view name has none)."""
    return bool(_MAYBE_JOINED.search(sql))


def views_in(sql: str, profile: dict[str, Any]) -> list[str]:
    """The joined view names a SQL text quotes (``"orders+customers"``), in order of first mention: quoted names
    whose every ``+``-separated part is a table or alias of the profile (a column may have a ``+`` in its name)."""
    known = {str(t.get("view")) for t in profile.get("tables", [])} | set(profile.get("aliases") or {})
    names = [m.group(1).replace('""', '"') for m in _TOKEN.finditer(sql or "") if m.group(1)]
    joined = [n for n in names if joins.is_joined(n) and all(p in known for p in n.split(joins.JOIN_SEP))]
    return list(dict.fromkeys(joined))


def join_record(names: list[str], profile: dict[str, Any]) -> dict[str, Any] | None:
    """What ``calculation_metadata.json`` records of the joined views a number was computed across (the first one,
    with any further ones under ``also``); None for none.

    Raises:
        JoinRefused: A view the relationships refuse.
    """
    views = [joins.resolve(profile, name) for name in names]
    if not views:
        return None
    record = views[0].record()
    if len(views) > 1:
        record["also"] = [view.record() for view in views[1:]]
    return record


def expand_joined_views(sql: str, profile: dict[str, Any]) -> str:
    """The check with every joined view it names defined as a CTE (unchanged when it names none).

    ``SELECT SUM("amount") FROM "orders+customers" WHERE "segment" = 'Corporate'`` becomes
    ``WITH "orders+customers" AS (SELECT c.*, p1."segment", ... LEFT JOIN "customers" AS p1 ON ...) SELECT * FROM
    (<the check>) AS _joined``, which runs on the Validator's connection like any check.

    Raises:
        JoinRefused: A named joined view the relationships refuse.
    """
    names = views_in(sql, profile)
    if not names or is_expanded(sql):
        return sql
    ctes = ", ".join(f'"{name}" AS ({joins.resolve(profile, name).relation_sql()})' for name in names)
    body = sql.strip()
    while body.endswith(";"):
        body = body[:-1].rstrip()
    # The check nested whole keeps its own WITH clause and a trailing "-- comment" intact.
    return f"WITH {ctes} SELECT * FROM (\n{body}\n) AS _joined"


def is_expanded(sql: str) -> bool:
    """Whether a check already carries its joined views' definitions (re-tracking a stored record)."""
    return sql.lstrip().upper().startswith("WITH ") and ") AS _joined" in sql
