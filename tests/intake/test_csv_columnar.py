"""The columnar CSV reader (Arrow, from the file) reads the very cells the text path (decode whole, pandas) reads.

Hypothesis writes CSV bytes cell by cell, well-formed or not: quoted and bare cells, doubled and stray quotes,
delimiters and line breaks inside quotes, CR, LF and CRLF line ends, byte-order marks, control characters,
placeholders, blank and ragged rows. For each file, both paths give the same table (cells, names, how it was read)
or both refuse it with the same message. That is what lets the columnar path take a file: whatever it does not read
exactly as the text path would, it leaves to it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from insightloom.errors import BadInputError
from insightloom.intake import csv_columnar
from insightloom.intake.readers import RawTable, read_csv

_CELL_TEXT = st.one_of(
    st.text(alphabet=st.sampled_from(list('ab 1,.;"\t\n\r\x01é한\ufeff')), max_size=6),
    st.sampled_from(["NA", "null", "#N/A", " x "]),
)


@st.composite
def csv_bytes(draw: st.DrawFn) -> bytes:
    """A small CSV as bytes: a header and rows of bare or quoted cells, any line end, maybe ragged or broken."""
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    width = draw(st.integers(1, 4))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        cells = []
        for _ in range(width + draw(st.sampled_from([0, 0, 0, 0, -1, 1]))):
            text = draw(_CELL_TEXT)
            quoted = draw(st.booleans())
            cells.append('"' + text.replace('"', '""') + '"' if quoted else text)
        lines.append(delimiter.join(cells))
    body = newline.join(lines) + draw(st.sampled_from(["", newline]))
    return draw(st.sampled_from(["", "\ufeff"])).encode() + body.encode("utf-8")


def _read(path: Path, *, columnar: bool) -> RawTable | str:
    try:
        return read_csv(path, columnar=columnar)
    except BadInputError as exc:
        return exc.message


def _assert_same(fast: RawTable | str, text: RawTable | str) -> None:
    if isinstance(text, str) or isinstance(fast, str):
        assert fast == text
        return
    pd.testing.assert_frame_equal(fast.frame, text.frame)
    how = ("encoding", "delimiter", "control_chars_removed", "title_rows_skipped", "title")
    assert {k: getattr(fast, k) for k in how} == {k: getattr(text, k) for k in how}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=csv_bytes())
@example(data=b'a,b\n1,2\n3,"4\n5,6\n')  # an unclosed quote: pandas refuses it, Arrow would read to the end
@example(data=b'a,b\r\n"x\r\ny",2\r\n')  # CRLF inside a quoted cell becomes LF
@example(data=b"\xef\xbb\xbf\xef\xbb\xbfa,b\n1,2\n")  # two byte-order marks
@example(data=b"a,b\n1,\x01x\n")  # a control character is removed, and counted
@example(data=b"a,b\n1,NA\n\n2,\n")  # placeholders and a blank line
def test_both_paths_read_the_same_cells(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    _assert_same(_read(path, columnar=True), _read(path, columnar=False))


def test_the_columnar_path_reads_a_plain_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The common file (UTF-8, one header, even rows) is split by Arrow, not decoded whole by the text path."""
    path = tmp_path / "t.csv"
    path.write_text('when,amount\n2024-01-01,"1,234.5"\n2024-01-02,7\n', encoding="utf-8")
    monkeypatch.setattr("insightloom.intake.readers.decode_bytes", lambda *_: pytest.fail("decoded whole"))
    table = read_csv(path)
    assert table.frame["amount"].tolist() == ["1,234.5", "7"]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"a,b\n1,2\n3\n", "a short row, which pandas pads"),
        ("a,b\n1,caf\xe9\n".encode("cp1252"), "not UTF-8"),
        (b"Sales 2024\n\na,b\n1,2\n3,4\n", "a title row above the header"),
        (b'a,b\n1,"2\n', "an unclosed quote"),
    ],
)
def test_the_columnar_path_steps_aside(data: bytes, why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    taken: list[bool] = []
    real = csv_columnar.read_cells

    def spy(*args: object) -> object:
        table = real(*args)  # type: ignore[arg-type]
        taken.append(table is not None)
        return table

    monkeypatch.setattr("insightloom.intake.readers.read_cells", spy)
    _read(path, columnar=True)
    assert not any(taken), why


def test_the_scan_finds_the_longest_line_across_chunks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(csv_columnar, "SCAN_CHUNK", 7)
    path = tmp_path / "t.csv"
    path.write_bytes(b"ab\r\n" + b"x" * 20 + b"\nyy\xef\xbf" + b"\xbe")  # U+FFFE split across two chunks
    scan = csv_columnar.scan_bytes(path)
    assert (scan.longest, scan.longest_start, scan.has_cr, scan.has_control) == (20, 4, True, True)


def test_the_scan_numbers_the_longest_line_with_crlf_split_across_chunks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The line-cap error names the line from the scan: CRLF is one line end, even split between two chunks."""
    monkeypatch.setattr(csv_columnar, "SCAN_CHUNK", 3)
    path = tmp_path / "t.csv"
    path.write_bytes(b"ab\r\ncd\r\ne\r" + b"x" * 9 + b"\n")
    assert csv_columnar.scan_bytes(path).longest_line == 4
