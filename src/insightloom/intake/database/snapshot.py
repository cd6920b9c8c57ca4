"""Snapshot a database's tables to Parquet in one read-only transaction, streamed in bounded chunks.

Every table (and the query) is read inside one ``REPEATABLE READ, READ ONLY`` transaction, so they are one state of
the database: a row committed elsewhere mid-snapshot is in none of them, and the tables agree with each other. Rows
come through a server-side cursor a chunk at a time and go straight to a Parquet writer, so memory holds one chunk,
whatever the table's size. The row and size limits refuse a table past them (naming the setting), never cut it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

from insightloom.config import SNAPSHOT_ENV
from insightloom.errors import BadInputError, JobCancelled
from insightloom.fileio import atomic_writer, file_digest
from insightloom.intake.database import columns as cols
from insightloom.intake.database.errors import database_error
from insightloom.intake.database.source import SQLALCHEMY_SCHEME, DatabaseSource
from insightloom.intake.database.store import PlannedView, SnapshotLimits, SnapshotTable
from insightloom.intake.inputs import MAX_COLUMNS
from insightloom.intake.readers import unique_names

logger = logging.getLogger(__name__)

#: Cells fetched per chunk (rows times columns): what one chunk may hold in memory as Python objects.
CHUNK_CELLS = 500_000
_MIN_CHUNK_ROWS, _MAX_CHUNK_ROWS = 1_000, 50_000
#: Seconds between two progress events of one table.
PROGRESS_EVERY_S = 1.0
#: Seconds to wait for the server to accept the connection.
CONNECT_TIMEOUT_S = 15

Progress = Callable[..., object]


def take_snapshot(
    source: DatabaseSource,
    views: list[PlannedView],
    data_dir: Path,
    job_root: Path,
    limits: SnapshotLimits,
    *,
    password: tuple[str | None, str],
    on_progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[SnapshotTable]:
    """Read every planned view in one read-only transaction into ``data_dir/<view>.parquet``.

    Args:
        password: The password (or None) and where it came from, for a refusal's fix; it is never logged.

    Raises:
        BadInputError: The server cannot be reached or refuses the login, a table is missing, the query fails, or
            a limit is passed. The message names the table or query and the fix, and never holds the password.
        JobCancelled: The job was cancelled while reading.
    """
    engine = _engine(source, password[0])
    deadline = time.monotonic() + limits.timeout_s
    logger.info("snapshot of %s: %s", source.display, ", ".join(v.label for v in views))
    try:
        with engine.connect() as plain:
            conn = plain.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            with conn.begin():
                # The server stops any one statement (a FETCH of a chunk too) past the timeout; the deadline
                # bounds the whole snapshot.
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, int(limits.timeout_s * 1000))}")
                reader = _Reader(conn, source, job_root, limits, deadline, on_progress, cancelled)
                return [reader.read(view, data_dir / f"{view.view}.parquet") for view in views]
    except sa.exc.SQLAlchemyError as exc:
        raise database_error(exc, source, password, limits.timeout_s) from exc
    finally:
        engine.dispose()


def _engine(source: DatabaseSource, password: str | None) -> Engine:
    """An engine on the vetted URL, the password passed to the driver beside it (never inside the URL)."""
    try:
        url = sa.make_url(f"{SQLALCHEMY_SCHEME}://{source.url.split('://', 1)[1]}")
    except sa.exc.ArgumentError as exc:
        raise BadInputError(
            f"{source.display}: not a valid database URL.", "e.g. postgresql://USER@HOST:5432/DB"
        ) from exc
    args: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "insightloom"}
    if password is not None:
        args["password"] = password
    return sa.create_engine(url, poolclass=NullPool, connect_args=args)


class _Reader:
    """Streams each view of one transaction to Parquet, counting rows and bytes against the limits."""

    def __init__(
        self,
        conn: Connection,
        source: DatabaseSource,
        job_root: Path,
        limits: SnapshotLimits,
        deadline: float,
        on_progress: Progress | None,
        cancelled: Callable[[], bool] | None,
    ) -> None:
        self.conn, self.source, self.job_root, self.limits = conn, source, job_root, limits
        self.deadline, self.on_progress, self.cancelled = deadline, on_progress, cancelled
        self._last_progress = 0.0

    def read(self, view: PlannedView, path: Path) -> SnapshotTable:
        sql = self._select(view)
        result = self.conn.execution_options(stream_results=True, no_parameters=True).exec_driver_sql(sql)
        try:
            columns = cols.describe(result.cursor)
            rows, size = self._write(view, result, columns, path)
        finally:
            result.close()
        digest = file_digest(path, beneath=self.job_root) or ""
        self._progress(view, rows, final=True, size=size)
        return SnapshotTable(view.view, view.label, path.name, rows, path.stat().st_size, digest)

    def _select(self, view: PlannedView) -> str:
        if view.query is not None:
            return view.query.strip().rstrip(";").strip()  # a server-side cursor takes one statement, no ";"
        assert view.table is not None
        schema, _, name = view.table.rpartition(".")
        inspector = sa.inspect(self.conn)
        if not inspector.has_table(name, schema=schema or None):
            known = sorted(inspector.get_table_names(schema=schema or None) + inspector.get_view_names(schema or None))
            where = f"schema {schema!r}" if schema else "the search path"
            raise BadInputError(
                f"{self.source.display}: no table or view {view.table!r} in {where}.",
                f"name one of: {', '.join(known[:30])}." if known else "check the database and schema in the URL.",
            )
        return (
            f"SELECT * FROM {self.conn.dialect.identifier_preparer.format_table(sa.table(name, schema=schema or None))}"
        )

    def _write(self, view: PlannedView, result: Any, columns: list[cols.Column], path: Path) -> tuple[int, int]:
        where = f"{self.source.display} {view.label}"
        if not columns:
            raise BadInputError(f"{where}: returns no columns.", "select at least one column.")
        if len(columns) > MAX_COLUMNS:
            raise BadInputError(f"{where}: has {len(columns):,} columns, over the cap of {MAX_COLUMNS:,}.",
                                "select only the columns the analysis needs in a --query.")  # fmt: skip
        names = unique_names([" ".join(c.name.split()) or f"column_{i + 1}" for i, c in enumerate(columns)])
        arrow_schema = cols.schema(columns, names)
        chunk = max(_MIN_CHUNK_ROWS, min(_MAX_CHUNK_ROWS, CHUNK_CELLS // len(columns)))
        max_bytes = self.limits.max_mb * 1024 * 1024
        rows = size = 0
        with atomic_writer(path, beneath=self.job_root) as handle, pq.ParquetWriter(handle, arrow_schema) as writer:
            while batch := result.fetchmany(chunk):
                rows += len(batch)
                if rows > self.limits.max_rows:
                    raise self._over(where, f"more than {self.limits.max_rows:,} rows", "max_snapshot_rows")
                table = cols.to_table(batch, columns, arrow_schema, where)
                size += table.nbytes
                if size > max_bytes:
                    raise self._over(where, f"more than {self.limits.max_mb:g} MB", "max_snapshot_mb")
                writer.write_table(table)
                self._progress(view, rows)
                self._check_time(where)
            if rows == 0:
                raise BadInputError(f"{where}: has no rows.", "pick a table with rows, or check the query's WHERE.")
        return rows, size

    def _over(self, where: str, what: str, setting: str) -> BadInputError:
        return BadInputError(
            f"{where}: holds {what}, over the {setting} limit; nothing was cut.",
            f"select fewer rows or columns with --query (a WHERE, an aggregate or a LIMIT), or raise {setting} "
            f"(config, or env {SNAPSHOT_ENV[setting]}).",
        )

    def _check_time(self, where: str) -> None:
        if self.cancelled is not None and self.cancelled():
            raise JobCancelled(f"Reading {where} stopped: the job was cancelled.", "start it again if needed.")
        if time.monotonic() > self.deadline:
            raise BadInputError(
                f"{where}: the snapshot took longer than {self.limits.timeout_s:g} s.",
                f"narrow the query, or raise sql_timeout_s (config, or env {SNAPSHOT_ENV['sql_timeout_s']}).",
            )

    def _progress(self, view: PlannedView, rows: int, *, final: bool = False, size: int = 0) -> None:
        now = time.monotonic()
        if self.on_progress is None or (not final and now - self._last_progress < PROGRESS_EVERY_S):
            return
        self._last_progress = now
        message = (
            f"{view.view}: {rows:,} rows snapshotted ({size / 1024 / 1024:,.1f} MB)" if final
            else f"{view.view}: {rows:,} rows read"
        )  # fmt: skip
        self.on_progress(message=message, reason="snapshot", view=view.view, rows=rows, done=final)
