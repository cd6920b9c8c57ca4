"""The fast path of CSV intake: one streaming scan of the bytes, then Arrow's multithreaded parser, in columns.

No whole-file string and no per-cell Python: the scan reads the file in chunks (the longest line, and whether any
CR or control character occurs), and Arrow splits the cells straight from the file into text columns. It takes only
what it reads exactly as the text path (``readers.read_csv``) would: UTF-8 text with at most one byte-order mark,
no title or leading blank rows, and rows that all have the header's width. Anything else (another encoding, ragged
rows, a title above the header, any parser error) makes it step aside, and the text path reads the file with its
own handling and messages. ``tests/intake/test_csv_columnar.py`` holds both paths to the same cells.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.csv as pacsv  # type: ignore[import-untyped]

from insightloom.intake.inputs import MAX_COLUMNS

logger = logging.getLogger(__name__)

#: Bytes read at a time by the scan.
SCAN_CHUNK = 8 * 1024 * 1024
#: Bytes of the file's start decoded for the delimiter sniffer and the title-row check (64 K characters at most).
HEAD_BYTES = 256 * 1024
_BOM = b"\xef\xbb\xbf"
_QUOTE = ord('"')
_NONCHARACTERS = (b"\xef\xbf\xbe", b"\xef\xbf\xbf")  # U+FFFE and U+FFFF in UTF-8
#: Arrow's blocks must hold the longest row; rows of a normal table are far shorter than this.
_MIN_BLOCK = 4 * 1024 * 1024


@dataclass
class ByteScan:
    """What one pass over a file's bytes found.

    Attributes:
        size: The file's size in bytes.
        longest: The longest line's length in bytes (CR, LF and CRLF each end a line).
        longest_start: The offset at which that line starts.
        longest_line: That line's number, from 1 (CRLF is one line end), for the error that names it.
        head: The file's first ``HEAD_BYTES`` bytes.
        has_cr: A CR byte occurs (CRLF or CR-only line ends, or a CR inside a quoted cell).
        has_control: A control character or a noncharacter occurs, which ``strip_control_chars`` removes.
        quotes: How many ``"`` bytes occur: an odd count is an unclosed quote, or a stray one pandas reads as text.
    """

    size: int = 0
    longest: int = 0
    longest_start: int = 0
    longest_line: int = 1
    head: bytes = b""
    has_cr: bool = False
    has_control: bool = False
    quotes: int = 0
    _line_start: int = field(default=0, repr=False)
    _line_ends: int = field(default=0, repr=False)
    _tail: bytes = field(default=b"", repr=False)

    def add(self, chunk: bytes) -> None:
        """Take the next chunk of the file."""
        base = self.size
        if len(self.head) < HEAD_BYTES:
            self.head += chunk[: HEAD_BYTES - len(self.head)]
        values = np.frombuffer(chunk, dtype=np.uint8)
        cr = b"\r" in chunk  # memchr-fast byte tests first: most chunks need no numpy pass beyond the breaks
        self.has_cr = self.has_cr or cr
        breaks = np.flatnonzero((values == 0x0A) | (values == 0x0D) if cr else values == 0x0A)
        if not self.has_control:
            self.has_control = self._control(chunk, values, int(breaks.size)) or self._noncharacter(chunk)
        ends = self._line_end_flags(values, breaks) if cr or self._tail.endswith(b"\r") else None
        self._tail = chunk[-2:]
        self.quotes += chunk.count(b'"')
        if breaks.size:
            starts = np.concatenate(([self._line_start - base], breaks[:-1] + 1))
            lengths = breaks - starts
            i = int(lengths.argmax())
            if lengths[i] > self.longest:
                self.longest, self.longest_start = int(lengths[i]), base + int(starts[i])
                self.longest_line = self._line_ends + (i if ends is None else int(ends[:i].sum())) + 1
            self._line_start = base + int(breaks[-1]) + 1
            self._line_ends += int(breaks.size) if ends is None else int(ends.sum())
        self.size += len(chunk)

    def _line_end_flags(self, values: np.ndarray, breaks: np.ndarray) -> np.ndarray:
        """Which breaks end a line: all but the LF of a CRLF (whose CR may end the chunk before)."""
        previous = values[np.maximum(breaks - 1, 0)]
        if breaks.size and breaks[0] == 0:
            previous[0] = 0x0D if self._tail.endswith(b"\r") else 0
        return ~((values[breaks] == 0x0A) & (previous == 0x0D))

    @property
    def quotes_balanced(self) -> bool:
        """Every quote has its pair, which every well-formed CSV's quotes have."""
        return self.quotes % 2 == 0

    def finish(self) -> ByteScan:
        """Count the last line (one with no line break after it)."""
        if self.size - self._line_start > self.longest:
            self.longest, self.longest_start = self.size - self._line_start, self._line_start
            self.longest_line = self._line_ends + 1
        return self

    @staticmethod
    def _control(chunk: bytes, values: np.ndarray, line_breaks: int) -> bool:
        """A byte below 0x20 that is not a line break or a tab, or DEL."""
        low = int(np.count_nonzero(values < 0x20))
        return b"\x7f" in chunk or (low > line_breaks and low > line_breaks + chunk.count(b"\t"))

    def _noncharacter(self, chunk: bytes) -> bool:
        joined = self._tail + chunk[:2]  # a three-byte sequence may straddle two chunks
        if b"\xef" not in chunk and b"\xef" not in joined:
            return False
        return any(seq in chunk or seq in joined for seq in _NONCHARACTERS)


