"""Read CSV and XLSX files into raw, untyped tables with clean, unique column names.

Reading and typing are separate steps: readers only decode bytes, split cells and build the header; ``coerce``
decides types. Every failure names the file (and the row, when the parser reports one) and the fix.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import logging
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from insightloom.errors import BadInputError, JobCancelled
from insightloom.intake.cell_values import arrow_text
from insightloom.intake.coerce import NA_TOKENS
from insightloom.intake.csv_columnar import ByteScan, head_text, read_cells, scan_bytes, text_series
from insightloom.intake.inputs import MAX_COLUMNS, MAX_LINE_BYTES

logger = logging.getLogger(__name__)

#: Text that is not UTF-8 is decoded with the encoding charset-normalizer finds, if it is this sure of it.
MAX_CHAOS = 0.2
#: What one worksheet may expand to, whatever its compressed size: a few KB of XML can declare billions of cells.
MAX_SHEET_CELLS = 10_000_000
MAX_SHEET_ROWS = 1_048_576
#: Seconds one workbook may take to read before intake gives up on it.
XLSX_DEADLINE_S = 120.0
#: The longest cell intake keeps, in characters (Excel's own cap is 32,767). Longer fields than the csv module's
#: limit (131,072) are read; a cell past this one is refused, naming its row and column.
MAX_CELL_CHARS = 1024 * 1024
#: The longest column name: a name is shown on charts, in the report and in every prompt. A longer "header" is
#: usually a first data row in a file without a header.
MAX_LABEL_CHARS = 1000
_FORMULA_SAMPLE = 50
#: Control characters (not tab or line breaks) and the two noncharacters XML forbids too.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
_CONTROL_CHARS_RE2 = r"[\x{00}-\x{08}\x{0b}\x{0c}\x{0e}-\x{1f}\x{7f}\x{fffe}\x{ffff}]"  # the same, in RE2 syntax
_DELIMITERS = ",;\t|"
# Missing in every column. Softer placeholders ("-", "None", "MISSING") are left to coerce, which drops them only
# where the rest of the column is numbers or dates, so a category "None" stays distinct from an empty cell.
_NA_VALUES = ["", *NA_TOKENS]
_SNIFF_CHARS = 64 * 1024
#: csv.Sniffer sees no quotes: a quoted cell becomes ``x`` and stray quotes go. Its quote regexes scan to the end
#: of the sample from every quote, which is quadratic (64 KB of ',"' took 97 s), and only the delimiters outside
#: quotes tell the delimiter anyway.
_QUOTED_CELL = re.compile(r'"[^"]*"')
_MAX_HEADER_ROWS = 5
#: At most this many title rows ("Table 1: Sales by region, 2019") are skipped above a header.
_MAX_TITLE_ROWS = 3
#: A title row has at most this share of the header's filled cells (or only one cell).
_TITLE_CELL_SHARE = 1 / 3
_YEAR_LABEL_RE = re.compile(r"(18|19|20)\d{2}|2100")
_BODY_SAMPLE = 200
_LINE_RE = re.compile(r"(line|row) (\d+)")


@dataclass
class RawTable:
    """One table as read: cells not yet typed, plus how it was read (for logs and the profile)."""

    frame: pd.DataFrame
    sheet: str | None = None
    encoding: str | None = None
    delimiter: str | None = None
    header_rows: int = 1
    control_chars_removed: int = 0
    title_rows_skipped: int = 0
    title: str | None = None
    #: The database table this was read from (SQLite), which names its view.
    table: str | None = None


# ---------------------------------------------------------------------------------------------------------- CSV


def read_csv(path: Path, *, columnar: bool = True) -> RawTable:
    """Decode, sniff the delimiter and split a CSV; the first row is the header, after any title rows above it.

    CR-only and mixed line endings are read as LF, and extra byte-order marks at the start are dropped. A UTF-8 file
    without title rows is split by Arrow, in columns (``csv_columnar``); any other file is decoded whole and split
    by pandas, with the same cells (``columnar=False`` takes that path for any file).

    Raises:
        BadInputError: Empty, header-only or malformed file, a line or cell over its cap (naming the line, or the
            row and column).
    """
    scan = scan_bytes(path)
    _check_line_lengths(path, scan)
    head = head_text(scan)
    if columnar and scan.quotes_balanced and head is not None and head.strip():
        head = normalize_newlines(head).lstrip("\ufeff")
        delimiter = _delimiter(path, head)
        # Title or blank rows above the header are cut from the text, which only the text path holds.
        if _cut_title_lines(head, delimiter)[0] == head and (table := read_cells(path, delimiter, scan, _NA_VALUES)):
            frame = pd.DataFrame({i: text_series(table.column(i)) for i in range(table.num_columns)})
            return _raw_table(path, frame, encoding="utf-8", delimiter=delimiter, scan=scan)
    text, encoding = decode_bytes(path, path.read_bytes())
    text = normalize_newlines(text).lstrip("\ufeff")
    if not text.strip():
        raise BadInputError(f"{path}: file has no content (only whitespace).", fix="Export the data again.")
    delimiter = _delimiter(path, text)
    text, titles = _cut_title_lines(text, delimiter)
    if titles:
        _log_titles(path.name, titles)
    frame = _parse_csv(path, io.BytesIO(text.encode("utf-8")), delimiter)
    del text
    return _raw_table(path, frame, encoding=encoding, delimiter=delimiter, titles=titles)


def _delimiter(path: Path, text: str) -> str:
    return "\t" if path.suffix.lower() == ".tsv" else sniff_delimiter(text[:_SNIFF_CHARS])


def _raw_table(
    path: Path,
    frame: pd.DataFrame,
    *,
    encoding: str,
    delimiter: str,
    titles: list[str] | None = None,
    scan: ByteScan | None = None,
) -> RawTable:
    """The split rows as a RawTable: the header row cleaned into unique names, the cells checked and cleaned."""
    titles = titles or []
    if len(frame) < 2:
        raise BadInputError(
            f"{path}: has a header row but no data rows.", fix="Export the data again including its rows."
        )
    header = [clean_label(v) for v in frame.iloc[0].tolist()]
    check_labels(path, header)
    body = frame.iloc[1:].reset_index(drop=True)
    body.columns = unique_names([h or f"column_{i + 1}" for i, h in enumerate(header)])
    body = _drop_unnamed_empty(body, header)
    check_cell_lengths(path, body, first_row=len(titles) + 2)
    removed = 0
    if scan is None or scan.has_control:
        body, removed = strip_control_chars(body)
    if removed:
        logger.warning("%s: removed %d control character(s) from cells", path.name, removed)
    logger.info("read %s: %d rows, %d columns, encoding %s, delimiter %r", path.name, *body.shape, encoding, delimiter)
    return RawTable(
        body,
        encoding=encoding,
        delimiter=delimiter,
        control_chars_removed=removed,
        title_rows_skipped=len(titles),
        title=" / ".join(titles) or None,
    )


def _parse_csv(path: Path, source: io.BytesIO, delimiter: str) -> pd.DataFrame:
    """Split the (UTF-8) text into untyped cells; every parser error names the file (and line) and the fix.

    The text goes to pandas as UTF-8 bytes: a StringIO would hold four bytes per character.
    """
    try:
        return pd.read_csv(
            source,
            sep=delimiter,
            header=None,
            dtype=str,
            keep_default_na=False,
            na_values=_NA_VALUES,
            skip_blank_lines=True,
            engine="c",
            encoding="utf-8",
        )
    except pd.errors.EmptyDataError as exc:
        raise BadInputError(f"{path}: file has no rows.", fix="Export the data again with a header row.") from exc
    except (pd.errors.ParserError, csv.Error) as exc:
        raise BadInputError(_malformed_message(path, str(exc), delimiter), fix=_malformed_fix(delimiter)) from exc


def normalize_newlines(text: str) -> str:
    """CRLF and CR-only line endings (old Mac exports, mixed files) as LF, which every later step splits on."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _check_line_lengths(path: Path, scan: ByteScan) -> None:
    """Refuse a line longer than ``MAX_LINE_BYTES`` before parsing: it is no row of a table, and splitting it
    would cost seconds and several times its size in memory. CR, LF and CRLF all end a line, in any encoding
    intake decodes (all are ASCII-compatible)."""
    if scan.longest > MAX_LINE_BYTES:
        raise BadInputError(
            f"{path}: line {scan.longest_line:,} is "
            f"{scan.longest / 1024 / 1024:,.0f} MB long, over the cap of {MAX_LINE_BYTES // 1024 // 1024} MB per line.",
            fix="check that the file is a CSV with one row per line (re-export it), or move very long text out of "
            "the table.",
        )


