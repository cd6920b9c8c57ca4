"""SQL databases by URL: snapshot tables (and a query) to the job's Parquet files, then intake them as files.

Public API::

    DatabaseSource.parse(url, tables, query, name)    vet the CLI's URL and selection (no driver needed)
    is_database_url(arg) -> bool
    require_extra()                                   SQLAlchemy + psycopg present, else exit 2 with the install line
    ingest_database(source, job_dir, limits=...) -> DataProfile

SQLAlchemy and psycopg are the optional ``sql`` extra: nothing here imports them until a snapshot is taken.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from insightloom.config import database_password
from insightloom.errors import BadInputError
from insightloom.intake.database.source import (
    INSTALL_HINT,
    SCHEMES,
    DatabaseSource,
    is_database_url,
    redact,
    require_extra,
)
from insightloom.intake.database.store import (
    MANIFEST,
    SnapshotLimits,
    SnapshotTable,
    named_tables,
    plan_views,
    read_manifest,
)
from insightloom.intake.ingest import ingest_tables
from insightloom.intake.profile import DataProfile

logger = logging.getLogger(__name__)

__all__ = [
    "INSTALL_HINT",
    "MANIFEST",
    "SCHEMES",
    "DatabaseSource",
    "SnapshotLimits",
    "ingest_database",
    "is_database_url",
    "redact",
    "require_extra",
]


def ingest_database(
    source: DatabaseSource,
    job_dir: Path,
    *,
    limits: SnapshotLimits,
    columns_file: Path | None = None,
    on_progress: Callable[..., object] | None = None,
    cancelled: Callable[[], bool] | None = None,
    connect: bool = True,
) -> DataProfile:
    """Snapshot ``source`` into ``<job>/data/`` (unless a whole snapshot of it is there), then type, cache and
    profile each table the way files are.

    Args:
        connect: Whether the database may be read: only for a source the user named. A resumed job's source comes
            from request.json, which its scripts can write, so it only reads the snapshot again.

    Raises:
        BadInputError: See :func:`~insightloom.intake.database.snapshot.take_snapshot`; also a snapshot file that
            changed since it was written.
        ConfigError: The ``sql`` extra is not installed.
    """
    job_dir = Path(job_dir)
    data_dir = job_dir / "data"
    found = read_manifest(source, data_dir, job_dir)
    if found is None and not connect:
        raise BadInputError(
            f"{data_dir / MANIFEST}: the job's database snapshot is missing or incomplete, and a resumed job never "
            "connects to a database again (its request.json is in the job folder, which the job's scripts can write).",
            fix=f"start a new job on the database: insightloom run {source.url} with its --table or --query.",
        )
    if found is None:
        tables, aliases = _snapshot(source, data_dir, job_dir, limits, on_progress, cancelled)
    else:
        tables, aliases = found
        logger.info("intake: the snapshot in %s is read again, not the database", data_dir / MANIFEST)
    return ingest_tables(named_tables(tables, data_dir, job_dir), job_dir, aliases=aliases, columns_file=columns_file)


def _snapshot(
    source: DatabaseSource,
    data_dir: Path,
    job_dir: Path,
    limits: SnapshotLimits,
    on_progress: Callable[..., object] | None,
    cancelled: Callable[[], bool] | None,
) -> tuple[list[SnapshotTable], dict[str, str]]:
    require_extra()
    from insightloom.intake.database.snapshot import take_snapshot
    from insightloom.intake.database.store import write_manifest

    parts = source.parts
    password = database_password(parts["host"], parts["port"], parts["database"], parts["user"])
    logger.info("database password: %s", "from " + password[1] if password[0] is not None else "none given")
    views, aliases = plan_views(source)
    data_dir.mkdir(parents=True, exist_ok=True)
    tables = take_snapshot(
        source, views, data_dir, job_dir, limits, password=password, on_progress=on_progress, cancelled=cancelled
    )
    write_manifest(source, tables, aliases, data_dir, job_dir)
    return tables, aliases
