"""Relationships between a job's tables: candidate keys, foreign keys with their match rate, and the cardinality.

Several inputs (files, sheets) that share keys, such as ``orders.customer_id`` and ``customers.customer_id``, can be
analysed across a join: revenue by a segment that only the customers table holds. Intake finds the keys once, with
DuckDB over the Parquet cache it just wrote, and the profile's ``relationships`` tell every model which joins exist
(docs/related-tables.md):

- a **candidate key** is a unique, non-null column that can hold keys (integers or text; never a measure, date, free
  text or row number), the table's natural id (``id``, ``customer_id`` in ``customers``) first;
- a **foreign key** is a column whose values are found in another table's candidate key. Columns are paired by name
  and type (``customer_id`` = ``customer_id``, or ``customer_id`` → ``customers.id``), and an id-named column also
  by value overlap (at least :data:`VALUE_MATCH_MIN` of its rows found). ``match_rate`` is the share of the child's
  non-null rows whose value the parent key holds; the cardinality is ``one_to_one`` when the child column is
  unique too, else ``many_to_one``;
- a column both tables share by name and type where **neither** side is unique is listed in ``many_to_many``: a
  join along it would multiply rows, so it is refused (``insightloom.analysis.joins``).

Cost is bounded: uniqueness is DuckDB's exact distinct count, one scan per table over at most
:data:`MAX_KEY_COLUMNS` columns; each probe is a hash join of the child column against the parent's distinct
keys, at most :data:`MAX_PROBES` of them, and a child of more than :data:`MATCH_SAMPLE_ROWS` rows is probed on
every k-th row only (``sampled: true`` with ``checked_rows`` says so).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from insightloom.intake.profile import ColumnProfile, TableProfile
from insightloom.intake.roles import is_id_name, normalize_name

logger = logging.getLogger(__name__)

#: A child with more rows than this is probed on a systematic sample (every k-th row) of about this size.
MATCH_SAMPLE_ROWS = 1_000_000
#: Key-capable columns per table whose uniqueness is counted (id-named ones first).
MAX_KEY_COLUMNS = 30
#: Column pairs probed for value overlap over all tables.
MAX_PROBES = 60
#: The least match rate of a pair found by values alone (names differ): a few shared small integers are no key.
VALUE_MATCH_MIN = 0.9
_KEY_DTYPES = {"int64": "int", "string": "text"}
_NEVER_KEY_ROLES = ("date", "text", "rate")
_GENERIC_ID = "id"


@dataclass(frozen=True)
class _Col:
    """One key-capable column with its exact counts."""

    table: int
    view: str
    name: str
    family: str
    rows: int
    nonnull: int
    distinct: int
    id_named: bool

    @property
    def unique(self) -> bool:
        """Every non-null value occurs once."""
        return self.nonnull > 0 and self.distinct == self.nonnull

    @property
    def key(self) -> bool:
        """A candidate key: unique and never null."""
        return self.unique and self.nonnull == self.rows


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _key_capable(col: ColumnProfile) -> bool:
    if col.dtype not in _KEY_DTYPES or col.role in _NEVER_KEY_ROLES or col.semantic == "index":
        return False
    return col.role != "measure" or is_id_name(col.name)  # an amount that happens to be unique is no key


def _singulars(view: str) -> set[str]:
    """``customers`` -> {customers, customer}; ``categories`` -> {category}: what a reference to the table says."""
    out = {view}
    if view.endswith("ies"):
        out.add(view[:-3] + "y")
    elif view.endswith("es"):
        out.update((view[:-2], view[:-1]))
    elif view.endswith("s"):
        out.add(view[:-1])
    return {re.sub(r"[^a-z0-9]", "", s) for s in out}


def _norm(name: str) -> str:
    return normalize_name(name).replace(" ", "")


def _natural(col: _Col) -> bool:
    """The table's own id: ``id``, or ``<table>_id`` / ``<table>_no`` / ``<table>_code``."""
    norm = _norm(col.name)
    return col.id_named and (norm == _GENERIC_ID or any(norm.startswith(s) for s in _singulars(col.view)))


