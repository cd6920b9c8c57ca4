"""Resolve the CLI's DATA arguments and vet each input file before anything parses it.

The checks here are cheap (size, extension, a byte sample) so that a wrong path or a binary file fails in
milliseconds with a message naming the file and the fix, instead of as a pandas traceback.
"""

from __future__ import annotations

import logging
import shutil
import zipfile
from pathlib import Path

from insightloom.errors import BadInputError

logger = logging.getLogger(__name__)

CSV_SUFFIXES = frozenset({".csv", ".tsv"})
XLSX_SUFFIXES = frozenset({".xlsx", ".xlsm"})
DATA_SUFFIXES = CSV_SUFFIXES | XLSX_SUFFIXES
FOLDER_SUFFIXES = frozenset({".csv", ".tsv", ".xlsx", ".xlsm"})
COLUMNS_FILE_NAME = "column_definitions.json"
MAX_FILE_ENV = "INSIGHTLOOM_MAX_FILE_MB"
_SAMPLE_BYTES = 8192
_MAX_CONTROL_SHARE = 0.10


def resolve_inputs(args: list[Path], columns_file: Path | None) -> tuple[list[Path], Path | None]:
    """Expand DATA arguments into data files and an optional column-definitions file.

    Args:
        args: CSV/XLSX files, folders (every .csv/.tsv/.xlsx inside, sorted by name, plus its
            ``column_definitions.json``), or a ``column_definitions.json`` passed directly.
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
            files.extend(_folder_files(path))
            candidate = path / COLUMNS_FILE_NAME
            if candidate.is_file() and columns_file is None:
                found_columns = _one_columns_file(found_columns, candidate)
        elif path.name.lower() == COLUMNS_FILE_NAME:
            found_columns = _one_columns_file(found_columns, path)
        else:
            check_extension(path)
            files.append(path)
    unique = _dedupe(files)
    if not unique:
        named = ", ".join(str(a) for a in args) or "(nothing)"
        raise BadInputError(
            f"No CSV or XLSX data file in: {named}.",
            fix="Pass one or more .csv/.xlsx files, or a folder that contains them.",
        )
    return unique, Path(columns_file) if columns_file is not None else found_columns


def _require_exists(path: Path, *, what: str) -> None:
    if not path.exists():
        raise BadInputError(f"{path}: {what} not found.", fix="Check the path and spelling, then run again.")


def _folder_files(folder: Path) -> list[Path]:
    """List a folder's data files sorted by name, skipping hidden files and Office lock files (``~$x.xlsx``)."""
    found = sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix.lower() in FOLDER_SUFFIXES and not p.name.startswith((".", "~$"))
    )
    if not found:
        raise BadInputError(
            f"{folder}: folder has no .csv or .xlsx files.",
            fix="Put the data files in the folder, or pass the files themselves.",
        )
    return found


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
        else ("Pass a .csv, .tsv or .xlsx file (export other formats to CSV first).")
    )
    raise BadInputError(f"{path}: unsupported file type '{suffix or '(none)'}'.", fix=fix)


def check_file(path: Path, max_file_mb: float) -> None:
    """Vet one data file: exists, supported type, not empty, within the size limit, not binary.

    Raises:
        BadInputError: Naming the file and the fix.
    """
    _require_exists(path, what="data file")
    if not path.is_file():
        raise BadInputError(f"{path}: is not a file.", fix="Pass a .csv or .xlsx file, or a folder of them.")
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
    if path.suffix.lower() in CSV_SUFFIXES:
        _check_text_bytes(path)
    elif path.suffix.lower() in XLSX_SUFFIXES:
        _check_expanded_size(path, limit, max_file_mb)


def _check_expanded_size(path: Path, limit: float, max_file_mb: float) -> None:
    """The size limit applies to what a workbook expands to: a few hundred KB can unzip to gigabytes of cells."""
    try:
        with zipfile.ZipFile(path) as archive:
            expanded = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError):
        return  # not a zip at all: the reader says so with its own message
    if expanded > limit:
        raise BadInputError(
            f"{path}: the workbook expands to {expanded / 1024 / 1024:,.0f} MB, over the max_file_mb limit of "
            f"{max_file_mb:g} MB.",
            fix="export the sheet as CSV, or delete unused rows and columns and save again; "
            f"or raise max_file_mb (env {MAX_FILE_ENV}).",
        )


def _check_text_bytes(path: Path) -> None:
    """A CSV must be text: NUL bytes or many control characters mean a binary file with a wrong name."""
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
