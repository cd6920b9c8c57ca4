"""Hostile data files through the real CLI: each must end in exit 0, 2 or 3, quickly, in bounded memory, never 1.

The corpus is generated (nothing is committed): wide headers, zip and XML bombs, long lines and fields, CR-only and
mixed line endings, NUL bytes, byte-order-mark mixes, deep JSON, formula cells, binary garbage and the degenerate
tables (empty, header only, one column, one row). Every file runs as
``python -m insightloom run FILE -r "Analyze this data" --yes --provider offline --job-dir DIR`` in its own process
group, and the run is measured: its exit code, wall seconds, when intake was over (seconds from the start of the
CLI process, so its ~3-6 s of imports count) and peak resident memory (the largest of the CLI and every process it
waited for, reported by a small wrapper). tests/intake/test_hostile_corpus.py runs the same cases.

Two bounds: intake must be over (the file refused, or read and cached) within ``TIMEOUT_S`` of the start, and a file
that intake refuses is killed there. A file that is read goes on to a whole offline job (agents, sandboxed scripts,
the DOCX), which takes 9-27 s on this shared 2-core machine, so that run is killed only at ``JOB_TIMEOUT_S``.

Usage::

    python benchmarks/hostile_inputs.py [--only NAME ...] [--workers 2] [--timeout 15] [--job-timeout 60]

It prints one Markdown row per file and, last, ``files=<n> bad=<n>``; it exits 1 when any file ended outside its
expected exit codes, past a bound, over the memory bound or with a traceback.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

#: Seconds from the CLI's start until intake is over (refused, or read): the "bad inputs end fast" bound.
TIMEOUT_S = 15.0
#: Seconds a whole job on a file that was read may run before it is killed: a hang guard, not a speed claim.
JOB_TIMEOUT_S = 60.0
MAX_PEAK_MB = 2048
REQUEST = "Analyze this data"
#: A whole job ends completed (0) or needs_review (3); a refused input ends 2.
JOB = frozenset({0, 3})
REFUSED = frozenset({2})
_MIB = 1024 * 1024
_MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"

Build = Callable[[Path], list[str]]


@dataclass(frozen=True)
class Case:
    """One hostile input: how to write it (returns the CLI arguments before ``-r``) and the exits it may end in."""

    name: str
    build: Build
    exits: frozenset[int]
    #: What a refusal's message must say (case-insensitive).
    says: str = ""
    #: How the released code mishandled it, when it did (for the table).
    why: str = ""
    #: Rows and column names the profile must show when the file is read.
    rows: int | None = None
    columns: tuple[str, ...] | None = None

    @property
    def whole_job(self) -> bool:
        """True when the input is read and a whole job runs (the Supervisor stage)."""
        return bool(self.exits & JOB)


@dataclass
class Outcome:
    """How one run ended."""

    case: Case
    exit: int | None  # None: killed at the timeout
    seconds: float
    #: Seconds from the start until intake was over (the next stage began, or the CLI exited); None: never.
    intake_s: float | None
    peak_mb: float
    stderr: str = field(repr=False)
    #: The first table of ``cache/profile.json`` (None when intake wrote none).
    table: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def problems(self) -> list[str]:
        """What is wrong with this run (empty when it met every bound)."""
        out = []
        if self.exit is None:
            out.append(f"still running after {self.seconds:.0f} s (killed)")
        if self.intake_s is None or self.intake_s > TIMEOUT_S:
            out.append(f"intake not over within {TIMEOUT_S:g} s of the start")
        elif self.exit not in self.case.exits:
            out.append(f"exit {self.exit}, expected {sorted(self.case.exits)}")
        if self.peak_mb > MAX_PEAK_MB:
            out.append(f"peak {self.peak_mb:,.0f} MB over {MAX_PEAK_MB:,} MB")
        if "Traceback" in self.stderr:
            out.append("a traceback on stderr")
        if self.exit == 2 and not ("Fix" in self.stderr and self.case.says.lower() in self.stderr.lower()):
            out.append(f"the refusal does not say {self.case.says!r} and a fix")
        if self.exit in JOB:
            out.extend(self._read_problems())
        return out

    def _read_problems(self) -> list[str]:
        table = self.table or {}
        rows, names = table.get("rows"), tuple(c["name"] for c in table.get("columns", []))
        out = []
        if self.case.rows is not None and rows != self.case.rows:
            out.append(f"read {rows} rows, expected {self.case.rows}")
        if self.case.columns is not None and names != self.case.columns:
            out.append(f"read columns {names!r}, expected {self.case.columns!r}")
        return out

    def row(self) -> str:
        code = "timeout" if self.exit is None else str(self.exit)
        verdict = "ok" if not self.problems else "BAD: " + "; ".join(self.problems)
        peak = f"{self.peak_mb:,.0f}" if self.peak_mb else "-"
        intake = "-" if self.intake_s is None else f"{self.intake_s:.1f}"
        return f"| {self.case.name} | {code} | {intake} | {self.seconds:.1f} | {peak} | {verdict} | {self.case.why} |"


# ------------------------------------------------------------------------------------------------- file writers


def _write(folder: Path, name: str, data: bytes) -> list[str]:
    path = folder / name
    path.write_bytes(data)
    return [str(path)]


def _text(name: str, text: str, encoding: str = "utf-8") -> Build:
    return lambda folder: _write(folder, name, text.encode(encoding))


def _raw(name: str, data: bytes | Callable[[], bytes]) -> Build:
    return lambda folder: _write(folder, name, data() if callable(data) else data)


def _rows(n: int, seed: int = 7) -> str:
    """A small table a whole job reads quickly: a region and a revenue per row."""
    rng = random.Random(seed)
    lines = ["region,revenue"] + [
        f"{rng.choice(['north', 'south', 'east'])},{rng.randint(4, 90) * 2.5:.2f}" for _ in range(n)
    ]
    return "\n".join(lines) + "\n"


def _wide(columns: int, rows: int = 2, newline: bool = True) -> Build:
    """A header of ``columns`` names and a few rows of ones, written line by line."""

    def build(folder: Path) -> list[str]:
        path = folder / f"wide_{columns}.csv"
        with path.open("w", encoding="utf-8") as fh:
            fh.write(",".join(f"c{i}" for i in range(columns)))
            for _ in range(rows):
                fh.write("\n" + ",".join("1" for _ in range(columns)))
            if newline:
                fh.write("\n")
        return [str(path)]

    return build


def _repeat(name: str, head: bytes, chunk: bytes, total: int, tail: bytes = b"") -> Build:
    """``head``, then ``chunk`` repeated up to ``total`` bytes, then ``tail``: 200 MB in well under a second."""

    def build(folder: Path) -> list[str]:
        path = folder / name
        block = chunk * max(1, _MIB // len(chunk))
        with path.open("wb") as fh:
            fh.write(head)
            written = len(head)
            while written + len(block) <= total:
                fh.write(block)
                written += len(block)
            fh.write(chunk * ((total - written) // len(chunk)))
            fh.write(tail)
        return [str(path)]

    return build


def _workbook(rows: list[list[object]]) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    for row in rows:
        wb.active.append(row)
    buffer = io.BytesIO()
    wb.save(buffer)
    return buffer.getvalue()


def _sales_workbook() -> bytes:
    return _workbook([["region", "units"], *[[f"r{i % 3}", i] for i in range(20)]])


def _replace_parts(workbook: bytes, parts: dict[str, bytes], *, level: int = 6) -> bytes:
    """The workbook with some parts replaced (or added), deflated at ``level``."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(workbook)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = parts.pop(info.filename, None)
            dst.writestr(info.filename, src.read(info) if data is None else data, compresslevel=level)
        for name, data in parts.items():
            dst.writestr(name, data, compresslevel=level)
    return out.getvalue()


