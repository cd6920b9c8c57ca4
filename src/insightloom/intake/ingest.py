"""Intake: copy inputs into the job, parse each table once to Parquet, and write the data profile.

Everything after intake reads ``cache/<view>.parquet`` (pandas in scripts, DuckDB in checks) and
``cache/profile.json`` (prompts), never the raw files, so parsing decisions are made exactly once, here.
"""

from __future__ import annotations

import io
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]

from insightloom.errors import BadInputError, InsightloomError
from insightloom.fileio import write_chunks_atomic, write_text_atomic
from insightloom.intake.budget import check_budget
from insightloom.intake.coerce import Coerced, coerce_column
from insightloom.intake.coldefs import load_column_definitions
from insightloom.intake.column_pool import map_columns
from insightloom.intake.columnar import ReadLimits
from insightloom.intake.inputs import COLUMNS_FILE_NAME, MAX_COLUMNS, SQLITE_SUFFIXES, check_file, copy_into
from insightloom.intake.profile import DataProfile, TableProfile, profile_columns
from insightloom.intake.readers import RawTable
from insightloom.intake.relationships import find_relationships
from insightloom.intake.roles import classify, detect_language, people_context, unit_for
from insightloom.intake.sources import read_source
from insightloom.intake.view_names import FIRST_INPUT_ALIAS, view_name

logger = logging.getLogger(__name__)

PROFILE_FILE = "profile.json"
_LANGUAGE_SAMPLE = 50
_DETAIL_CHARS = 300


def ingest(
    inputs: list[Path],
    job_dir: Path,
    *,
    columns_file: Path | None = None,
    max_file_mb: float = 5120.0,
    cancelled: Callable[[], bool] | None = None,
    max_columns: int = MAX_COLUMNS,
    tables: Sequence[str] = (),
    memory_budget_mb: float | None = None,
    max_job_mb: float = math.inf,
    on_progress: Callable[..., object] | None = None,
) -> DataProfile:
    """Copy inputs into ``<job>/data/``, cache each table as Parquet, and write ``<job>/cache/profile.json``.

    Args:
        inputs: Data files (``inputs.SUPPORTED_TYPES``) in the order given; the first one gets the ``data`` alias.
        job_dir: The job folder.
        columns_file: Optional ``column_definitions.json`` (units and descriptions per column).
        max_file_mb: Largest accepted input, in MB (setting ``max_file_mb``, env ``INSIGHTLOOM_MAX_FILE_MB``).
        max_columns: Widest accepted table (``inputs.MAX_COLUMNS`` unless given).
        tables: The tables to read from each SQLite input (``--table``); every table when empty.
        memory_budget_mb: Intake's memory budget (setting ``memory_budget_mb``; None: ``budget`` picks one).
        max_job_mb: The job folder's quota, which the input copies and their cache must leave room in.
        on_progress: Called with ``message`` (and ``view``, ``rows``) as each file is read and each table cached:
            the ``progress`` events of the CLI and the page.

    Returns:
        The profile that was written.

    Raises:
        BadInputError: A file is missing, empty, header-only, binary, too large or too wide, of an unsupported
            type, malformed or a bomb, or the column definitions are invalid. The message names the file (and row
            or field). Whatever else goes wrong reading a file is one too (see ``_named_errors``): no input ends
            in a traceback.
    """
    if not inputs:
        raise BadInputError("No data files were given.", fix="Pass one or more data files or a folder.")
    paths = [Path(p) for p in inputs]
    _check_tables_option(paths, tables)
    limits = ReadLimits(max_file_mb=max_file_mb, max_columns=max_columns, cancelled=cancelled)
    for path in paths:  # vet everything before copying anything
        with _named_errors(path, path):
            check_file(path, max_file_mb, max_columns)
    check_budget(paths, memory_budget_mb=memory_budget_mb, max_job_mb=max_job_mb)
    progress = on_progress or (lambda **_event: None)
    definitions, cache_dir = _prepare(Path(job_dir), columns_file)
    data_dir = Path(job_dir) / "data"
    copied: set[str] = {COLUMNS_FILE_NAME}

    profiles: list[TableProfile] = []
    texts: list[str] = []  # headers and category values, to tell the report language
    aliases: dict[str, str] = {}
    taken: set[str] = set()
    for index, src in enumerate(paths):
        copy = copy_into(src, data_dir, copied)
        progress(message=f"{src.name}: reading {copy.stat().st_size / 1024 / 1024:,.1f} MB", reason="intake")
        with _named_errors(src, copy):
            raws = read_source(copy, limits, tables)
            views = _name_views(copy, raws, taken, aliases)
            for raw, view in zip(raws, views, strict=True):
                profiles.append(_cache_table(raw, view, copy.name, cache_dir, definitions, texts))
                rows = profiles[-1].rows
                progress(message=f"{view}: {rows:,} rows read, typed and cached", reason="intake", view=view, rows=rows)
        if index == 0 and views[0] != FIRST_INPUT_ALIAS:
            aliases[FIRST_INPUT_ALIAS] = views[0]
            taken.add(FIRST_INPUT_ALIAS)
    return _write_profile(profiles, aliases, texts, definitions, cache_dir)


