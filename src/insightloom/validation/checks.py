"""Run calculation checks in DuckDB, batched.

A check is a SQL query over views named after the inputs; it must return exactly one row and one column. Running
1,000 checks one query at a time on a large table is slow, so checks are combined into a few ``UNION ALL`` queries
(one output row per check). Each branch wraps the check as ``SELECT * FROM (<check>) LIMIT 2`` and serialises the
rows with ``to_json(list(row))``: that way a check with zero rows, two rows or two columns does not break the batch,
and Python can still tell exactly what shape it returned. UNION ALL branches also run as parallel pipelines, which
measured faster than one wide ``SELECT (c1), (c2), ...``.

When a batch errors, it is split in halves until the failing check runs alone, so one bad check names itself and
costs only a few extra queries. Identical check texts run once.

DuckDB never opens a file. Each cached table arrives as the bytes :func:`~insightloom.validation.jobfiles.load_views`
read (without following links) and checked against intake's manifest; here they become an in-memory pyarrow
Parquet dataset that DuckDB scans like a Parquet file (columns and filters pushed down, decoded per scan).

Each check still scans its table, so the scan is what costs: decoding a column from Parquet every time (~6 ms per
1M-row integer column here), while DuckDB's own compressed in-memory storage scans the same column in ~1 ms and
evaluates string equality on its dictionary. So a table that several checks use is loaded into DuckDB once
(decoded by Arrow's threads, then ``CREATE TABLE ... AS``; for hundreds of checks also ``CHECKPOINT``, which is what
compresses an in-memory table) and its Parquet bytes are released; rarely used or very large tables stay in-memory
Parquet. Loading keeps the file's row order, so even order-dependent checks see the same rows.

Checks are written by a model, so after setup the connection can reach no file at all: external access is off (no
``read_parquet``/``read_csv``/``COPY``/``ATTACH`` of any path, and no scan of the host's Python variables), no
directory or path is allowed, spilling to a temporary folder is off (DuckDB allows its temporary folder, ``.tmp``
under the working directory by default, even with external access off), and the configuration is locked.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.dataset as ds  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from insightloom.validation.jobfiles import CachedTable
from insightloom.validation.memo import MEMO_VALUE_CHARS, RecomputeMemo, views_key

logger = logging.getLogger(__name__)

CHUNK_SIZE = 200
# Loading a table costs about two Parquet scans, so it pays off from a few checks on; past the size cap a table stays
# on disk rather than risk memory.
MATERIALIZE_MIN_CHECKS = 4
MATERIALIZE_MAX_BYTES = 512 * 1024 * 1024
# CHECKPOINT compresses a loaded table (about 0.7 s on 4M rows), which pays back only over many scans: measured here,
# 12, 59 and 236 checks on 4M rows ran faster without it, 1,000 string-filter checks on 1M rows twice as fast with it.
CHECKPOINT_MIN_CHECKS = 300
# Up to this size a loaded table is decoded by Arrow first (it is held twice while DuckDB copies it).
ARROW_LOAD_MAX_BYTES = 128 * 1024 * 1024


@dataclass
class CheckOutcome:
    """What one check produced.

    Attributes:
        value: The single value the check returned (meaningful only when ``error`` is empty).
        error: Why the check cannot be used (SQL error, wrong shape); empty when it returned one value.
    """

    value: Any = None
    error: str = ""


ConnectionFactory = Callable[[], Any]
# No extension is ever installed or loaded for a check: Parquet is built in, and a script's sandbox has no home
# folder to install into.
CONNECT_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
_DUCKDB_HINTS = ("Did you mean", "Candidate bindings")
_SOURCE_PREFIX = "__parquet_"  # the in-memory Parquet each view reads; never suggested as a view
_INTERNAL_NAME = re.compile(rf"\b(sqlite_|duckdb_|pg_|information_schema|{_SOURCE_PREFIX})", re.IGNORECASE)
# After setup: no file, no path, no temporary folder, and nothing a check may SET back.
_LOCKDOWN = (
    "SET python_enable_replacements = false",
    "SET temp_directory = ''",
    "SET enable_external_access = false",
    "SET lock_configuration = true",
)


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def clean_check(sql: str) -> tuple[str, str]:
    """Strip trailing semicolons and refuse multi-statement checks.

    Returns:
        ``(sql, error)``; ``error`` is non-empty when the check may not run.
    """
    text = sql.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    if not text:
        return "", "the check is empty"
    if ";" in text and _statements(text) != 1:  # a ';' inside a quoted name ("b;c") is no second statement
        return "", "a check must be a single SQL query (found ';')"
    return text, ""


def _statements(text: str) -> int:
    """How many statements DuckDB's own parser finds (1 when it cannot parse: running the check reports that)."""
    try:
        return len(duckdb.extract_statements(text))
    except duckdb.Error:
        return 1