def _sheet(body: str, prolog: str = '<?xml version="1.0" encoding="UTF-8"?>') -> bytes:
    return f'{prolog}<worksheet xmlns="{_MAIN_NS}"><sheetData>{body}</sheetData></worksheet>'.encode()


def _laughs() -> str:
    """The billion-laughs DTD: ten entities, each ten of the one before (10^9 'lol's from under 1 KB)."""
    entities = ['<!ENTITY lol0 "lol">'] + [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)]
    return f"<!DOCTYPE lolz [{''.join(entities)}]>"


_INLINE = '<row r="1"><c r="A1" t="inlineStr"><is><t>name</t></is></c></row>'


def _billion_laughs_sheet() -> bytes:
    body = _INLINE + '<row r="2"><c r="A2" t="inlineStr"><is><t>&lol9;</t></is></c></row>'
    return _replace_parts(
        _sales_workbook(), {"xl/worksheets/sheet1.xml": _sheet(body, '<?xml version="1.0"?>' + _laughs())}
    )


def _billion_laughs_strings() -> bytes:
    sst = f'<sst xmlns="{_MAIN_NS}" count="1" uniqueCount="1"><si><t>&lol9;</t></si></sst>'
    strings = f'<?xml version="1.0"?>{_laughs()}{sst}'
    return _replace_parts(_sales_workbook(), {"xl/sharedStrings.xml": strings.encode()})