def scan_bytes(path: Path) -> ByteScan:
    """One chunked pass over ``path``: its longest line, its first bytes, and whether CR or control bytes occur."""
    scan = ByteScan()
    with path.open("rb") as handle:
        while chunk := handle.read(SCAN_CHUNK):
            scan.add(chunk)
    return scan.finish()


def head_text(scan: ByteScan) -> str | None:
    """The file's first characters as text, as the text path decodes them; None when they are not UTF-8 (the text
    path then finds the encoding) or start with more than one byte-order mark."""
    head = scan.head
    if head.startswith(_BOM):
        head = head[len(_BOM) :]
        if head.startswith(_BOM):
            return None
    if scan.size > len(scan.head):
        head = head[: max(head.rfind(b"\n"), head.rfind(b"\r")) + 1]  # whole lines only, no character cut in two
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_cells(path: Path, delimiter: str, scan: ByteScan, na_values: list[str]) -> pa.Table | None:
    """Every row of ``path`` (the header row first) as text columns ``f0``, ``f1``…, with ``na_values`` missing;
    None when Arrow cannot read it exactly as the text path would (not UTF-8, ragged rows, a parse error)."""
    names = [f"f{i}" for i in range(MAX_COLUMNS + 1)]
    try:
        # Arrow's own file (no compression guessed from the name), read off the GIL: a Python handle is not.
        with pa.OSFile(str(path), "rb") as handle:
            table = pacsv.read_csv(
                handle,
                read_options=pacsv.ReadOptions(
                    autogenerate_column_names=True, block_size=max(_MIN_BLOCK, 2 * scan.longest + 2)
                ),
                parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True, ignore_empty_lines=True),
                convert_options=pacsv.ConvertOptions(
                    column_types=dict.fromkeys(names, pa.large_string()),
                    strings_can_be_null=True,
                    quoted_strings_can_be_null=True,
                    null_values=na_values,
                ),
            )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        logger.debug("%s: the columnar reader steps aside (%s); reading it as text", path.name, exc)
        return None
    if scan.quotes and any(_holds_quote(column) for column in table.columns):
        return None  # a quote in a cell: doubled in a quoted cell, or a stray one the two parsers may read apart
    if table.num_columns == 1 and pc.any(pc.match_substring_regex(table.column(0), r"^\s+$")).as_py():
        return None  # one bare cell of blanks on a line: pandas skips the line as blank, Arrow keeps it
    if scan.has_cr:
        table = pa.table({name: _lf_line_breaks(table.column(name)) for name in table.column_names})
    return table


def _holds_quote(column: pa.ChunkedArray) -> bool:
    """A ``"`` among the column's text bytes: one pass over each chunk's value buffer, not a search per cell (the
    buffer may hold bytes beyond the chunk's cells, which can only make this say yes where a cell search says no)."""
    for chunk in column.chunks:
        data = chunk.buffers()[2]
        if data is not None and data.size and bool((np.frombuffer(data, dtype=np.uint8) == _QUOTE).any()):
            return True
    return False


def _lf_line_breaks(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """CRLF and CR inside a quoted cell as LF, as the text path normalizes them before splitting."""
    if not pc.any(pc.match_substring(column, "\r")).as_py():
        return column
    return pc.replace_substring(pc.replace_substring(column, "\r\n", "\n"), "\r", "\n")


def text_series(column: pa.ChunkedArray) -> pd.Series:
    """An Arrow text column as the pandas text Series the text path builds (Arrow-backed, missing as NaN)."""
    return pd.Series(column, dtype="str")