#: A check must read something; a wrong view name still gets DuckDB's own "does not exist" message.
READS_RE = re.compile(r"\b(?:FROM|JOIN)\b", re.IGNORECASE)


def reads_no_table(names: Sequence[str]) -> str:
    """Why a check that names none of the job's views cannot verify anything, and how to write it."""
    shown = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
    return (
        "the check reads no table, so it re-computes nothing (a constant such as SELECT 12.5 only repeats the value); "
        f"compute the value from the data: SELECT ... FROM <view>, with a view of: {shown}"
    )


def _mentions(checks: Sequence[str], names: Sequence[str]) -> Counter[str]:
    """How many checks name each view (a whole-word, case-insensitive match: a cheap over-estimate is fine)."""
    patterns = {name: re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])", re.IGNORECASE) for name in names}
    counts: Counter[str] = Counter()
    for sql in checks:
        for name, pattern in patterns.items():
            if pattern.search(sql):
                counts[name] += 1
    return counts


def _to_materialize(views: Mapping[str, CachedTable], checks: Sequence[str]) -> set[CachedTable]:
    """The cached tables used by enough checks (counting every name that points to them) to load into DuckDB."""
    mentions = _mentions(checks, list(views))
    uses: Counter[CachedTable] = Counter()
    for name, table in views.items():
        uses[table] += mentions[name]
    return {t for t, count in uses.items() if count >= MATERIALIZE_MIN_CHECKS and len(t.data) <= MATERIALIZE_MAX_BYTES}


def in_memory_parquet(data: bytes) -> Any:
    """A pyarrow dataset over Parquet bytes already in memory, which DuckDB scans without any file access."""
    parquet = ds.ParquetFileFormat()
    fragment = parquet.make_fragment(pa.BufferReader(data))
    return ds.FileSystemDataset([fragment], schema=fragment.physical_schema, format=parquet)


def _decoded(data: bytes) -> Any:
    """Parquet bytes decoded by Arrow's threads (several times faster than DuckDB's scan of the dataset when the
    whole table is loaded anyway), or the lazy dataset for a file too big to hold twice while it loads."""
    if len(data) > ARROW_LOAD_MAX_BYTES:
        return in_memory_parquet(data)
    return pq.read_table(pa.BufferReader(data))


def open_connection(
    views: Mapping[str, CachedTable], factory: ConnectionFactory | None = None, checks: Sequence[str] = ()
) -> Any:
    """A DuckDB connection with one relation per table and alias, that can read no file.

    Args:
        views: View name -> cached table; several names may share one (aliases).
        factory: Makes the connection (tests pass a counting wrapper).
        checks: The checks about to run; tables most of them use are loaded into DuckDB (see the module doc).

    Each file is registered once as in-memory Parquet; all SQL setup then runs in one ``execute`` call, so it costs
    one round trip however many inputs there are, and ends by shutting every way to a file.
    """
    con = factory() if factory is not None else duckdb.connect(config=CONNECT_CONFIG)
    loaded = _to_materialize(views, checks)
    statements: list[str] = []
    relation: dict[CachedTable, str] = {}  # each file's relation: its loaded table, or its in-memory Parquet
    released: list[str] = []
    for name, table in views.items():
        if table not in relation:
            source = f"{_SOURCE_PREFIX}{len(relation)}"
            con.register(source, _decoded(table.data) if table in loaded else in_memory_parquet(table.data))
            if table in loaded:
                statements.append(
                    f"CREATE OR REPLACE TABLE {_quote_ident(name)} AS SELECT * FROM {_quote_ident(source)}"
                )
                relation[table] = name
                released.append(source)
                continue
            relation[table] = source
        statements.append(
            f"CREATE OR REPLACE VIEW {_quote_ident(name)} AS SELECT * FROM {_quote_ident(relation[table])}"
        )
    if released:
        logger.debug("loaded %d table(s) into memory: %s", len(released), ", ".join(relation[t] for t in loaded))
    if released and len(checks) >= CHECKPOINT_MIN_CHECKS:
        statements.append("CHECKPOINT")
    con.execute(";\n".join([*statements, *_LOCKDOWN]))
    for source in released:  # loaded into DuckDB: the Parquet bytes are no longer needed
        con.unregister(source)
    return con


def _branch(index: int, sql: str) -> str:
    # Newlines around the check keep a trailing "-- comment" from swallowing the closing parenthesis.
    return f"SELECT {index} AS i, (SELECT to_json(list(_r)) FROM (SELECT * FROM (\n{sql}\n) AS _c LIMIT 2) AS _r) AS v"