def check_cell_lengths(path: Path, frame: pd.DataFrame, *, first_row: int, part: str = "") -> None:
    """Refuse a text cell longer than ``MAX_CELL_CHARS``, naming its row (numbered as in the file, the first data
    row being ``first_row``), its column and the part of the file (``sheet 'North'``) when there is one.

    An Arrow text column whose longest cell is within the cap in bytes (a character is at least one) is within it
    in characters, and its byte lengths are its offsets: only a column with a cell that long is measured cell by cell.
    """
    for j, name in enumerate(frame.columns):
        column = frame.iloc[:, j]
        arrow = arrow_text(column)
        if arrow is not None and (pc.max(pc.binary_length(arrow)).as_py() or 0) <= MAX_CELL_CHARS:
            continue
        try:
            lengths = column.str.len().fillna(0).to_numpy()
        except AttributeError:  # no text in this column
            continue
        if lengths.size and lengths.max() > MAX_CELL_CHARS:
            where = f" {part}" if part else ""
            raise BadInputError(
                f"{path}:{where} row {first_row + int(lengths.argmax()):,}, column {name!r} holds a cell of "
                f"{int(lengths.max()):,} characters, over the cap of {MAX_CELL_CHARS:,}.",
                fix="move very long text (documents, encoded files) out of the table, or shorten it, and run again.",
            )


