"""The snapshot in the job folder: ``data/<view>.parquet`` per table or query, and ``data/snapshot.json``.

The manifest is written last, so its presence means the snapshot is whole. A resumed intake reads the files it
lists (after checking their SHA-256) instead of the database, so every later step and every resume sees the rows
read at the first intake, however the database has changed since.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow.parquet as pq  # type: ignore[import-untyped]

from insightloom.errors import BadInputError, InsightloomError
from insightloom.fileio import file_digest, is_regular_file, open_regular, read_json, write_json
from insightloom.intake.database.source import DatabaseSource
from insightloom.intake.ingest import NamedTable
from insightloom.intake.readers import RawTable, check_cell_lengths, check_labels, strip_control_chars
from insightloom.intake.view_names import assign_views
from insightloom.timeutil import utc_now

MANIFEST = "snapshot.json"


@dataclass(frozen=True)
class SnapshotLimits:
    """Per table (or query): most rows, most data in MB; and seconds for the whole snapshot and each statement."""

    max_rows: int
    max_mb: float
    timeout_s: float


@dataclass(frozen=True)
class PlannedView:
    """One view to read: its name, and the table or the query that fills it."""

    view: str
    table: str | None = None
    query: str | None = None

    @property
    def label(self) -> str:
        return f"table {self.table}" if self.table is not None else f"--query (view {self.view})"


@dataclass(frozen=True)
class SnapshotTable:
    """One Parquet file of the snapshot, as the manifest records it."""

    view: str
    source: str
    file: str
    rows: int
    bytes: int
    sha256: str


def plan_views(source: DatabaseSource) -> tuple[list[PlannedView], dict[str, str]]:
    """The views to read, named by the DESIGN's rule from the table names (``schema.`` dropped) and ``--name``."""
    stems = [table.rpartition(".")[2] for table in source.tables]
    if source.query is not None:
        stems.append(source.query_name)
    views, aliases = assign_views(stems)
    planned = [PlannedView(view, table=table) for view, table in zip(views, source.tables, strict=False)]
    if source.query is not None:
        planned.append(PlannedView(views[-1], query=source.query))
    return planned, aliases


def write_manifest(
    source: DatabaseSource, tables: list[SnapshotTable], aliases: dict[str, str], data_dir: Path, job_root: Path
) -> None:
    document = {
        "source": source.to_request(),
        "taken_at": utc_now(),
        "aliases": aliases,
        "tables": [asdict(t) for t in tables],
    }
    write_json(data_dir / MANIFEST, document, beneath=job_root)


def read_manifest(
    source: DatabaseSource, data_dir: Path, job_root: Path
) -> tuple[list[SnapshotTable], dict[str, str]] | None:
    """The whole snapshot of ``source`` already in the job, else None (none yet, or of another source).

    Raises:
        BadInputError: A snapshot file changed since it was written: the rows are no longer the ones read.
    """
    path = data_dir / MANIFEST
    if not is_regular_file(path, beneath=job_root):
        return None
    try:
        document = read_json(path, beneath=job_root)
        if document.get("source") != source.to_request():
            return None
        tables = [SnapshotTable(**entry) for entry in document["tables"]]
        aliases = {str(k): str(v) for k, v in dict(document.get("aliases") or {}).items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError, InsightloomError):
        return None  # unreadable: the snapshot is taken again
    planned, planned_aliases = plan_views(source)
    # The manifest is in the job folder, which scripts can write: its names must be the ones the source plans.
    if [t.view for t in tables] != [p.view for p in planned] or aliases != planned_aliases:
        return None
    if any(t.file != f"{t.view}.parquet" for t in tables):
        return None
    for table in tables:
        if file_digest(data_dir / table.file, beneath=job_root) != table.sha256:
            raise BadInputError(
                f"{data_dir / table.file}: the snapshot of {table.source} changed after intake wrote it.",
                "start a new job with `insightloom run` (it reads the database again).",
            )
    return tables, aliases


def named_tables(tables: list[SnapshotTable], data_dir: Path, job_root: Path) -> Iterator[NamedTable]:
    """Each snapshot file as a raw table for intake, one at a time (only one is in memory at once)."""
    for table in tables:
        yield NamedTable(table.view, table.file, read_raw(data_dir / table.file, job_root))


def read_raw(path: Path, job_root: Path) -> RawTable:
    """A snapshot file as intake's raw table: column names and cells vetted as a CSV's are, control characters
    removed; the cells keep the types the database gave them, and coercion does the rest."""
    with open_regular(path, beneath=job_root) as (handle, _):
        frame = pq.read_table(handle).to_pandas()
    check_labels(path, [str(c) for c in frame.columns])
    check_cell_lengths(path, frame, first_row=1)
    frame, removed = strip_control_chars(frame)
    return RawTable(frame=frame, control_chars_removed=removed)
