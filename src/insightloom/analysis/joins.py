"""Joined views: a table read through its foreign keys, named ``<child>+<parent>`` (``orders+customers``).

A joined view is the child table left-joined to each parent along the foreign key the profile's ``relationships``
list (intake decided it, :mod:`insightloom.intake.relationships`), so every child row appears exactly once and
gains the parent's columns (NULL where its key finds no parent). The child's own columns win a name clash, and the
parent's key is not repeated. View names never hold ``+`` (DESIGN's rule keeps letters, digits and ``_``), so the
name cannot clash with a table.

Only joins that keep the row count are allowed: the parent side must be a candidate key. A pair the profile lists as
``many_to_many``, a join read from the one side of a one-to-many, or tables no foreign key links are refused with
:class:`~insightloom.errors.JoinRefused`, naming the tables, the keys and the fix.

This module reads only the profile (dicts); the data side (pandas frames, the check's SQL) is
:mod:`insightloom.analysis_utils.joins`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from insightloom.errors import JoinRefused

logger = logging.getLogger(__name__)

JOIN_SEP = "+"
_CHILD_ALIAS = "c"


def _qi(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


@dataclass(frozen=True)
class JoinStep:
    """One parent of a joined view: the foreign key followed and the parent columns it brings."""

    parent: str
    child_column: str
    parent_column: str
    columns: tuple[str, ...]
    cardinality: str
    match_rate: float

    def record(self) -> dict[str, Any]:
        """The step as ``calculation_metadata.json`` records it."""
        return {"parent": self.parent, "child_column": self.child_column, "parent_column": self.parent_column,
                "cardinality": self.cardinality, "match_rate": self.match_rate}  # fmt: skip


@dataclass(frozen=True)
class JoinedView:
    """A child table and the parents it is left-joined to, in the name's order."""

    name: str
    child: str
    steps: tuple[JoinStep, ...]

    def record(self) -> dict[str, Any]:
        """The join as ``calculation_metadata.json`` records it (``join`` of each calculation computed across it)."""
        return {"view": self.name, "child": self.child, "on": [step.record() for step in self.steps]}

    def relation_sql(self) -> str:
        """The SELECT that defines the view over the job's tables (a check's CTE body).

        ``LEFT JOIN`` keeps every child row once, because each parent column joined on is a key; the Validator
        re-counts that key's uniqueness in DuckDB before it trusts a value computed across the join.
        """
        picked = [f"{_CHILD_ALIAS}.*"]
        joins = []
        for index, step in enumerate(self.steps, start=1):
            alias = f"p{index}"
            picked += [f"{alias}.{_qi(column)}" for column in step.columns]
            joins.append(f"LEFT JOIN {_qi(step.parent)} AS {alias} "
                         f"ON {_CHILD_ALIAS}.{_qi(step.child_column)} = {alias}.{_qi(step.parent_column)}")  # fmt: skip
        return f"SELECT {', '.join(picked)} FROM {_qi(self.child)} AS {_CHILD_ALIAS} " + " ".join(joins)


def is_joined(name: str | None) -> bool:
    """Whether a view name names a joined view."""
    return bool(name) and JOIN_SEP in str(name)


def _tables(profile: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(t.get("view")): t for t in profile.get("tables", []) if t.get("view")}


def _known(profile: dict[str, Any]) -> str:
    fks = (profile.get("relationships") or {}).get("foreign_keys") or []
    if not fks:
        return "the profile lists no foreign key between the tables, so analyse each table on its own"
    listed = ", ".join(f"{fk['view']} ({fk['child']}.{fk['child_column']} -> {fk['parent']}.{fk['parent_column']})"
                       for fk in fks)  # fmt: skip
    return f"use a joined view the profile's relationships list: {listed}"


def _m2m_refusal(child: str, parent: str, pair: dict[str, Any]) -> JoinRefused:
    left, right = (pair["left_column"], pair["right_column"]) if pair["left"] == child else (
        pair["right_column"], pair["left_column"])  # fmt: skip
    return JoinRefused(
        f"Joining table {child!r} to {parent!r} on {child}.{left} = {parent}.{right} would multiply rows: the key "
        "repeats on both sides (many-to-many), so every row would be counted once per match and each total would "
        "be inflated.",
        f"aggregate {parent!r} to one row per {right!r} first (load_df({parent!r}).groupby({right!r}).agg(...)) and "
        "compute across that, or analyse each table on its own.",
    )