def _cut_title_lines(text: str, delimiter: str) -> tuple[str, list[str]]:
    """Remove title rows (and blank rows) above the header line; return the rest of the text and the titles.

    Only the first lines are split (one physical line per row, which title and header rows are), so this stays
    cheap on large files; pandas then parses the remaining text as before.
    """
    rows: list[list[object]] = []
    for line in _first_lines(text, _MAX_TITLE_ROWS + 2 + _BODY_SAMPLE):
        if line.count('"') % 2:
            break  # a quoted cell spans lines from here: leave the rest to pandas
        try:
            cells = next(csv.reader([line], delimiter=delimiter), [])
        except csv.Error:  # a cell past the csv module's field limit: no title sits here, and pandas reads it
            break
        rows.append([c.strip() or None for c in cells])
    drop, titles = split_title_rows(rows)
    if drop == 0:
        return text, titles
    return text.split("\n", drop)[-1], titles


def _first_lines(text: str, count: int) -> Iterator[str]:
    """The first ``count`` lines of ``text`` (split on LF), without copying the rest of it."""
    start = 0
    for _ in range(count):
        if start >= len(text):
            return
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        yield text[start:end]
        start = end + 1


def _log_titles(name: str, titles: list[str]) -> None:
    logger.info("%s: skipped %d title row(s) above the header: %s", name, len(titles), " / ".join(titles))


