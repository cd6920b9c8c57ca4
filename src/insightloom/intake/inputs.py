"""Resolve the CLI's DATA arguments and vet each input file before anything parses it.

The checks here are cheap (size, extension, a byte sample) so that a wrong path or a binary file fails in
milliseconds with a message naming the file and the fix, instead of as a pandas traceback.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import zipfile
import zlib
from pathlib import Path

from insightloom.errors import BadInputError

logger = logging.getLogger(__name__)

CSV_SUFFIXES = frozenset({".csv", ".tsv"})
XLSX_SUFFIXES = frozenset({".xlsx", ".xlsm"})
PARQUET_SUFFIXES = frozenset({".parquet"})
JSON_SUFFIXES = frozenset({".json", ".jsonl", ".ndjson"})
SQLITE_SUFFIXES = frozenset({".sqlite", ".db"})
DATA_SUFFIXES = CSV_SUFFIXES | XLSX_SUFFIXES | PARQUET_SUFFIXES | JSON_SUFFIXES | SQLITE_SUFFIXES
#: The supported types, as messages list them.
SUPPORTED_TYPES = ".csv, .tsv, .xlsx, .parquet, .json, .jsonl, .ndjson, .sqlite or .db"
COLUMNS_FILE_NAME = "column_definitions.json"
#: The keys of a column definitions entry: a .json whose first record has exactly these is definitions, not data.
_COLUMN_DEFINITION_KEYS = frozenset({"column_name", "column_desc"})
#: Bytes of a .json read to find its first record: a definitions entry is a name and a sentence.
_DEFINITIONS_HEAD_BYTES = 64 * 1024
_PARQUET_MAGIC = b"PAR1"
_SQLITE_MAGIC = b"SQLite format 3\x00"
MAX_FILE_ENV = "INSIGHTLOOM_MAX_FILE_MB"
#: The widest table intake reads (CSV header or XLSX sheet). Intake types and profiles every column, and no report
#: discusses thousands of them; a CSV's header is counted from its first bytes, before the file is parsed, so a
#: 10^6-column header is refused in milliseconds instead of filling gigabytes.
MAX_COLUMNS = 4096
#: The longest line a CSV may have, in bytes (and the most read to find its header): a line is one row, and no row
#: of a table is this long. A 200 MB file with no line break is refused before it is parsed.
MAX_LINE_BYTES = 16 * 1024 * 1024
#: Parts (zip members) an XLSX may hold: a workbook has tens; an archive of millions of tiny entries is a bomb.
MAX_XLSX_MEMBERS = 10_000
#: How many times a part over 1 MiB may expand: real sheets compress 10 to 25 times, a zip bomb about 1,000 times.
MAX_XLSX_RATIO = 100
_RATIO_FLOOR_BYTES = 1024 * 1024
#: Bytes of each XML part read to find its prolog (before the root element), where a DTD would be.
_PROLOG_BYTES = 64 * 1024
_UNREADABLE_PART = (zipfile.BadZipFile, NotImplementedError, RuntimeError, EOFError, OSError, ValueError, zlib.error)
_PROLOG_ITEM = re.compile(r"\s+|<\?.*?\?>|<!--.*?-->", re.DOTALL)
_SAMPLE_BYTES = 8192
_MAX_CONTROL_SHARE = 0.10
#: Lines (blank ones skipped) whose fields are counted: title rows may sit above the header.
_HEAD_LINES = 5
#: One or more line breaks (CR, LF or CRLF), with any blank lines between them.
_LINE_BREAKS = re.compile(rb"(?:\r\n|\r|\n)(?:[ \t]*(?:\r\n|\r|\n))*")
_QUOTED = re.compile(rb'"[^"]*"')


def resolve_inputs(args: list[Path], columns_file: Path | None) -> tuple[list[Path], Path | None]:
    """Expand DATA arguments into data files and an optional column-definitions file.

    Args:
        args: Data files (``SUPPORTED_TYPES``), folders (every data file inside, sorted by name, plus its column
            definitions), or a column definitions file passed directly: ``column_definitions.json``, or any .json
            whose first record has exactly the keys ``column_name`` and ``column_desc``.
        columns_file: An explicit ``--columns`` file; it wins over one found in a folder.

    Returns:
        The data files in the order given (folder contents sorted by name), duplicates removed, and the
        column-definitions file or None.

    Raises:
        BadInputError: A path is missing, a file type is unsupported, a folder has no data files, two different
            column definition files were passed, or nothing to analyse was given.
    """
    files: list[Path] = []
    found_columns: Path | None = None
    if columns_file is not None:
        _require_exists(Path(columns_file), what="column definitions file")
    for arg in args:
        path = Path(arg)
        _require_exists(path, what="data path")
        if path.is_dir():
            data, definitions = _folder_files(path)
            files.extend(data)
            for candidate in definitions if columns_file is None else []:
                found_columns = _one_columns_file(found_columns, candidate)
        elif is_column_definitions(path):
            found_columns = _one_columns_file(found_columns, path)
        else:
            check_extension(path)
            files.append(path)
    unique = _dedupe(files)
    if not unique:
        named = ", ".join(str(a) for a in args) or "(nothing)"
        raise BadInputError(
            f"No data file in: {named}.",
            fix=f"Pass one or more data files ({SUPPORTED_TYPES}), or a folder that contains them.",
        )
    return unique, Path(columns_file) if columns_file is not None else found_columns


def _require_exists(path: Path, *, what: str) -> None:
    if not path.exists():
        raise BadInputError(f"{path}: {what} not found.", fix="Check the path and spelling, then run again.")


def _folder_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """A folder's data files and its column definitions files, each sorted by name.

    Hidden files, Office lock files (``~$x.xlsx``) and a ``.db`` that is no SQLite database (Windows'
    ``Thumbs.db``) are skipped.
    """
    found = sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix.lower() in DATA_SUFFIXES and not p.name.startswith((".", "~$"))
    )
    definitions = [p for p in found if is_column_definitions(p)]
    data = [p for p in found if p not in definitions and (p.suffix.lower() != ".db" or _has_magic(p, _SQLITE_MAGIC))]
    if not data:
        raise BadInputError(
            f"{folder}: folder has no data files ({SUPPORTED_TYPES}).",
            fix="Put the data files in the folder, or pass the files themselves.",
        )
    return data, definitions


def is_column_definitions(path: Path) -> bool:
    """Column definitions rather than data: named ``column_definitions.json``, or a .json array whose first record
    has exactly the keys ``column_name`` and ``column_desc`` (read from the file's first bytes only)."""
    if path.name.lower() == COLUMNS_FILE_NAME:
        return True
    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    with path.open("rb") as fh:
        head = fh.read(_DEFINITIONS_HEAD_BYTES).decode("utf-8-sig", errors="replace")
    start = re.match(r"\s*\[\s*", head)
    if start is None:
        return False
    try:
        first, _ = json.JSONDecoder().raw_decode(head, start.end())
    except (ValueError, RecursionError):  # not JSON, a first record past the bytes read, or brackets nested deep:
        return False  # no definitions entry is any of these
    return isinstance(first, dict) and set(first) == _COLUMN_DEFINITION_KEYS


def _has_magic(path: Path, magic: bytes) -> bool:
    with path.open("rb") as fh:
        return fh.read(len(magic)) == magic


def _one_columns_file(current: Path | None, candidate: Path) -> Path:
    if current is not None and current.resolve() != candidate.resolve():
        raise BadInputError(
            f"{candidate}: a second {COLUMNS_FILE_NAME} (already have {current}).",
            fix="Pass only one column definitions file, or name it with --columns.",
        )
    return candidate


def _dedupe(paths: list[Path]) -> list[Path]:
    seen: set[Path] = set()
    out: list[Path] = []
    for p in paths:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def check_extension(path: Path) -> None:
    """Reject file types intake cannot parse, naming a conversion that works."""
    suffix = path.suffix.lower()
    if suffix in DATA_SUFFIXES:
        return
    fix = (
        "Save the sheet as .xlsx (File > Save As) and pass that file."
        if suffix == ".xls"
        else f"Pass a {SUPPORTED_TYPES} file (export other formats to CSV or Parquet first)."
    )
    raise BadInputError(f"{path}: unsupported file type '{suffix or '(none)'}'.", fix=fix)


def check_file(path: Path, max_file_mb: float, max_columns: int = MAX_COLUMNS) -> None:
    """Vet one data file: exists, supported type, not empty, within the size limit, not binary, not too wide, no
    line past ``MAX_LINE_BYTES`` at its start, (XLSX) no zip or XML bomb, (Parquet, SQLite) the format's signature,
    and (JSON) not column definitions.

    Raises:
        BadInputError: Naming the file and the fix.
    """
    _require_exists(path, what="data file")
    if not path.is_file():
        raise BadInputError(f"{path}: is not a file.", fix=f"Pass a {SUPPORTED_TYPES} file, or a folder of them.")
    check_extension(path)
    size = path.stat().st_size
    if size == 0:
        raise BadInputError(f"{path}: file is empty (0 bytes).", fix="Export the data again; the file has no content.")
    limit = max_file_mb * 1024 * 1024
    if size > limit:
        raise BadInputError(
            f"{path}: file is {size / 1024 / 1024:.1f} MB, over the max_file_mb limit of {max_file_mb:g} MB.",
            fix=f"Raise the limit with the max_file_mb setting or env {MAX_FILE_ENV}, or pass a smaller extract.",
        )
    suffix = path.suffix.lower()
    if suffix in CSV_SUFFIXES:
        _check_text_bytes(path)
        _check_head(path, max_columns)
    elif suffix in XLSX_SUFFIXES:
        _check_workbook_archive(path, limit, max_file_mb)
    elif suffix in JSON_SUFFIXES:
        _check_text_bytes(path)
        _check_not_definitions(path)
    elif suffix in PARQUET_SUFFIXES and not _has_magic(path, _PARQUET_MAGIC):
        raise BadInputError(
            f"{path}: not a Parquet file (it does not start with the Parquet signature).",
            fix="write it again as Parquet (pandas, pyarrow, DuckDB or Spark), or export the table as CSV.",
        )
    elif suffix in SQLITE_SUFFIXES and not _has_magic(path, _SQLITE_MAGIC):
        raise BadInputError(
            f"{path}: not a SQLite database (it does not start with the SQLite signature).",
            fix="pass the database file itself (.sqlite or .db made by SQLite), or export its tables as CSV.",
        )


def _check_not_definitions(path: Path) -> None:
    """Column definitions passed where data goes are never read as a table of two columns."""
    if is_column_definitions(path):
        raise BadInputError(
            f"{path}: holds column definitions (entries of column_name and column_desc), not data.",
            fix="pass it with --columns, or beside the data files, and pass the data too.",
        )


def _check_workbook_archive(path: Path, limit: float, max_file_mb: float) -> None:
    """Refuse a zip or XML bomb from the archive's directory and each part's first bytes, before openpyxl opens it.

    Python's zipfile never expands a member past its declared size (a lie ends in a CRC error), so the declared
    sizes bound what reading can cost.
    """
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        logger.debug("%s is not a readable zip (%s); the reader reports it", path.name, exc)
        return  # not a zip at all: the reader says so with its own message
    with archive:
        infos = archive.infolist()
        _check_members(path, infos)
        _check_expanded_size(path, infos, limit, max_file_mb)
        for info in infos:
            _check_prolog(path, archive, info)


def _check_members(path: Path, infos: list[zipfile.ZipInfo]) -> None:
    """Too many parts, or a large part that expands far more than real sheets do: a zip bomb."""
    if len(infos) > MAX_XLSX_MEMBERS:
        raise BadInputError(
            f"{path}: the workbook holds {len(infos):,} parts, over the cap of {MAX_XLSX_MEMBERS:,}.",
            fix="open it in Excel or LibreOffice and save it again as .xlsx, or export the sheet as CSV.",
        )
    for info in infos:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > _RATIO_FLOOR_BYTES and ratio > MAX_XLSX_RATIO:
            raise BadInputError(
                f"{path}: part {info.filename!r} expands {ratio:,.0f} times ({info.compress_size:,} to "
                f"{info.file_size:,} bytes), over the cap of {MAX_XLSX_RATIO} times: a zip bomb, not a workbook.",
                fix="export the data from the program that made it as CSV or a plain .xlsx.",
            )


def _check_expanded_size(path: Path, infos: list[zipfile.ZipInfo], limit: float, max_file_mb: float) -> None:
    """The size limit applies to what a workbook expands to: a few hundred KB can unzip to gigabytes of cells."""
    expanded = sum(info.file_size for info in infos)
    if expanded > limit:
        raise BadInputError(
            f"{path}: the workbook expands to {expanded / 1024 / 1024:,.0f} MB, over the max_file_mb limit of "
            f"{max_file_mb:g} MB.",
            fix="export the sheet as CSV, or delete unused rows and columns and save again; "
            f"or raise max_file_mb (env {MAX_FILE_ENV}).",
        )


def _check_prolog(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Refuse an XML part that declares a DTD: entities in a DTD make XML bombs (billion laughs) and external
    entities read local files. Excel never writes one. Only the prolog (what precedes the root element) can hold a
    DTD, so only the first bytes of each part are read."""
    if info.is_dir():
        return
    try:
        with archive.open(info) as member:
            head = member.read(_PROLOG_BYTES)
    except _UNREADABLE_PART as exc:  # encrypted, corrupt or lying about its size: reading it fails in openpyxl too
        logger.debug("%s: part %r is unreadable (%s)", path.name, info.filename, exc)
        return
    text = _xml_text(head)
    if text is None:
        return  # not XML (an image, a binary part): openpyxl does not parse it as XML
    pos = 0
    while match := _PROLOG_ITEM.match(text, pos):
        pos = match.end()
    rest = text[pos:]
    if rest.startswith("<!") or (not rest and len(head) == _PROLOG_BYTES):
        raise BadInputError(
            f"{path}: part {info.filename!r} declares a document type (DTD) or has an over-long prolog; a workbook "
            "never does, and a DTD's entities can expand a few bytes into gigabytes or read other files.",
            fix="open it in Excel or LibreOffice and save it again as .xlsx, or export the sheet as CSV.",
        )


def _xml_text(head: bytes) -> str | None:
    """The start of an XML part as text (UTF-8 or UTF-16, as XML allows), or None when it is not XML."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or head[:2] in (b"<\x00", b"\x00<"):
        codec = "utf-16" if head.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-16-le" if head[0] else "utf-16-be"
        text = head[: len(head) // 2 * 2].decode(codec, errors="replace")
    else:
        text = head.decode("utf-8-sig", errors="replace")
    return text if text.lstrip().startswith("<") else None


def _check_head(path: Path, max_columns: int) -> None:
    """Count the fields of the first lines from the file's first bytes, before anything parses the whole file.

    A header wider than ``max_columns``, or a first line with no line break within ``MAX_LINE_BYTES``, is refused
    here: parsing either would take minutes and gigabytes. Delimiters inside double quotes are not counted; the
    delimiter is not known yet, so the most frequent candidate counts.
    """
    lines, long_line = _head_lines(path)
    if long_line is not None:
        raise BadInputError(
            f"{path}: line {long_line} is longer than {MAX_LINE_BYTES // 1024 // 1024} MB with no line break, so it "
            "is not a table row.",
            fix="check that the file is a CSV with one row per line (re-export it), or move very long text out of "
            "the table.",
        )
    delimiters = (b"\t",) if path.suffix.lower() == ".tsv" else (b",", b";", b"\t", b"|")
    width = max((max(_QUOTED.sub(b"", line).count(d) for d in delimiters) + 1 for line in lines), default=0)
    if width > max_columns:
        raise BadInputError(
            f"{path}: the header has {width:,} columns, over the cap of {max_columns:,} columns.",
            fix="keep only the columns the analysis needs, or reshape the table to long form (one row per item "
            "and measure), and run again.",
        )


def _head_lines(path: Path) -> tuple[list[bytes], int | None]:
    """The first ``_HEAD_LINES`` non-blank lines from the file's first ``MAX_LINE_BYTES``, and the number of a line
    that runs on past them without a break (None when none does)."""
    with path.open("rb") as fh:
        head = fh.read(MAX_LINE_BYTES + 1)
    lines: list[bytes] = []
    start = 0
    for match in _LINE_BREAKS.finditer(head):  # one match per run of blank lines, so at most _HEAD_LINES rounds
        line = head[start : match.start()]
        start = match.end()
        if line.strip():
            lines.append(line)
            if len(lines) == _HEAD_LINES:
                return lines, None
    if len(head) - start > MAX_LINE_BYTES:
        return lines, line_number(head, start)
    if len(head) <= MAX_LINE_BYTES and head[start:].strip():
        lines.append(head[start:])  # the last line of a small file, with no break after it
    return lines, None


def line_number(data: bytes, offset: int) -> int:
    """The 1-based number of the line that starts at ``offset``, counting CR, LF and CRLF each as one break."""
    before = data[:offset]
    return before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1


def _check_text_bytes(path: Path) -> None:
    """A CSV or JSON file must be text: NUL bytes or many control characters mean a binary file with a wrong name."""
    with path.open("rb") as fh:
        sample = fh.read(_SAMPLE_BYTES)
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")) or sample.count(b"\x00") > max(8, len(sample) // 100):
        raise BadInputError(
            f"{path}: not a text table (it holds binary data or UTF-16 text).",
            fix="Export the data as CSV (UTF-8) or XLSX; if it is UTF-16, re-save it as UTF-8.",
        )
    controls = sum(1 for b in sample if b < 0x20 and b not in (0x09, 0x0A, 0x0C, 0x0D) or b == 0x7F)
    if sample and controls / len(sample) > _MAX_CONTROL_SHARE:
        raise BadInputError(
            f"{path}: not a text table ({controls} of the first {len(sample)} bytes are non-printable).",
            fix="Export the data as CSV (UTF-8) or XLSX and pass that file.",
        )


def copy_into(src: Path, data_dir: Path, taken: set[str]) -> Path:
    """Copy an input into the job's ``data/`` folder under a name not yet used by this job.

    A file already inside ``data/`` (a re-run of intake on the same job) is left in place.

    Returns:
        The path of the copy.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    name = src.name
    stem, suffix = src.stem, src.suffix
    n = 2
    while name in taken:
        name = f"{stem}_{n}{suffix}"
        n += 1
    taken.add(name)
    dest = data_dir / name
    if dest.exists() and dest.resolve() == src.resolve():
        return dest
    shutil.copy2(src, dest)
    logger.info("copied %s -> %s", src, dest)
    return dest