@dataclass(frozen=True)
class NamedTable:
    """A table another source read (a database snapshot), with its view name and the file it came from."""

    view: str
    file: str
    raw: RawTable


def ingest_tables(
    tables: Iterable[NamedTable], job_dir: Path, *, aliases: dict[str, str], columns_file: Path | None = None
) -> DataProfile:
    """Type, cache and profile tables that were read elsewhere exactly as files are: the same coercion, Parquet
    cache, semantics and profile, so a database table profiles as the same table in a CSV would.

    Args:
        tables: The tables, views already named (``view_names.assign_views``); a generator keeps one in memory.
        aliases: Extra view names (``data`` for the first one).
        columns_file: Optional ``column_definitions.json``.
    """
    definitions, cache_dir = _prepare(Path(job_dir), columns_file)
    profiles: list[TableProfile] = []
    texts: list[str] = []
    for table in tables:
        profiles.append(_cache_table(table.raw, table.view, table.file, cache_dir, definitions, texts))
    return _write_profile(profiles, aliases, texts, definitions, cache_dir)


def _prepare(job_dir: Path, columns_file: Path | None) -> tuple[dict[str, str], Path]:
    """The column definitions (copied into ``data/``) and the cache folder, made."""
    definitions = load_column_definitions(Path(columns_file)) if columns_file is not None else {}
    cache_dir = job_dir / "cache"
    cache_dir.mkdir(parents=True, exist_ok=True)
    if columns_file is not None:
        _copy_columns_file(Path(columns_file), job_dir / "data")
    return definitions, cache_dir


def _write_profile(
    tables: list[TableProfile], aliases: dict[str, str], texts: list[str], definitions: dict[str, str], cache_dir: Path
) -> DataProfile:
    _warn_unused_definitions(definitions, tables)
    # Several tables may share keys: what joins exist is decided here, once, from the cache just written.
    relationships = find_relationships(tables, cache_dir.parent) if len(tables) > 1 else None
    profile = DataProfile(tables=tables, aliases=aliases, language=detect_language(texts), relationships=relationships)
    write_text_atomic(cache_dir / PROFILE_FILE, profile.to_json(), beneath=cache_dir.parent)
    logger.info("intake done: %d table(s), language %s", len(tables), profile.language)
    return profile


@contextmanager
def _named_errors(src: Path, copy: Path) -> Iterator[None]:
    """Make every failure on one input an error naming the user's file (not the job's copy of it).

    An exception that is not ours (a parser's surprise on a hostile file, or a bug) becomes a BadInputError too,
    exit 2 with one line, never exit 1 with a traceback; the warning names its type and the traceback is logged
    at debug level (``-vv``), so a real bug stays visible.
    """
    try:
        yield
    except BadInputError as exc:
        raise BadInputError(exc.message.replace(str(copy), str(src)), exc.fix) from exc
    except InsightloomError:
        raise  # cancelled, or another error with its own exit code
    except Exception as exc:
        logger.warning("%s: intake stopped on an unexpected %s (-vv logs its traceback)", src, type(exc).__name__)
        logger.debug("intake of %s failed", src, exc_info=True)
        detail = " ".join(str(exc).replace(str(copy), str(src)).split())[:_DETAIL_CHARS]
        raise BadInputError(
            f"{src}: intake could not read this file ({type(exc).__name__}: {detail or 'no detail'}).",
            fix="re-export it as CSV (UTF-8) or .xlsx from the program that made it; if a clean export fails too, "
            "report it with the log of a run with -vv.",
        ) from exc


def _check_tables_option(paths: list[Path], tables: Sequence[str]) -> None:
    if tables and not any(p.suffix.lower() in SQLITE_SUFFIXES for p in paths):
        raise BadInputError(
            f"--table {' '.join(tables)}: no input is a SQLite database, so there is no table to choose.",
            fix="pass a .sqlite or .db file with --table, or leave --table out.",
        )
    if any(not name.strip() for name in tables):
        raise BadInputError("--table was given an empty name.", fix="name a table, e.g. --table orders.")