def _billion_laughs_utf16() -> bytes:
    body = _INLINE + '<row r="2"><c r="A2" t="inlineStr"><is><t>&lol9;</t></is></c></row>'
    xml = _sheet(body, '<?xml version="1.0" encoding="UTF-16"?>' + _laughs()).decode()
    xml = xml.replace('encoding="UTF-8"', 'encoding="UTF-16"')
    return _replace_parts(_sales_workbook(), {"xl/worksheets/sheet1.xml": xml.encode("utf-16")})


def _external_entity() -> bytes:
    dtd = '<!DOCTYPE x [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
    body = _INLINE + '<row r="2"><c r="A2" t="inlineStr"><is><t>&secret;</t></is></c></row>'
    return _replace_parts(_sales_workbook(), {"xl/worksheets/sheet1.xml": _sheet(body, '<?xml version="1.0"?>' + dtd)})


def _zip_bomb() -> bytes:
    """A sheet with 64 MB of blanks between two rows, deflated about 1,000 times: a bomb however small."""
    filler = " " * (64 * _MIB)
    body = _INLINE + filler + '<row r="2"><c r="A2" t="inlineStr"><is><t>x</t></is></c></row>'
    return _replace_parts(_sales_workbook(), {"xl/worksheets/sheet1.xml": _sheet(body)}, level=9)


def _expands_past_limit() -> bytes:
    """210 parts of 1 MiB of blanks (each too small for the ratio cap): 210 MiB expanded, over the 200 MB limit."""
    blanks = b" " * _MIB
    return _replace_parts(_sales_workbook(), {f"xl/media/pad{i}.xml": blanks for i in range(210)}, level=1)


def _many_parts() -> bytes:
    return _replace_parts(_sales_workbook(), {f"xl/custom/p{i}.bin": b"" for i in range(20_000)}, level=1)