def _count_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Keep every column, even when names repeat, so the column count is exact.
    return {f"{n}#{k}": v for n, (k, v) in enumerate(pairs)}


def _decode(payload: str | None) -> CheckOutcome:
    if payload is None:
        return CheckOutcome(error="the check returned no rows; it must return exactly one row and one column")
    rows = json.loads(payload, object_pairs_hook=_count_pairs)
    if len(rows) != 1:
        return CheckOutcome(error="the check returned more than one row; it must return exactly one row")
    columns = list(rows[0].values())
    if len(columns) != 1:
        return CheckOutcome(error=f"the check returned {len(columns)} columns; it must return exactly one")
    return CheckOutcome(value=columns[0])


def _run_batch(con: Any, batch: Sequence[tuple[int, str]]) -> dict[int, CheckOutcome]:
    sql = "\nUNION ALL\n".join(_branch(index, check) for index, check in batch)
    rows = con.execute(sql).fetchall()
    return {int(index): _decode(payload) for index, payload in rows}


def duckdb_message(exc: Exception) -> str:
    """DuckDB's error in one line: its first line, plus its own suggestion ("Did you mean ...", "Candidate
    bindings: ...") when it gives one, since that names the fix."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    hints = [line for line in lines[1:] if line.startswith(_DUCKDB_HINTS) and not _INTERNAL_NAME.search(line)]
    return f"{lines[0]} ({hints[0]})" if hints else lines[0]


def _run_split(con: Any, batch: Sequence[tuple[int, str]], stats: dict[str, int]) -> dict[int, CheckOutcome]:
    """Run a batch; on error, bisect until the failing checks run alone and report their own errors."""
    stats["queries"] += 1
    try:
        return _run_batch(con, batch)
    except duckdb.Error as exc:
        if len(batch) == 1:
            return {batch[0][0]: CheckOutcome(error=f"the check failed in DuckDB: {duckdb_message(exc)}")}
    middle = len(batch) // 2
    results = _run_split(con, batch[:middle], stats)
    results.update(_run_split(con, batch[middle:], stats))
    return results


def run_checks(
    checks: Sequence[str],
    views: Mapping[str, CachedTable],
    *,
    chunk_size: int = CHUNK_SIZE,
    connection_factory: ConnectionFactory | None = None,
    memo: RecomputeMemo | None = None,
) -> tuple[list[CheckOutcome], int]:
    """Run every check on one connection, in chunks.

    Args:
        checks: SQL text per calculation (same order as the outcomes returned).
        views: View name -> cached table (from :func:`~insightloom.validation.jobfiles.load_views`).
        chunk_size: Checks per query; ~200 keeps each query plan small.
        connection_factory: Makes the DuckDB connection (tests pass a counting wrapper).
        memo: Outcomes of checks already run on the same data (the host's :mod:`~insightloom.validation.memo`);
            those are not run again, and the new ones are added.

    Returns:
        One outcome per check, and the number of check queries run (setup excluded).
    """
    outcomes: list[CheckOutcome] = [CheckOutcome() for _ in checks]
    first_of: dict[str, int] = {}  # identical checks run once; their copies share the outcome
    copies: list[tuple[int, int]] = []
    runnable: list[tuple[int, str]] = []
    names = sorted(views)
    data = views_key(views)
    for index, raw in enumerate(checks):
        sql, error = clean_check(raw)
        if not error and not READS_RE.search(sql):
            error = reads_no_table(names)
        known = memo.get((data, "check", sql)) if memo is not None and not error else None
        if error:
            outcomes[index] = CheckOutcome(error=error)
        elif known is not None:
            outcomes[index] = known
        elif sql in first_of:
            copies.append((index, first_of[sql]))
        else:
            first_of[sql] = index
            runnable.append((index, sql))
    if not runnable:
        return outcomes, 0
    stats = {"queries": 0}
    sql_of = dict(runnable)
    con = open_connection(views, connection_factory, [sql for _, sql in runnable])
    try:
        for start in range(0, len(runnable), chunk_size):
            for index, outcome in _run_split(con, runnable[start : start + chunk_size], stats).items():
                outcomes[index] = outcome
                if memo is not None and len(str(outcome.value)) <= MEMO_VALUE_CHARS:
                    memo.put((data, "check", sql_of[index]), outcome)
    finally:
        con.close()
    for index, original in copies:
        outcomes[index] = outcomes[original]
    logger.info("ran %d distinct checks in %d queries", len(runnable), stats["queries"])
    return outcomes, stats["queries"]