def split_title_rows(rows: list[list[object]]) -> tuple[int, list[str]]:
    """Find title rows above the header: how many leading rows to drop, and the title texts.

    A title row has one filled cell, or a few filled cells from the first column on (a title a CSV delimiter split,
    or a row shorter than the header), at most a third of the header's; it starts with text. Up to three of them
    may sit above a row that looks like a header (labels, or years as in a wide table; none repeated as a value
    lower in its column). Empty rows in between are dropped too. Without a title, only leading empty rows go.
    """
    filled = [i for i, row in enumerate(rows[: _MAX_TITLE_ROWS + 2 + _BODY_SAMPLE]) if _filled(row)]
    if not filled:
        return 0, []
    for k in range(1, min(_MAX_TITLE_ROWS, len(filled) - 2) + 1):
        header = rows[filled[k]]
        tops = [rows[i] for i in filled[:k]]
        if all(_is_title_row(row, header) for row in tops) and _header_like(header, [rows[i] for i in filled[k + 1 :]]):
            return filled[k], [" ".join(str(v) for v in row if v is not None) for row in tops]
    return filled[0], []


def _next_filled(rows: list[list[object]], start: int) -> int:
    """Index of the first row at or after ``start`` with a filled cell (``len(rows)`` when none)."""
    return next((i for i in range(start, len(rows)) if _filled(rows[i])), len(rows))


def _filled(row: list[object]) -> int:
    return sum(v is not None for v in row)


def _is_title_row(row: list[object], header: list[object]) -> bool:
    positions = [k for k, v in enumerate(row) if v is not None]
    filled, width = len(positions), _filled(header)
    if width < 2 or positions != list(range(filled)) or not isinstance(row[0], str) or _is_data_like(row[0]):
        return False
    return filled == 1 or filled <= width * _TITLE_CELL_SHARE or len(row) < len(header)


def _header_like(row: list[object], below: list[list[object]]) -> bool:
    """Labels (text, or years naming the columns of a wide table) that do not recur as values below them."""
    cells = [(j, v) for j, v in enumerate(row) if v is not None]
    if len(cells) < 2 or any(_is_data_like(v) and not _YEAR_LABEL_RE.fullmatch(str(v)) for _, v in cells):
        return False
    return not any(j < len(r) and r[j] == v for j, v in cells for r in below)


#: Tie-breaks between encodings that decode a short sample equally well: the common ones first.
_PREFERRED_ENCODINGS = ("cp1252", "cp949", "latin_1", "shift_jis", "gb18030", "big5", "cp1251", "cp1250")


def _preference(encoding: str) -> int:
    name = encoding.lower().replace("-", "_")
    return _PREFERRED_ENCODINGS.index(name) if name in _PREFERRED_ENCODINGS else len(_PREFERRED_ENCODINGS)