def _step(profile: dict[str, Any], child: str, parent: str) -> dict[str, Any]:
    """The foreign key from ``child`` to ``parent`` (name-matched first, then the best match rate)."""
    rel = profile.get("relationships") or {}
    fks = [fk for fk in rel.get("foreign_keys") or [] if fk.get("child") == child and fk.get("parent") == parent]
    if fks:
        return sorted(fks, key=lambda fk: (fk.get("matched_by") != "name", -float(fk.get("match_rate") or 0)))[0]
    for pair in rel.get("many_to_many") or []:
        if {pair.get("left"), pair.get("right")} == {child, parent}:
            raise _m2m_refusal(child, parent, pair)
    for fk in rel.get("foreign_keys") or []:
        if fk.get("child") == parent and fk.get("parent") == child:
            raise JoinRefused(
                f"Joining table {child!r} to {parent!r} on {child}.{fk['parent_column']} = "
                f"{parent}.{fk['child_column']} would repeat each {child!r} row once per matching {parent!r} row "
                f"({fk['child_column']!r} is not unique in {parent!r}: one-to-many).",
                f"join the other way, {fk['view']!r} (each {parent!r} row gets its {child!r} columns), or aggregate "
                f"{parent!r} per {fk['child_column']!r} first.",
            )
    raise JoinRefused(
        f"No foreign key of the profile links table {child!r} to {parent!r}, so {child}{JOIN_SEP}{parent} is no view.",
        _known(profile) + ".",
    )


def resolve(profile: dict[str, Any], name: str) -> JoinedView:
    """The joined view ``name`` (``<child>+<parent>[+<parent>...]``; the child may be an alias such as ``data``).

    Raises:
        JoinRefused: An unknown table, or a parent no foreign key of the child allows (the message names the keys,
            the reason and the fix).
    """
    tables = _tables(profile)
    aliases = profile.get("aliases") or {}
    parts = [aliases.get(p.strip(), p.strip()) for p in str(name).split(JOIN_SEP)]
    unknown = [p for p in parts if p not in tables]
    if unknown or len(parts) < 2 or len(set(parts)) < len(parts):
        problem = f"no table {unknown[0]!r}" if unknown else "it names one table twice"
        raise JoinRefused(f"Joined view {name!r}: {problem}.", _known(profile) + f" (tables: {', '.join(tables)}).")
    child, parents = parts[0], parts[1:]
    taken = {str(c.get("name")) for c in tables[child].get("columns", [])}
    steps = []
    for parent in parents:
        fk = _step(profile, child, parent)
        brought = [str(c.get("name")) for c in tables[parent].get("columns", [])]
        columns = tuple(c for c in brought if c != fk["parent_column"] and c not in taken)
        taken.update(columns)
        steps.append(JoinStep(parent, str(fk["child_column"]), str(fk["parent_column"]), columns,
                              str(fk.get("cardinality")), float(fk.get("match_rate") or 0.0)))  # fmt: skip
    return JoinedView(JOIN_SEP.join(parts), child, tuple(steps))


def joined_table(profile: dict[str, Any], name: str) -> dict[str, Any]:
    """The profile entry of a joined view, shaped like a table's: the child's entry (rows, file, semantics) with the
    parents' columns added, each marked ``joined_from``, and the join under ``join``.

    A joined column is missing where the child's key finds no parent: its ``missing`` adds those rows (estimated
    from the match rate), so a sparse join ranks lower as a breakdown.

    Raises:
        JoinRefused: As :func:`resolve`.
    """
    view = resolve(profile, name)
    tables = _tables(profile)
    child = tables[view.child]
    entry = {k: v for k, v in child.items() if k not in ("parquet", "sha256", "bytes", "sheet")}
    rows = int(child.get("rows") or 0)
    columns = [dict(c) for c in child.get("columns", [])]
    for step in view.steps:
        key: dict[str, Any] = next((c for c in child.get("columns", []) if c.get("name") == step.child_column), {})
        matched = round((rows - int(key.get("missing") or 0)) * step.match_rate)
        parent_rows = max(1, int(tables[step.parent].get("rows") or 0))
        for col in tables[step.parent].get("columns", []):
            if col.get("name") in step.columns:
                blank = round(matched * int(col.get("missing") or 0) / parent_rows)  # blanks spread like the keys
                columns.append({**col, "missing": min(rows, rows - matched + blank), "joined_from": step.parent})
    entry.update(view=view.name, columns=columns, join=view.record())
    return entry