def _lying_sizes() -> bytes:
    """The sheet part declares a tenth of its real size in both zip headers: reading it ends in a CRC error."""
    data = bytearray(_workbook([["name", "units"], *[[f"n{i}", i] for i in range(2000)]]))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo("xl/worksheets/sheet1.xml")
    small, name = (info.file_size // 10).to_bytes(4, "little"), info.filename.encode()
    data[info.header_offset + 22 : info.header_offset + 26] = small  # local file header: uncompressed size
    central = data.find(b"PK\x01\x02")
    while data[central + 46 : central + 46 + len(name)] != name:
        central = data.find(b"PK\x01\x02", central + 1)
    data[central + 24 : central + 28] = small  # its central directory entry: uncompressed size
    return bytes(data)


def _truncated_workbook() -> bytes:
    data = _sales_workbook()
    return data[: len(data) // 2]


def _formulas_only() -> bytes:
    return _workbook([["qty", "price", "total"], *[[r, 2.5, f"=A{r}*B{r}"] for r in range(2, 22)]])


def _formulas_some() -> bytes:
    return _workbook([["qty", "total"], *[[r, r * 2 if r % 2 else f"=A{r}*2"] for r in range(2, 30)]])


def _wide_workbook() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("wide")
    ws.append([f"c{i}" for i in range(5000)])
    ws.append([1] * 5000)
    buffer = io.BytesIO()
    wb.save(buffer)
    return buffer.getvalue()


def _stray_cell() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active["A1"], wb.active["A2"], wb.active["XFD1048576"] = "name", "x", "boom"
    buffer = io.BytesIO()
    wb.save(buffer)
    return buffer.getvalue()


def _deep_definitions(folder: Path) -> list[str]:
    data = _write(folder, "sales.csv", _rows(30).encode())
    (folder / "column_definitions.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    return [*data, "--columns", str(folder / "column_definitions.json")]


def _parquet_bomb() -> bytes:
    """A few KB of Parquet that is 400 MB as text: one 100 KB value, dictionary-encoded, repeated 4,000 times."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    column = pa.DictionaryArray.from_arrays(pa.array([0] * 4000, pa.int32()), pa.array(["x" * 100_000]))
    buffer = io.BytesIO()
    pq.write_table(pa.table({"note": column}), buffer, compression="zstd")
    return buffer.getvalue()


def _view_only_sqlite() -> bytes:
    """A database whose only object is a view that never ends: reading it would hang, listing tables does not."""
    import sqlite3

    con = sqlite3.connect(":memory:")
    con.execute(
        "CREATE VIEW forever AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
    )
    data = con.serialize()
    con.close()
    return data


def _deep_json_cells() -> str:
    """JSON text in cells: 50,000 levels of brackets, and a small nested object with its quotes doubled."""
    deep = "[" * 50_000 + "]" * 50_000
    nested = '"' + json.dumps({"a": {"b": {"c": [1, 2, {"d": "e"}]}}}).replace('"', '""') + '"'
    return "payload,units\n" + "".join(f"{deep if i % 2 else nested},{i}\n" for i in range(20))


def _nul_bytes_late() -> bytes:
    """NUL bytes in cells past the 8 KB sample that the type check reads (they are removed, like other controls)."""
    return _rows(1000).encode() + b"nor\x00th,1\x00\n" * 50


def _control_headers() -> str:
    """Headers with an emoji, a right-to-left override, a BEL control character and Arabic script."""
    header = "\U0001f4c8 revenue,\u202eemordnilap,name\x07bell,\u0627\u0644\u0645\u0628\u064a\u0639\u0627\u062a"
    return header + "\n" + "".join(f"{i * 1.5},{'x' * (i % 3 + 1)},n{i % 4},{i % 5}\n" for i in range(30))


def _mixed_newlines() -> bytes:
    lines = _rows(60).strip("\n").split("\n")
    ends = [b"\r\n", b"\n", b"\r"]
    return b"".join(line.encode() + ends[i % 3] for i, line in enumerate(lines))


def _many_quotes() -> bytes:
    return b"a,b\n" + b',"' * (2 * _MIB) + b"\n1,2\n"


def _one_column_ids() -> str:
    return "order_id\n" + "".join(f"{100_000 + i}\n" for i in range(200))


def _binary() -> bytes:
    return random.Random(3).randbytes(64 * 1024)


def _utf16_no_bom() -> bytes:
    return _rows(50).encode("utf-16-le")


def _titled_wide() -> bytes:
    header = ",".join(f"c{i}" for i in range(9000))
    return ("Report 2024\n" + header + "\n" + "1," * 8999 + "1\n").encode()


def _numbers() -> str:
    values = ["1e999999", "-1e400", "9" * 400, "NaN", "inf", "0x1F", "1_000", "12", "-0", "3.5"] * 4
    return "label,value\n" + "".join(f"r{i},{v}\n" for i, v in enumerate(values))


def _formula_cells() -> str:
    rows = (f'=HYPERLINK("http://x";"{i}"),{i}\n@SUM(A1),1\n+cmd|\' /C calc\'!A0,2\n' for i in range(10))
    return "name,amount\n" + "".join(rows)


_TWO = ("region", "revenue")
_CR_MIXED = b"region,sales;units\rnorth,10;3\rsouth,20;4\rwest;30,5\r"
_COLUMNS_CAP = "columns, over the cap of 4,096 columns"
_NOT_XLSX = "not a readable .xlsx workbook"
_NOT_TEXT = "not a text table"

CASES: list[Case] = [
    # Width: the header is counted from the first bytes, before any parse.
    Case("wide_10e6_columns", _wide(1_000_000), REFUSED, "1,000,000 " + _COLUMNS_CAP, "4.5 GB, past 120 s"),
    Case("wide_10e6_header_only_no_newline", _wide(1_000_000, rows=0, newline=False), REFUSED, _COLUMNS_CAP),
    Case("wide_just_over_cap", _wide(4097), REFUSED, "4,097 " + _COLUMNS_CAP),
    Case("wide_below_title_row", _raw("titled.csv", _titled_wide), REFUSED, "9,000 " + _COLUMNS_CAP),
    Case("wide_xlsx_5000_columns", _raw("wide.xlsx", _wide_workbook), REFUSED, "5,000 " + _COLUMNS_CAP),
    Case("wide_40_columns_read", _wide(40, rows=30), JOB, rows=30),
    # XLSX bombs and broken workbooks.
    Case("xlsx_billion_laughs_sheet", _raw("laughs.xlsx", _billion_laughs_sheet), REFUSED, "(DTD)", "ParseError"),
    Case("xlsx_billion_laughs_shared_strings", _raw("laughs_sst.xlsx", _billion_laughs_strings), REFUSED, "(DTD)"),
    Case("xlsx_billion_laughs_utf16_part", _raw("laughs16.xlsx", _billion_laughs_utf16), REFUSED, "(DTD)"),
    Case("xlsx_external_entity", _raw("xxe.xlsx", _external_entity), REFUSED, "(DTD)"),
    Case("xlsx_zip_bomb_ratio", _raw("bomb.xlsx", _zip_bomb), REFUSED, "a zip bomb"),
    Case("xlsx_expands_past_size_limit", _raw("expands.xlsx", _expands_past_limit), REFUSED, "expands to 210 MB"),
    Case("xlsx_20000_parts", _raw("parts.xlsx", _many_parts), REFUSED, "parts, over the cap of 10,000"),
    Case("xlsx_lying_member_sizes", _raw("lying.xlsx", _lying_sizes), REFUSED, "Bad CRC-32"),
    Case("xlsx_truncated", _raw("truncated.xlsx", _truncated_workbook), REFUSED, _NOT_XLSX),
    Case("xlsx_not_a_zip", _raw("garbage.xlsx", _binary), REFUSED, _NOT_XLSX),
    Case("xlsx_stray_cell_at_xfd1048576", _raw("stray.xlsx", _stray_cell), REFUSED, "1,048,576 rows"),
    Case("xlsx_formulas_without_values", _raw("formulas.xlsx", _formulas_only), REFUSED, "no saved values"),
    Case("xlsx_some_formulas_without_values", _raw("some_formulas.xlsx", _formulas_some), JOB, rows=28),
    # Long lines and fields.
    Case(
        "single_line_200mb",
        _repeat("line.csv", b"", b"x" * 4096, 200_000_000),
        REFUSED,
        "line 1 is longer than 16 MB",
        "field larger than field limit",
    ),
    Case(
        "single_line_200mb_with_commas",
        _repeat("commas.csv", b"", b"abcdefgh," * 455, 190_000_000),
        REFUSED,
        "line 1 is longer than 16 MB",
    ),
    Case(
        "field_150mb_in_row_2",
        _repeat("field.csv", b"id,text\n1,", b"y" * 4096, 150 * _MIB, b"\n2,b\n"),
        REFUSED,
        "line 2 is 150 MB long",
    ),
    Case(
        "quoted_field_60mb_over_many_lines",
        _repeat("quoted.csv", b'id,text\n1,"', b"z" * 79 + b"\n", 60 * _MIB, b'"\n2,b\n3,c\n'),
        REFUSED,
        "row 2, column 'text' holds a cell of",
    ),
    Case(
        "fields_over_csv_limit_read",
        _text("long_fields.csv", "note,units\n" + "".join(f"{'w' * 200_000},{i}\n" for i in range(8))),
        JOB,
        rows=8,
        columns=("note", "units"),
    ),
    Case(
        "header_cell_of_200000_chars",
        _text("long_header.csv", "h" * 200_000 + ",units\n" + "".join(f"a{i},{i}\n" for i in range(20))),
        REFUSED,
        "the name of column 1 is 200,000 characters long",
    ),
    # Line endings, delimiters, quotes.
    Case("cr_only", _raw("cr.csv", _rows(60).replace("\n", "\r").encode()), JOB, rows=60, columns=_TWO),
    Case(
        "cr_only_with_bom",
        _raw("cr_bom.csv", b"\xef\xbb\xbf" + _rows(60).replace("\n", "\r").encode()),
        JOB,
        rows=60,
        columns=_TWO,
    ),
    Case(
        "cr_only_mixed_delimiters",
        _raw("cr_mixed.csv", _CR_MIXED),
        JOB,
        rows=3,
        columns=("region", "sales;units"),
        why="_csv.Error, exit 1",
    ),
    Case("mixed_crlf_lf_cr", _raw("mixed_eol.csv", _mixed_newlines), JOB, rows=60, columns=_TWO),
    Case(
        "mixed_delimiters",
        _text("mixed_delims.csv", "a,b;c\n1,2;3\n4;5,6\n7|8,9\n"),
        JOB,
        rows=3,
        columns=("a", "b;c"),
    ),
    Case(
        "quote_never_closed",
        _text("open_quote.csv", 'name,units\n"alpha,1\nbeta,2\n' + "gamma,3\n" * 50),
        REFUSED,
        "malformed CSV",
    ),
    Case("four_million_quotes", _raw("quotes.csv", _many_quotes), REFUSED, _COLUMNS_CAP),
    Case(
        "quotes_that_stall_csv_sniffer",
        _raw("sniff.csv", b"a,b\n" + (b'"a,' * 300 + b"\n") * 60),
        REFUSED,
        "malformed CSV",
    ),
    # Bytes that are not (UTF-8) text.
    Case(
        "nul_bytes_in_cells",
        _raw("nul.csv", b"name,units\nAna\x00,1\nB\x00en,2\n" + b"Cy,3\n" * 30),
        JOB,
        rows=32,
    ),
    Case("nul_bytes_after_the_sample", _raw("nul_late.csv", _nul_bytes_late), JOB, rows=1050, columns=_TWO),
    Case(
        "utf8_bom_then_utf16",
        _raw("bom_utf16.csv", lambda: b"\xef\xbb\xbf" + _rows(50).encode("utf-16")),
        REFUSED,
        _NOT_TEXT,
    ),
    Case(
        "double_utf8_bom",
        _raw("double_bom.csv", b"\xef\xbb\xbf\xef\xbb\xbf" + _rows(40).encode()),
        JOB,
        rows=40,
        columns=_TWO,
    ),
    Case("utf16_with_bom", _raw("utf16.csv", lambda: _rows(50).encode("utf-16")), REFUSED, _NOT_TEXT),
    Case("utf16_without_bom", _raw("utf16_nobom.csv", _utf16_no_bom), REFUSED, _NOT_TEXT),
    Case("binary_garbage", _raw("garbage.csv", _binary), REFUSED, _NOT_TEXT),
    Case(
        "control_chars_and_rtl_in_headers",
        _text("headers.csv", _control_headers()),
        JOB,
        rows=30,
        columns=(
            "\U0001f4c8 revenue",
            "\u202eemordnilap",
            "namebell",
            "\u0627\u0644\u0645\u0628\u064a\u0639\u0627\u062a",
        ),
    ),
    # Degenerate tables.
    Case("empty", _raw("empty.csv", b""), REFUSED, "file is empty"),
    Case("whitespace_only", _raw("blank.csv", b"  \n\n \r\n\t\n"), REFUSED, "no content"),
    Case("header_only", _text("header.csv", "region,units,revenue\n"), REFUSED, "no data rows"),
    Case("one_column_of_ids", _text("ids.csv", _one_column_ids()), JOB, rows=200, why="more than one row, exit 1"),
    Case(
        "one_column_measure",
        _text("amounts.csv", "amount\n" + "".join(f"{i * 3 % 17 + 1}\n" for i in range(50))),
        JOB,
        rows=50,
    ),
    Case("one_row", _text("one_row.csv", "region,units,revenue\nnorth,3,7.5\n"), JOB, rows=1),
    Case(
        "duplicate_headers",
        _text("dupes.csv", "units,Units,units\n" + "".join(f"{i},{i * 2},r{i % 3}\n" for i in range(30))),
        JOB,
        columns=("units", "Units (2)", "units (3)"),
    ),
    Case(
        "all_missing_column",
        _text("all_missing.csv", "region,units,empty\n" + "".join(f"r{i % 3},{i},\n" for i in range(30))),
        JOB,
        rows=30,
    ),
    Case(
        "rows_100000_tiny",
        _text("tiny_rows.csv", "a,b\n" + "".join(f"{i % 7},{i % 3}\n" for i in range(100_000))),
        JOB,
        rows=100_000,
    ),
    Case("huge_and_odd_numbers", _text("numbers.csv", _numbers()), JOB, rows=40),
    Case("csv_formula_cells", _text("formula_cells.csv", _formula_cells()), JOB, rows=30),
    Case("blank_lines_then_header", _text("blank_top.csv", "\n" * 500_000 + _rows(30)), JOB, rows=30, columns=_TWO),
    # Other inputs.
    Case("deep_json_column_definitions", _deep_definitions, REFUSED, "nested too deeply"),
    Case("deep_json_in_cells", _text("deep_cells.csv", _deep_json_cells()), JOB, rows=20),
    Case("json_data_file", _text("data.json", "[" * 100_000 + "]" * 100_000), REFUSED, "nested hundreds of levels"),
    Case("deep_jsonl_records", _text("deep.jsonl", '{"a": {"b": {"c": 1}}}\n' * 10), REFUSED, "nesting depth 3"),
    Case("parquet_dictionary_bomb", _raw("bomb.parquet", lambda: _parquet_bomb()), REFUSED, "as csv text"),
    Case("sqlite_only_a_recursive_view", _raw("view.sqlite", lambda: _view_only_sqlite()), REFUSED, "no tables"),
]


# ------------------------------------------------------------------------------------------------------ running


#: The file cap the corpus is sized for (its over-the-limit cases are a little over 200 MB), below the 5 GB default.
CORPUS_MAX_FILE_MB = "200"


def child_env() -> dict[str, str]:
    """The environment for the CLI: no credentials or insightloom settings but the corpus's file cap and the caller's
    job registry (a test's temporary one); PYTHONPATH passes through."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_ACCESS", "AWS_SECRET", "INSIGHTLOOM_"))}
    if os.environ.get("INSIGHTLOOM_JOBS_REGISTRY"):
        env["INSIGHTLOOM_JOBS_REGISTRY"] = os.environ["INSIGHTLOOM_JOBS_REGISTRY"]
    return {**env, "INSIGHTLOOM_MAX_FILE_MB": CORPUS_MAX_FILE_MB}


#: Runs the CLI and writes the peak resident memory (KB) of it and everything it waited for to ``argv[1]``. A child
#: forked straight from the test process would count that process's own memory: Linux carries the pre-exec peak
#: over into ``ru_maxrss``. This wrapper is small, so its child's peak is the CLI's.
_WRAPPER = """
import resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as fh:
    fh.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code if code >= 0 else 128 - code)
"""


def run_case(case: Case, root: Path, *, timeout: float = TIMEOUT_S, job_timeout: float = JOB_TIMEOUT_S) -> Outcome:
    """Write the case's file under ``root/<name>`` and run the CLI on it under the memory wrapper, killed (its whole
    process group) at ``timeout``, or at ``job_timeout`` for a case that is read and runs a whole job. The times
    count from the process start, not the file's writing."""
    limit = job_timeout if case.whole_job else timeout
    folder = root / case.name
    folder.mkdir(parents=True)
    args = case.build(folder)
    peak_file = folder / "peak_kb.txt"
    command = [sys.executable, "-I", "-c", _WRAPPER, str(peak_file), sys.executable, "-m", "insightloom", "run"]
    command += [*args, "-r", REQUEST, "--yes", "--provider", "offline", "--job-dir", str(folder / "job")]
    killed = threading.Event()
    with (folder / "stderr.txt").open("wb") as err:
        started, started_wall = time.monotonic(), time.time()
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=folder,
            env=child_env(),
            start_new_session=True,
        )
        timer = threading.Timer(limit, _kill_group, (proc.pid, killed))
        timer.start()
        try:
            code = proc.wait()
        finally:
            timer.cancel()
        seconds = time.monotonic() - started
    _kill_group(proc.pid, None)  # anything the CLI left behind in its group
    stderr = (folder / "stderr.txt").read_text(encoding="utf-8", errors="replace")
    peak_kb = int(peak_file.read_text()) if peak_file.exists() else 0  # killed: not measured
    profile = folder / "job" / "cache" / "profile.json"
    table = json.loads(profile.read_text(encoding="utf-8"))["tables"][0] if profile.exists() else None
    read_at = _intake_end(folder / "job" / "events.jsonl")
    ended = None if killed.is_set() else code
    if read_at is None and ended is not None:
        read_at = started_wall + seconds  # refused before or in intake: it was over when the CLI exited
    intake_s = read_at - started_wall if read_at is not None else None
    return Outcome(case, ended, seconds, intake_s, peak_kb / 1024, stderr, table)


def _intake_end(events: Path) -> float | None:
    """When intake was over (epoch seconds), from the job's event log: the next stage began, or intake's error was
    logged; None if neither happened."""
    if not events.exists():
        return None
    for line in events.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("kind") == "error" or (event.get("kind") == "stage" and event["data"].get("name") != "intake"):
            return datetime.fromisoformat(event["ts"].replace("Z", "+00:00")).timestamp()
    return None


def _kill_group(pgid: int, killed: threading.Event | None) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return
    if killed is not None:
        killed.set()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="case names to run (default: all)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S)
    parser.add_argument("--job-timeout", type=float, default=JOB_TIMEOUT_S)
    parser.add_argument("--keep", type=Path, help="write the files and job folders here (default: a temp folder)")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if not args.only or c.name in args.only]
    import tempfile

    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        root = args.keep or Path(tmp)
        with ThreadPoolExecutor(args.workers) as pool:
            outcomes = list(
                pool.map(lambda c: run_case(c, root, timeout=args.timeout, job_timeout=args.job_timeout), cases)
            )
    print("| file | exit | intake over (s) | seconds | peak MB | verdict | released code |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for outcome in outcomes:
        print(outcome.row())
    bad = [o for o in outcomes if o.problems]
    print(f"files={len(outcomes)} bad={len(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