def strip_control_chars(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Remove control characters (NUL, ESC ...; not tab or line breaks) from text cells; return how many went.

    They break the DOCX (XML forbids them) and the terminal, and no real value needs them. Arrow-backed text (every
    CSV column) is counted and cleaned by Arrow's RE2 kernels, column at a time; only mixed cells (an XLSX column of
    numbers and text) go cell by cell.
    """
    removed = 0
    for name in frame.columns:
        column = frame[name]
        if arrow_text(column) is not None:
            cleaned, count = _strip_arrow_text(column)
        else:
            cleaned, count = _strip_mixed_cells(column)
        if count:
            frame[name] = cleaned
            removed += count
    return frame, removed


def _strip_arrow_text(column: pd.Series) -> tuple[pd.Series, int]:
    values = pa.array(column)
    count = pc.sum(pc.count_substring_regex(values, _CONTROL_CHARS_RE2)).as_py() or 0
    if not count:
        return column, 0
    cleaned = pc.replace_substring_regex(values, _CONTROL_CHARS_RE2, "")
    return pd.Series(cleaned, index=column.index, name=column.name, dtype=column.dtype), int(count)


def _strip_mixed_cells(column: pd.Series) -> tuple[pd.Series, int]:
    texts = column.map(lambda v: isinstance(v, str))
    if not texts.any():
        return column, 0
    count = int(column[texts].map(lambda v: len(_CONTROL_CHARS.findall(v))).sum())
    if not count:
        return column, 0
    return column.where(~texts, column[texts].map(lambda v: _CONTROL_CHARS.sub("", v))), count


def decode_text(path: Path) -> tuple[str, str]:
    """Read and decode a file as :func:`decode_bytes` does."""
    return decode_bytes(path, path.read_bytes())


def decode_bytes(path: Path, data: bytes) -> tuple[str, str]:
    """Decode as UTF-8 (with or without BOM), else with the encoding charset-normalizer is sure of.

    Raises:
        BadInputError: The bytes are not text (NUL bytes, or no encoding makes sense of them).
    """
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        logger.debug("%s is not UTF-8; detecting its encoding", path.name)
    from charset_normalizer import from_bytes

    matches = sorted(
        from_bytes(data),
        key=lambda m: (round(m.percent_chaos, 1), -round(m.percent_coherence, 1), _preference(m.encoding)),
    )
    best = matches[0] if matches else None
    if best is None or best.percent_chaos > MAX_CHAOS * 100:
        raise BadInputError(
            f"{path}: not a text table, or an encoding that cannot be told apart from noise.",
            fix="re-save the file as CSV UTF-8 (in Excel: Save As > CSV UTF-8).",
        )
    logger.info("%s decoded as %s (not UTF-8)", path.name, best.encoding)
    return str(best), best.encoding


def sniff_delimiter(sample: str) -> str:
    """Guess the delimiter from a sample; fall back to the candidate most frequent in the header, then comma."""
    lines = _QUOTED_CELL.sub("x", sample).replace('"', "").replace("'", "").splitlines()
    if len(lines) > 1 and not sample.endswith(("\n", "\r")):
        lines = lines[:-1]  # the last line of a cut sample is partial
    for skip in range(min(_MAX_TITLE_ROWS, max(len(lines) - 2, 0)) + 1):  # a title row above can defeat the sniffer
        head = "\n".join(lines[skip : skip + 50])
        first = lines[skip] if lines else ""
        try:
            found = csv.Sniffer().sniff(head, delimiters=_DELIMITERS).delimiter
            if first.count(found) > 0:
                return found
        except csv.Error:
            logger.debug("csv.Sniffer could not decide after %d line(s); trying further down", skip)
    first = next((line for line in lines if any(d in line for d in _DELIMITERS)), lines[0] if lines else "")
    counts = {d: first.count(d) for d in _DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > 0 else ","


def _malformed_message(path: Path, detail: str, delimiter: str) -> str:
    match = _LINE_RE.search(detail)
    # pandas counts "line N" from 1 but "row N" (an unterminated quote) from 0.
    where = f" at line {int(match.group(2)) + (match.group(1) == 'row')}" if match else ""
    reason = detail.split("C error: ")[-1].strip()
    return f"{path}: malformed CSV{where} (delimiter {delimiter!r}): {reason}."


def _malformed_fix(delimiter: str) -> str:
    return (
        f"Make every row have the same number of {delimiter!r}-separated fields as the header, and quote cells "
        'that contain the delimiter or line breaks ("a, b"), or re-export the file.'
    )


def _drop_unnamed_empty(body: pd.DataFrame, header: list[str]) -> pd.DataFrame:
    """Trailing delimiters create nameless, empty columns; they carry nothing, so drop them."""
    drop = [body.columns[i] for i, h in enumerate(header) if not h and body.iloc[:, i].isna().all()]
    return body.drop(columns=drop) if drop else body


# --------------------------------------------------------------------------------------------------------- XLSX


def read_xlsx(
    path: Path, *, cancelled: Callable[[], bool] | None = None, max_columns: int = MAX_COLUMNS
) -> list[RawTable]:
    """Read every non-empty worksheet, flattening grouped header rows into unique names.

    Raises:
        BadInputError: Not a readable workbook (any error openpyxl, the zip or the XML parser raises on it), a
            sheet over the caps, or no sheet has data rows.
    """
    try:
        tables = _read_sheets(path, cancelled, max_columns)
        if tables:
            _check_formulas(path, tables)
    except (BadInputError, JobCancelled):
        raise
    except Exception as exc:  # openpyxl raises whatever its zip or XML layer raised on a broken or hostile file
        logger.debug("%s: openpyxl failed", path.name, exc_info=True)
        detail = " ".join(str(exc).split())[:300]  # one line, however long or multi-line the parser's message
        raise BadInputError(
            f"{path}: not a readable .xlsx workbook ({type(exc).__name__}: {detail}).",
            fix="Open it in Excel or LibreOffice and save it again as .xlsx, or export the sheet as CSV.",
        ) from exc
    if not tables:
        raise BadInputError(
            f"{path}: no worksheet has a header row and data rows.", fix="Check that the data is in the workbook."
        )
    return tables


def _read_sheets(path: Path, cancelled: Callable[[], bool] | None, max_columns: int) -> list[RawTable]:
    import openpyxl

    # With defusedxml installed (a dependency), openpyxl's XML parsing refuses entities too; the archive checks
    # in intake.inputs already refused any part with a DTD.
    wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    tables: list[RawTable] = []
    deadline = time.monotonic() + XLSX_DEADLINE_S
    try:
        for ws in wb.worksheets:
            _check_declared_size(path, ws)
            rows = _trim(_bounded_rows(path, ws, deadline, cancelled))
            if rows and len(rows[0]) > max_columns:  # counted once empty columns on the right are trimmed
                raise _too_wide(path, ws.title, len(rows[0]), max_columns)
            table = _sheet_table(path, ws.title, rows)
            if table is not None:
                first = table.title_rows_skipped + table.header_rows + 1
                check_cell_lengths(path, table.frame, first_row=first, part=f"sheet {ws.title!r}")
                table.frame, table.control_chars_removed = strip_control_chars(table.frame)
                tables.append(table)
    finally:
        wb.close()
    return tables


def _too_wide(path: Path, sheet: str, columns: int, max_columns: int) -> BadInputError:
    return BadInputError(
        f"{path}: sheet {sheet!r} has {columns:,} columns, over the cap of {max_columns:,} columns.",
        fix="keep only the columns the analysis needs, or reshape the table to long form (one row per item and "
        "measure), and run again.",
    )


def _too_big(path: Path, sheet: str, what: str) -> BadInputError:
    return BadInputError(
        f"{path}: sheet {sheet!r} {what}, over the cap of {MAX_SHEET_CELLS:,} cells ({MAX_SHEET_ROWS:,} rows).",
        fix="delete empty rows and columns far from the data (a stray cell at the end of the sheet counts), "
        "or export just the table as CSV.",
    )


def _check_declared_size(path: Path, ws: Any) -> None:
    """Refuse a sheet whose declared dimension (cheap to read) is over the caps, before reading any row."""
    rows, cols = ws.max_row, ws.max_column
    if rows and cols and (rows > MAX_SHEET_ROWS or rows * cols > MAX_SHEET_CELLS):
        raise _too_big(path, ws.title, f"declares {rows:,} rows x {cols:,} columns")


def _bounded_rows(
    path: Path, ws: Any, deadline: float, cancelled: Callable[[], bool] | None
) -> Iterator[tuple[object, ...]]:
    """The sheet's rows, streamed, stopping with a clear error past the cell cap or the deadline, or when the job
    is cancelled (checked every thousand rows)."""
    cells = 0
    for count, row in enumerate(ws.iter_rows(values_only=True), start=1):
        cells += len(row)
        if cells > MAX_SHEET_CELLS or count > MAX_SHEET_ROWS:
            raise _too_big(path, ws.title, f"expands past {cells:,} cells")
        if count % 1000 == 0 and cancelled is not None and cancelled():
            raise JobCancelled(f"Reading {path.name} stopped: the job was cancelled.", "start it again if needed.")
        if count % 1000 == 0 and time.monotonic() > deadline:
            raise BadInputError(
                f"{path}: reading sheet {ws.title!r} took over {XLSX_DEADLINE_S:g} s ({count:,} rows so far).",
                fix="export the sheet as CSV, which reads much faster.",
            )
        yield row


def _check_formulas(path: Path, tables: list[RawTable]) -> None:
    """Formulas with no saved result read as empty cells: refuse a column that is only those, warn about others.

    Files written by scripts or some exporters keep formulas but no cached values; Excel or LibreOffice computes
    and saves them when the file is opened and saved. Only the first rows are compared, which is cheap.
    """
    import openpyxl

    wb = openpyxl.load_workbook(path, read_only=True, data_only=False)
    try:
        for table in tables:
            if table.sheet not in wb.sheetnames:
                continue
            ws = wb[table.sheet]
            first = table.title_rows_skipped + table.header_rows + 1
            body = list(ws.iter_rows(min_row=first, max_row=first + _FORMULA_SAMPLE - 1, values_only=True))
            for j, name in enumerate(str(c) for c in table.frame.columns):
                values = table.frame.iloc[:_FORMULA_SAMPLE, j].tolist() if j < table.frame.shape[1] else []
                formulas = [i for i, r in enumerate(body) if j < len(r) and str(r[j]).startswith("=")]
                unsaved = [i for i in formulas if i < len(values) and pd.isna(values[i])]
                if not unsaved:
                    continue
                if table.frame.iloc[:, j].isna().all() and len(unsaved) == len(formulas):
                    raise BadInputError(
                        f"{path}: sheet {table.sheet!r} column {name!r} holds formulas with no saved values.",
                        fix="open the file in Excel or LibreOffice and save it (that stores the results), "
                        "or export the sheet as CSV.",
                    )
                logger.warning(
                    "%s sheet %r column %r: %d of the first %d rows are formulas with no saved value (read as "
                    "empty); open and save the file in Excel or LibreOffice to store their results",
                    path.name,
                    table.sheet,
                    name,
                    len(unsaved),
                    len(body),
                )
    finally:
        wb.close()


def _trim(raw_rows: object) -> list[list[object]]:
    """Normalize cells (strip text, blank -> None), pad rows to one width, drop empty rows and empty right columns."""
    rows: list[list[object]] = []
    for raw in raw_rows:  # type: ignore[attr-defined]
        row = [_clean_cell(v) for v in raw]
        if any(v is not None for v in row):
            rows.append(row)
    width = max((max((i + 1 for i, v in enumerate(r) if v is not None), default=0) for r in rows), default=0)
    return [(r + [None] * width)[:width] for r in rows]


def _clean_cell(v: object) -> object:
    if isinstance(v, str):
        v = v.strip()
        return v or None
    return v


def _sheet_table(path: Path, sheet: str, rows: list[list[object]]) -> RawTable | None:
    drop, titles = split_title_rows(rows)
    if titles:
        _log_titles(f"{path.name} sheet {sheet!r}", titles)
    rows = rows[drop:]
    if len(rows) < 2:
        logger.warning("%s sheet %r has no data rows; skipped", path.name, sheet)
        return None
    depth = header_depth(rows)
    names = flatten_header(rows[:depth])
    check_labels(path, names, part=f"sheet {sheet!r}")
    body = rows[depth:]
    if not body:
        logger.warning("%s sheet %r has only header rows; skipped", path.name, sheet)
        return None
    frame = pd.DataFrame(body, columns=names, dtype=object)
    logger.info("read %s sheet %r: %d rows, %d columns, %d header row(s)", path.name, sheet, *frame.shape, depth)
    return RawTable(
        frame, sheet=sheet, header_rows=depth, title_rows_skipped=len(titles), title=" / ".join(titles) or None
    )


def _is_data_like(v: object) -> bool:
    """A number or date (typed, or as text) is a data cell; a header cell is label text."""
    if isinstance(v, (int, float, dt.date, dt.datetime)):
        return True
    return isinstance(v, str) and bool(re.fullmatch(r"[+-]?[\d.,/:\- %]+", v)) and any(c.isdigit() for c in v)


def header_depth(rows: list[list[object]]) -> int:
    """Count the header rows at the top of a sheet.

    A row is a header row while its cells are label text, it has no number/date where the body has numbers/dates,
    none of its labels occurs as a value lower in the same column, and (from the second row on) the row above is a
    grouped-label row, i.e. has blanks. A plain one-row header therefore gives 1; the minimum is 1.
    """
    limit = min(_MAX_HEADER_ROWS, len(rows) - 1)
    depth = 0
    for i in range(limit):
        row = rows[i]
        if i > 0 and all(v is not None for v in rows[i - 1]):
            break
        if not _looks_like_header(row, rows[i + 1 : i + 1 + _BODY_SAMPLE]):
            break
        depth += 1
    return max(depth, 1)


def _looks_like_header(row: list[object], below: list[list[object]]) -> bool:
    cells = [(j, v) for j, v in enumerate(row) if v is not None]
    if not cells:
        return False
    if any(_is_data_like(v) for _, v in cells):
        return False
    # A label that also appears lower in its column is a value, so this row is already data.
    return not any(r[j] == v for j, v in cells for r in below)


def flatten_header(levels: list[list[object]]) -> list[str]:
    """Join grouped header rows into unique readable names such as ``Group / Subgroup / Field``.

    Group labels sit in their first cell with blanks to the right, so every level but the last is forward-filled
    across, stopping where a higher level starts a new label. An empty field header keeps its group path.
    """
    depth = len(levels)
    width = len(levels[0]) if levels else 0
    filled = [[clean_label(v) for v in level] for level in levels]
    for k in range(depth - 1):
        for j in range(1, width):
            new_parent = any(filled[p][j] and levels[p][j] is not None for p in range(k))
            if not filled[k][j] and not new_parent:
                filled[k][j] = filled[k][j - 1]
    names = []
    for j in range(width):
        parts: list[str] = []
        for k in range(depth):
            label = filled[k][j]
            if label and (not parts or parts[-1] != label):
                parts.append(label)
        names.append(" / ".join(parts) or f"column_{j + 1}")
    return unique_names(names)


def clean_label(v: object) -> str:
    """A header cell as a column name: whitespace collapsed, control characters (a BEL, an ESC) removed, since a
    name reaches the DOCX, whose XML forbids them, and the terminal."""
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return ""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return " ".join(_CONTROL_CHARS.sub("", str(v)).split())


def check_labels(path: Path, names: list[str], *, part: str = "") -> None:
    """Refuse a column name longer than ``MAX_LABEL_CHARS``, naming its position.

    Raises:
        BadInputError: Naming the file (and ``part``, such as ``sheet 'North'``), the column and the fix.
    """
    for j, name in enumerate(names):
        if len(name) > MAX_LABEL_CHARS:
            where = f" {part}" if part else ""
            raise BadInputError(
                f"{path}:{where} the name of column {j + 1} is {len(name):,} characters long, over the cap of "
                f"{MAX_LABEL_CHARS:,} ({name[:40]!r}...).",
                fix="shorten the header, or add a header row if the first row is data, and run again.",
            )


def unique_names(names: list[str]) -> list[str]:
    """Make names unique, case-insensitively (DuckDB identifiers are): repeats become ``Name (2)``, ``Name (3)``."""
    seen: set[str] = set()
    out: list[str] = []
    for name in names:
        candidate, n = name, 2
        while candidate.lower() in seen:
            candidate = f"{name} ({n})"
            n += 1
        seen.add(candidate.lower())
        out.append(candidate)
    return out