def _copy_columns_file(src: Path, data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    dest = data_dir / COLUMNS_FILE_NAME
    if not (dest.exists() and dest.resolve() == src.resolve()):
        dest.write_bytes(src.read_bytes())


def _name_views(copy: Path, raws: list[RawTable], taken: set[str], aliases: dict[str, str]) -> list[str]:
    """Assign view names: the stem for a one-table file (CSV, Parquet, JSON); the table name for each table of a
    database; ``<stem>_<sheet>`` per sheet plus a ``<stem>`` alias for XLSX."""
    if raws[0].sheet is None:
        views = []
        for raw in raws:
            views.append(view_name(raw.table if raw.table is not None else copy.stem, taken))
            taken.add(views[-1])
        return views
    views = []
    for raw in raws:
        view = view_name(f"{copy.stem}_{raw.sheet}", taken)
        taken.add(view)
        views.append(view)
    alias = view_name(copy.stem, taken)
    taken.add(alias)
    aliases[alias] = views[0]
    return views


def _cache_table(
    raw: RawTable, view: str, file_name: str, cache_dir: Path, definitions: dict[str, str], texts: list[str]
) -> TableProfile:
    """Type every column, write the Parquet once, and profile the typed columns.

    Appends the header and the distinct category values to ``texts`` (for language detection). Columns that look
    numeric but stayed text are listed in the table profile (``text_numeric_columns``), so the job can say so, and
    what typing changed in a column (text levels, joined digit groups) is one of its ``notices``.
    """
    decimal_comma = raw.delimiter == ";"
    cells = raw.frame.size
    names = [str(name) for name in raw.frame.columns]
    # Each column's text is let go once it is typed, so the text and the typed copy of a big table are never held
    # whole at once (the read table is emptied: nothing after typing reads its cells).
    text = {j: raw.frame.iloc[:, j] for j in range(len(names))}
    raw.frame = raw.frame.iloc[:0]

    def typed_column(j: int) -> Coerced:
        return coerce_column(text.pop(j), names[j], decimal_comma=decimal_comma)

    results = map_columns(typed_column, range(len(names)), cells=cells)
    pa.default_memory_pool().release_unused()  # the text's buffers go back to the system, not to Arrow's pool
    typed: dict[str, pd.Series] = {}
    hints: dict[str, str | None] = {}
    numeric_text: list[str] = []
    levels: dict[str, list[dict[str, object]]] = {}
    notices: list[str] = []
    for name, result in zip(names, results, strict=True):
        typed[name], hints[name] = result.series, result.unit_hint
        if result.numeric_text:
            numeric_text.append(name)
        if result.text_levels:
            levels[name] = [{"value": value, "count": count} for value, count in result.text_levels]
        if result.notice:
            notices.append(f"{name}: {result.notice}")
    del results
    frame = pd.DataFrame(typed)
    parquet = cache_dir / f"{view}.parquet"
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="intake-parquet") as writer:
        # The Parquet is encoded on its own thread (Arrow releases the GIL) while the columns are profiled.
        written = writer.submit(_write_parquet, frame, parquet, cache_dir)
        people = people_context(typed)

        def role_of(name: str) -> str:
            return classify(name, typed[name], definitions.get(name), unit_hint=hints[name], people=people)

        roles = dict(zip(names, map_columns(role_of, names, cells=cells), strict=True))
        units = {name: unit_for(name, typed[name], roles[name], definitions.get(name), hints[name]) for name in names}
        # The semantics may refine a role (a year: category); the file name may say what the values are (percent).
        columns = profile_columns(typed, roles, units, definitions, table_name=file_name)
        digest, size = written.result()
    for col in columns:
        col.text_levels = levels.get(col.name)
        texts.append(col.name)
        if col.role == "category":
            texts.extend(str(v) for v in typed[col.name].dropna().unique()[:_LANGUAGE_SAMPLE])
    logger.info("cached %s -> %s (%d rows)", file_name, parquet.name, len(frame))
    return TableProfile(
        view=view,
        file=file_name,
        sheet=raw.sheet,
        table=raw.table,
        parquet=f"cache/{parquet.name}",
        sha256=digest,
        bytes=size,
        rows=len(frame),
        columns=columns,
        encoding=raw.encoding,
        control_chars_removed=raw.control_chars_removed,
        title_rows_skipped=raw.title_rows_skipped,
        text_numeric_columns=numeric_text,
        notices=notices,
    ).annotate(frame)


def _write_parquet(frame: pd.DataFrame, parquet: Path, cache_dir: Path) -> tuple[str, int]:
    """Write the typed table once; its SHA-256 and size.

    Written through the no-follow API, which also hashes what it writes: the profile records the file's SHA-256
    and size, and checks read only a file that still matches them (docs/profile.md, "The Parquet manifest").
    """
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, engine="pyarrow")
    data = buffer.getvalue()
    return write_chunks_atomic(parquet, [data], beneath=cache_dir.parent), len(data)


def _warn_unused_definitions(definitions: dict[str, str], tables: list[TableProfile]) -> None:
    names = {c.name for t in tables for c in t.columns}
    unused = sorted(set(definitions) - names)
    if unused:
        logger.warning("column definitions name columns not in the data: %s", ", ".join(unused))
