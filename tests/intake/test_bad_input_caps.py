"""Bad inputs end fast and clean (issue 24), in process: the column cap counted before parsing, XLSX parts with a
DTD, lines and cells over their caps, CR-only text, the csv module's limits, a quote-heavy sample, a one-column
table's checks, and an unexpected error that still names the file with exit 2."""

from __future__ import annotations

import importlib
import io
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from insightloom.errors import BadInputError
from insightloom.intake import ingest, inputs, readers

Writer = Callable[[str, bytes], Path]
#: The module that calls the readers (``intake.sources``): what it calls is patched there.
SOURCES = importlib.import_module("insightloom.intake.sources")


def _refused(path: Path, tmp_path: Path, **kwargs: object) -> BadInputError:
    with pytest.raises(BadInputError) as info:
        ingest([path], tmp_path / "job", **kwargs)  # type: ignore[arg-type]
    assert info.value.exit_code == 2 and path.name in info.value.message and info.value.fix
    assert "\n" not in str(info.value)
    return info.value


def test_a_header_over_the_column_cap_is_refused_before_the_file_is_parsed(
    write_bytes: Writer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    header = ",".join(f"c{i}" for i in range(inputs.MAX_COLUMNS + 1))
    path = write_bytes("wide.csv", (header + "\n" + header.replace("c", "") + "\n").encode())
    monkeypatch.setattr(SOURCES, "read_csv", lambda p: pytest.fail("the whole file was parsed"))
    err = _refused(path, tmp_path)
    assert f"{inputs.MAX_COLUMNS + 1:,} columns" in err.message and f"cap of {inputs.MAX_COLUMNS:,}" in err.message
    assert not (tmp_path / "job" / "data" / "wide.csv").exists()  # refused while vetting, before the copy


def test_the_column_cap_is_a_parameter_and_counts_a_header_below_a_title(write_bytes: Writer, tmp_path: Path) -> None:
    path = write_bytes("titled.csv", b'Sales report 2024\n\na,b,"c,d",e\n1,2,3,4\n5,6,7,8\n')
    err = _refused(path, tmp_path, max_columns=3)
    assert "has 4 columns" in err.message  # the comma inside quotes is no delimiter
    assert [c.name for c in ingest([path], tmp_path / "ok", max_columns=4).tables[0].columns] == ["a", "b", "c,d", "e"]


def test_a_first_line_with_no_break_is_refused_from_its_first_bytes(write_bytes: Writer, tmp_path: Path) -> None:
    path = write_bytes("line.csv", b"x" * (inputs.MAX_LINE_BYTES + 10))
    started = time.monotonic()
    err = _refused(path, tmp_path)
    assert "line 1 is longer than 16 MB" in err.message and time.monotonic() - started < 10  # guards a hang only


def test_a_long_line_further_down_is_refused_naming_its_line(write_bytes: Writer, tmp_path: Path) -> None:
    path = write_bytes("field.csv", b"id,text\r1,a\r2," + b"y" * (inputs.MAX_LINE_BYTES + 1) + b"\r3,c\r")
    err = _refused(path, tmp_path)
    assert "line 3 is 16 MB long" in err.message


def test_fields_past_the_csv_module_limit_are_read(write_bytes: Writer, tmp_path: Path) -> None:
    long = "w" * 200_000  # csv.field_size_limit() is 131,072: csv.reader raised "field larger than field limit"
    path = write_bytes("long.csv", f"note,units\n{long},1\nb,2\n".encode())
    table = ingest([path], tmp_path / "job").tables[0]
    frame = pd.read_parquet(tmp_path / "job" / table.parquet)
    assert frame["note"].str.len().tolist() == [200_000, 1] and frame["units"].tolist() == [1, 2]
    assert table.column("note").role == "text"  # no 200,000-character category label on a chart


def test_a_header_cell_over_the_label_cap_is_refused_naming_the_column(write_bytes: Writer, tmp_path: Path) -> None:
    path = write_bytes("long_header.csv", ("units," + "h" * 5000 + "\n1,a\n2,b\n").encode())
    assert "the name of column 2 is 5,000 characters long" in _refused(path, tmp_path).message


def test_control_characters_are_removed_from_column_names(write_bytes: Writer, tmp_path: Path) -> None:
    path = write_bytes("ctl.csv", b"name\x07bell,u\x1b[1mnits\x00\nAna,1\nBen,2\n")
    assert [c.name for c in ingest([path], tmp_path / "job").tables[0].columns] == ["namebell", "u[1mnits"]


def test_a_cell_over_the_cell_cap_is_refused_naming_row_and_column(write_bytes: Writer, tmp_path: Path) -> None:
    cell = '"' + ("z" * 99 + "\n") * (readers.MAX_CELL_CHARS // 100 + 1) + '"'
    path = write_bytes("quoted.csv", f"id,text\n1,a\n2,{cell}\n".encode())
    err = _refused(path, tmp_path)
    assert "row 3, column 'text'" in err.message and f"cap of {readers.MAX_CELL_CHARS:,}" in err.message


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf"])
def test_cr_only_and_mixed_line_endings_are_read_as_rows(bom: bytes, write_bytes: Writer, tmp_path: Path) -> None:
    path = write_bytes("cr.csv", bom + b"region,sales\rnorth,10\r\nsouth,20\nwest,30\reast,40\r")
    frame = pd.read_parquet(tmp_path / "job" / ingest([path], tmp_path / "job").tables[0].parquet)
    assert list(frame.columns) == ["region", "sales"]  # no stray BOM in the first name
    assert frame["region"].tolist() == ["north", "south", "west", "east"] and frame["sales"].sum() == 100


def test_a_quote_heavy_sample_does_not_stall_the_delimiter_sniffer() -> None:
    started = time.monotonic()
    for unit in (',"', '"a,', ', "', '"",'):
        assert readers.sniff_delimiter((unit * 40_000)[:65_536]) == ","
    assert time.monotonic() - started < 5  # csv.Sniffer alone took 97 s on 64 KB of ',"' here


def _workbook_with(part: str, xml: bytes) -> bytes:
    wb = openpyxl.Workbook()
    wb.active.append(["name", "units"])
    wb.active.append(["a", 1])
    raw = io.BytesIO()
    wb.save(raw)
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, xml if info.filename == part else src.read(info))
        if part not in src.namelist():
            dst.writestr(part, xml)
    return out.getvalue()


_LAUGHS = '<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'


@pytest.mark.parametrize(
    ("part", "xml"),
    [
        ("xl/sharedStrings.xml", f'<?xml version="1.0"?>{_LAUGHS}<sst><si><t>&b;</t></si></sst>'.encode()),
        ("xl/workbook.xml", b'<!-- x --><!DOCTYPE w SYSTEM "file:///etc/passwd"><workbook/>'),
        ("xl/worksheets/sheet1.xml", f'<?xml version="1.0" encoding="UTF-16"?>{_LAUGHS}<worksheet/>'.encode("utf-16")),
        ("xl/custom/part.bin", f"{_LAUGHS}<x>&b;</x>".encode()),  # any XML part, whatever its name
        ("xl/worksheets/sheet1.xml", b"<!--" + b" " * (70 * 1024) + b"--><worksheet/>"),
    ],
    ids=["billion-laughs-strings", "external-dtd-workbook", "utf16-sheet", "unnamed-part", "over-long-prolog"],
)
def test_an_xlsx_part_with_a_dtd_is_refused_before_openpyxl_reads_it(
    part: str, xml: bytes, write_bytes: Writer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_bytes("dtd.xlsx", _workbook_with(part, xml))
    monkeypatch.setattr(SOURCES, "read_xlsx", lambda *a, **k: pytest.fail("openpyxl opened it"))
    err = _refused(path, tmp_path)
    assert repr(part) in err.message and "DTD" in err.message


def test_xlsx_zip_bombs_are_refused_from_the_archive_directory(write_bytes: Writer, tmp_path: Path) -> None:
    bomb = write_bytes("bomb.xlsx", _workbook_with("xl/worksheets/sheet2.xml", b"<a>" + b" " * (8 << 20) + b"</a>"))
    assert "zip bomb" in _refused(bomb, tmp_path).message
    many = io.BytesIO()
    with zipfile.ZipFile(many, "w") as archive:
        for i in range(inputs.MAX_XLSX_MEMBERS + 1):
            archive.writestr(f"p{i}", b"")
    err = _refused(write_bytes("many.xlsx", many.getvalue()), tmp_path)
    assert f"{inputs.MAX_XLSX_MEMBERS + 1:,} parts" in err.message


def test_any_error_openpyxl_raises_on_a_broken_workbook_is_exit_2(write_bytes: Writer, tmp_path: Path) -> None:
    data = _workbook_with("xl/worksheets/sheet1.xml", b"<worksheet><sheetData><row><c><v>1</v></row>")  # not XML
    assert "not a readable .xlsx workbook" in _refused(write_bytes("broken.xlsx", data), tmp_path).message


def test_a_sheet_wider_than_the_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "wide.xlsx"
    wb = openpyxl.Workbook()
    wb.active.append([f"c{i}" for i in range(12)])
    wb.active.append(list(range(12)))
    wb.save(path)
    assert "has 12 columns, over the cap of 10 columns" in _refused(path, tmp_path, max_columns=10).message


def test_an_unexpected_error_in_intake_is_exit_2_naming_the_file_and_logged(
    write_bytes: Writer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(path: Path) -> readers.RawTable:
        raise OverflowError(f"surprise in {path}\nsecond line")

    monkeypatch.setattr(SOURCES, "read_csv", broken)
    path = write_bytes("fine.csv", b"a,b\n1,2\n3,4\n")
    with caplog.at_level("DEBUG", logger="insightloom.intake"):
        err = _refused(path, tmp_path)
    assert "OverflowError: surprise in" in err.message and str(path) in err.message  # the user's path, not the copy
    assert any(r.levelname == "WARNING" and "OverflowError" in r.getMessage() for r in caplog.records)
    assert any(r.exc_info for r in caplog.records if r.levelname == "DEBUG")  # the traceback, for -vv


def test_deeply_nested_column_definitions_are_exit_2(write_bytes: Writer, tmp_path: Path) -> None:
    data = write_bytes("sales.csv", b"region,units\nn,1\ns,2\n")
    columns = write_bytes("column_definitions.json", b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(BadInputError, match="nested too deeply"):
        ingest([data], tmp_path / "job", columns_file=columns)


def test_a_one_column_table_of_ids_gets_checks_that_reproduce(
    write_bytes: Writer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from insightloom.analysis.catalog import AnalysisSpec
    from insightloom.analysis_utils import exit_checks, flush_checks, load_calculations, run_standard

    path = write_bytes("ids.csv", ("order_id\n" + "".join(f"{1000 + i}\n" for i in range(40))).encode())
    ingest([path], tmp_path / "job")
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(tmp_path / "job"))
    monkeypatch.setattr(exit_checks, "_pending", {})
    run_standard(AnalysisSpec("overview").item_text("en"))  # the id column is not analysed: no column to count in
    assert flush_checks() >= 4  # raised "the check returned more than one row" for missing_cells
    values = {c["id"]: c["value"] for c in load_calculations(tmp_path / "job")}
    assert values["missing_cells"] == 0 and values["analysed_columns"] == 0 and values["rows"] == 40


def test_a_column_name_with_a_semicolon_is_no_second_statement() -> None:
    from insightloom.validation.checks import clean_check

    assert clean_check('SELECT COUNT("b;c") FROM t;') == ('SELECT COUNT("b;c") FROM t', "")
    assert "single SQL query" in clean_check("SELECT 1; SELECT 2")[1]
    assert "single SQL query" in clean_check("SELECT E'\\'' ; SET threads = 1; SELECT '1'")[1]


def test_nul_bytes_past_the_type_sample_are_removed(write_bytes: Writer, tmp_path: Path) -> None:
    head = b"name,units\n" + b"abc,1\n" * 2000  # past the 8 KB the binary check reads
    path = write_bytes("nul.csv", head + b"de\x00f,2\n\x00\x00,3\n")
    table = ingest([path], tmp_path / "job").tables[0]
    frame = pd.read_parquet(tmp_path / "job" / table.parquet)
    assert frame["name"].iloc[-2] == "def" and table.rows == 2002 and table.control_chars_removed == 3