def _name_match(child: _Col, parent: _Col) -> bool:
    """Whether the names pair the columns: equal once normalised (not a bare ``id`` on both sides), or the child
    names the parent table and its key (``customer_id`` -> ``customers.id``)."""
    a, b = _norm(child.name), _norm(parent.name)
    if a == b:
        return a != _GENERIC_ID  # every table's own row id is no reference to another table
    return is_id_name(parent.name) and any(a == s + b for s in _singulars(parent.view))


class _Probe:
    """Runs the DuckDB queries over the cached Parquet files, at most :data:`MAX_PROBES` overlap probes."""

    def __init__(self, tables: Sequence[TableProfile], job_dir: Path) -> None:
        self.tables = tables
        self.paths = [str(job_dir / t.parquet) for t in tables]
        self.con = duckdb.connect()
        self.left = MAX_PROBES

    def close(self) -> None:
        self.con.close()

    def _source(self, index: int) -> str:
        return f"read_parquet({_literal(self.paths[index])})"

    def columns(self, index: int) -> list[_Col]:
        """The table's key-capable columns with exact row, non-null and distinct counts (one scan)."""
        table = self.tables[index]
        capable = [c for c in table.columns if _key_capable(c)]
        capable.sort(key=lambda c: not is_id_name(c.name))
        capable = capable[:MAX_KEY_COLUMNS]
        if not capable or table.rows == 0:
            return []
        terms = ", ".join(f"COUNT({_quote(c.name)}), COUNT(DISTINCT {_quote(c.name)})" for c in capable)
        row = self.con.execute(f"SELECT COUNT(*), {terms} FROM {self._source(index)}").fetchone()
        assert row is not None  # an aggregate always returns a row
        rows = int(row[0])
        counts = [(int(row[1 + 2 * i]), int(row[2 + 2 * i])) for i in range(len(capable))]
        return [_Col(index, table.view, c.name, _KEY_DTYPES[c.dtype], rows, nonnull, distinct, is_id_name(c.name))
                for c, (nonnull, distinct) in zip(capable, counts, strict=True)]  # fmt: skip

    def overlap(self, child: _Col, parent: _Col) -> tuple[int, int, bool] | None:
        """``(checked rows, matched rows, sampled)`` of the child's non-null values found among the parent's; None
        once the probe budget is spent."""
        if self.left <= 0:
            return None
        self.left -= 1
        step = max(1, math.ceil(child.nonnull / MATCH_SAMPLE_ROWS))
        source = self._source(child.table)
        where = f"{_quote(child.name)} IS NOT NULL"
        if step > 1:  # every k-th row: deterministic, and the same rows on every run
            source = f"read_parquet({_literal(self.paths[child.table])}, file_row_number = true)"
            where += f" AND file_row_number % {step} = 0"
        sql = (
            f"SELECT COUNT(*), COUNT(p.k) FROM (SELECT {_quote(child.name)} AS k FROM {source} WHERE {where}) AS c "
            f"LEFT JOIN (SELECT DISTINCT {_quote(parent.name)} AS k FROM {self._source(parent.table)}) AS p "
            "ON c.k = p.k"
        )
        row = self.con.execute(sql).fetchone()
        assert row is not None
        return int(row[0]), int(row[1]), step > 1


def _foreign_key(child: _Col, parent: _Col, found: tuple[int, int, bool], by: str) -> dict[str, Any]:
    checked, matched, sampled = found
    return {
        "child": child.view,
        "child_column": child.name,
        "parent": parent.view,
        "parent_column": parent.name,
        "view": f"{child.view}+{parent.view}",
        "match_rate": round(matched / checked, 4) if checked else 0.0,
        "cardinality": "one_to_one" if child.unique else "many_to_one",
        "matched_by": by,
        "checked_rows": checked,
        "matched_rows": matched,
        "sampled": sampled,
    }


