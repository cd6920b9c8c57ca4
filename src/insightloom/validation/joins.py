"""The Validator's guard for numbers computed across a joined view (``orders+customers``).

A calculation whose ``join`` names a joined view was computed, and is re-computed by its check, through a left join
along a foreign key. Its value is only meaningful while that join keeps every child row once, so before such a
number can be verified three things are re-checked, independently of the script that tracked it:

- the recorded join is a foreign key of the profile's ``relationships`` (one-to-one or many-to-one);
- the parent column is still a key in the cached data: DuckDB re-counts it (rows minus distinct values must be 0;
  a NULL or a repeated key would drop or multiply child rows);
- the check (or a claim's test SQL) reads the parent through a ``JOIN``, so DuckDB re-computes the value through the
  join rather than repeating it.

A calculation failing any of them is ``needs_review``, with the reason naming the tables, the keys and the fix.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from insightloom.validation.checks import ConnectionFactory, run_checks
from insightloom.validation.jobfiles import CachedTable

logger = logging.getLogger(__name__)

_JOINABLE = ("one_to_one", "many_to_one")


def _qi(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _steps(join: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(child, step) for every parent of the join record, including those of further views (``also``)."""
    out = []
    for record in [join, *(join.get("also") or [])]:
        if isinstance(record, Mapping):
            out += [(str(record.get("child")), step) for step in record.get("on") or [] if isinstance(step, Mapping)]
    return out


def _foreign_key(profile: Mapping[str, Any], child: str, step: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for fk in (profile.get("relationships") or {}).get("foreign_keys") or []:
        same = (fk.get("child"), fk.get("parent"), fk.get("child_column"), fk.get("parent_column")) == (
            child, step.get("parent"), step.get("child_column"), step.get("parent_column"))  # fmt: skip
        if same and fk.get("cardinality") in _JOINABLE:
            return fk
    return None


def _sql_of(calc: Mapping[str, Any]) -> str:
    test = calc.get("test")
    if calc.get("kind") == "claim" and isinstance(test, Mapping):
        return str(test.get("sql") or "")
    check = calc.get("check")
    return check if isinstance(check, str) and not check.startswith("stat:") else ""


def _link(child: str, step: Mapping[str, Any]) -> str:
    return f"{child}.{step.get('child_column')} -> {step.get('parent')}.{step.get('parent_column')}"


def join_problems(
    calcs: Sequence[Mapping[str, Any]],
    views: Mapping[str, CachedTable],
    profile: Mapping[str, Any],
    *,
    connection_factory: ConnectionFactory | None = None,
) -> dict[int, str]:
    """Why each calculation computed across a join cannot be verified (index -> reason); empty when all hold.

    Args:
        calcs: The tracked calculations.
        views: The job's views (:func:`~insightloom.validation.jobfiles.load_views`).
        profile: The job's profile (its ``relationships``).
        connection_factory: Makes the DuckDB connection (tests pass a counting wrapper).
    """
    problems: dict[int, str] = {}
    keys: dict[tuple[str, str], list[int]] = {}  # (parent, key column) -> calculations relying on it
    for index, calc in enumerate(calcs):
        join = calc.get("join")
        if not isinstance(join, Mapping):
            continue
        sql = _sql_of(calc)
        for child, step in _steps(join):
            parent = str(step.get("parent"))
            if _foreign_key(profile, child, step) is None:
                problems[index] = (
                    f"it was computed across the join {_link(child, step)}, which is no one-to-one or many-to-one "
                    "foreign key of the profile's relationships; re-track it across a joined view the profile lists"
                )
                break
            if sql and not re.search(rf"\bJOIN\s+{re.escape(_qi(parent))}", sql, re.IGNORECASE):
                problems[index] = (
                    f"it was computed across the join {_link(child, step)}, but its check does not read "
                    f'{parent!r} through a JOIN; name the joined view in the check (FROM "{join.get("view")}")'
                )
                break
            keys.setdefault((parent, str(step.get("parent_column"))), []).append(index)
    pending = [(pair, users) for pair, users in keys.items() if pair[0] in views]
    sqls = [f"SELECT COUNT(*) - COUNT(DISTINCT {_qi(column)}) FROM {_qi(parent)}" for (parent, column), _ in pending]
    outcomes, _queries = run_checks(sqls, views, connection_factory=connection_factory) if sqls else ([], 0)
    for ((parent, column), users), outcome in zip(pending, outcomes, strict=True):
        if outcome.error or outcome.value != 0:
            why = outcome.error or f"{outcome.value} row(s) of {parent!r} repeat a {column!r} value or leave it empty"
            for index in users:
                problems.setdefault(
                    index,
                    f"the join to {parent!r} on {column!r} no longer keeps each row once ({why}), so values computed "
                    f"across it would count rows twice or drop them; re-run intake, or aggregate {parent!r} to one "
                    f"row per {column!r}",
                )
    if problems:
        logger.info("%d calculation(s) across a join cannot be verified", len(problems))
    return problems