def _pairs(cols: list[list[_Col]]) -> list[tuple[_Col, _Col, bool]]:
    """Every (child column, parent column, paired by name) worth probing, name pairs first, in input order."""
    by_name, by_value = [], []
    for child_cols in cols:
        for parent_cols in cols:
            for child in child_cols:
                for parent in parent_cols:
                    if child.table == parent.table or child.family != parent.family:
                        continue
                    if _name_match(child, parent):
                        if parent.key or (not child.key and child.table < parent.table):  # m2m: once per pair
                            by_name.append((child, parent, True))
                    elif parent.key and child.id_named and not _natural(child) and _natural(parent):
                        by_value.append((child, parent, False))
    return by_name + by_value


def _keep_one_to_one(fks: list[dict[str, Any]], order: dict[str, int]) -> list[dict[str, Any]]:
    """A one-to-one pair is found from both sides: keep the direction whose child is covered best (then the child
    given first), so each pair is listed once."""
    best: dict[frozenset[tuple[str, str]], dict[str, Any]] = {}
    for fk in fks:
        if fk["cardinality"] == "one_to_one":
            pair = frozenset({(fk["child"], fk["child_column"]), (fk["parent"], fk["parent_column"])})
            kept = best.get(pair)
            if kept is None or (fk["match_rate"], -order[fk["child"]]) > (kept["match_rate"], -order[kept["child"]]):
                best[pair] = fk
    chosen = [id(fk) for fk in best.values()]
    return [fk for fk in fks if fk["cardinality"] != "one_to_one" or id(fk) in chosen]


def find_relationships(tables: Sequence[TableProfile], job_dir: Path) -> dict[str, Any]:
    """The profile's ``relationships`` of a job with several tables (see the module doc).

    Args:
        tables: The job's tables as intake profiled them, in input order (their Parquet files already written).
        job_dir: The job folder their ``parquet`` paths are relative to.

    Returns:
        ``{"candidate_keys": [...], "foreign_keys": [...], "many_to_many": [...]}``; empty lists when the tables
        share nothing. A DuckDB failure is logged and gives empty lists: relationships help, they never stop intake.
    """
    result: dict[str, Any] = {"candidate_keys": [], "foreign_keys": [], "many_to_many": []}
    probe = _Probe(tables, job_dir)
    try:
        cols = [probe.columns(i) for i in range(len(tables))]
        for table_cols in cols:
            keys = sorted((c for c in table_cols if c.key), key=lambda c: not _natural(c))
            result["candidate_keys"] += [{"view": c.view, "column": c.name, "natural": _natural(c)} for c in keys]
        fks: list[dict[str, Any]] = []
        for child, parent, named in _pairs(cols):
            found = probe.overlap(child, parent)
            if found is None:
                logger.info("relationships: probe budget of %d spent; further column pairs not compared", MAX_PROBES)
                break
            checked, matched, _sampled = found
            if not matched or (not named and matched < VALUE_MATCH_MIN * checked):
                continue
            if parent.key:
                fks.append(_foreign_key(child, parent, found, "name" if named else "values"))
            else:
                pair = {"left": child.view, "left_column": child.name, "right": parent.view,
                        "right_column": parent.name, "overlap": round(matched / checked, 4)}  # fmt: skip
                result["many_to_many"].append(pair)
        result["foreign_keys"] = _keep_one_to_one(fks, {t.view: i for i, t in enumerate(tables)})
    except duckdb.Error as exc:
        logger.warning("relationships between the tables could not be computed (%s); none are listed", exc)
        return {"candidate_keys": [], "foreign_keys": [], "many_to_many": []}
    finally:
        probe.close()
    logger.info("relationships: %d candidate key(s), %d foreign key(s), %d many-to-many", len(result["candidate_keys"]),
                len(result["foreign_keys"]), len(result["many_to_many"]))  # fmt: skip
    return result
