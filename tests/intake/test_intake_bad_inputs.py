"""Every bad input raises BadInputError (exit 2) whose message names the file and carries a fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from insightloom.errors import BadInputError
from insightloom.intake import ingest, resolve_inputs

Writer = Callable[[str, bytes], Path]


def _ingest_error(path: Path, tmp_path: Path, **kwargs: object) -> BadInputError:
    with pytest.raises(BadInputError) as info:
        ingest([path], tmp_path / "job", **kwargs)  # type: ignore[arg-type]
    err = info.value
    assert err.exit_code == 2
    assert path.name in err.message
    assert err.fix
    assert "\n" not in str(err)
    return err


def test_missing_file(tmp_path: Path) -> None:
    err = _ingest_error(tmp_path / "nope.csv", tmp_path)
    assert "not found" in err.message


def test_empty_file(write_bytes: Writer, tmp_path: Path) -> None:
    err = _ingest_error(write_bytes("empty.csv", b""), tmp_path)
    assert "0 bytes" in err.message


def test_header_only_csv(write_bytes: Writer, tmp_path: Path) -> None:
    err = _ingest_error(write_bytes("header.csv", b"a,b,c\n"), tmp_path)
    assert "no data rows" in err.message


def test_binary_file_with_nul_bytes(write_bytes: Writer, tmp_path: Path) -> None:
    err = _ingest_error(write_bytes("blob.csv", b"PK\x03\x04\x00\x00binary\x00stuff"), tmp_path)
    assert "binary" in err.message


def test_mostly_non_printable(write_bytes: Writer, tmp_path: Path) -> None:
    err = _ingest_error(write_bytes("noise.csv", bytes(range(1, 32)) * 20), tmp_path)
    assert "non-printable" in err.message


def test_unsupported_extension(write_bytes: Writer, tmp_path: Path) -> None:
    err = _ingest_error(write_bytes("report.pdf", b"%PDF-1.4"), tmp_path)
    assert "unsupported" in err.message


def test_legacy_xls_suggests_xlsx(write_bytes: Writer, tmp_path: Path) -> None:
    err = _ingest_error(write_bytes("old.xls", b"\xd0\xcf\x11\xe0"), tmp_path)
    assert ".xlsx" in err.fix


def test_file_over_size_limit_names_setting(write_bytes: Writer, tmp_path: Path) -> None:
    path = write_bytes("big.csv", b"a,b\n" + b"1,2\n" * 300_000)
    err = _ingest_error(path, tmp_path, max_file_mb=1.0)
    assert "max_file_mb" in err.message
    assert "INSIGHTLOOM_MAX_FILE_MB" in err.fix


def test_malformed_csv_names_line(write_bytes: Writer, tmp_path: Path) -> None:
    err = _ingest_error(write_bytes("bad.csv", b"a,b\n1,2\n3,4\n5,6,7\n"), tmp_path)
    assert "malformed" in err.message
    assert "line 4" in err.message


def test_unclosed_quote_is_malformed(write_bytes: Writer, tmp_path: Path) -> None:
    err = _ingest_error(write_bytes("quote.csv", b'a,b\n1,2\n3,"4\n5,6\n'), tmp_path)
    assert "malformed" in err.message


def test_corrupt_xlsx(write_bytes: Writer, tmp_path: Path) -> None:
    err = _ingest_error(write_bytes("broken.xlsx", b"this is not a zip file at all"), tmp_path)
    assert "xlsx" in err.message


def test_nothing_copied_when_a_later_file_is_bad(write_bytes: Writer, tmp_path: Path) -> None:
    good = write_bytes("good.csv", b"a\n1\n")
    with pytest.raises(BadInputError):
        ingest([good, tmp_path / "missing.csv"], tmp_path / "job")
    assert not (tmp_path / "job" / "data").exists()


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"", "empty"),
        (b"{not json", "invalid JSON at line 1"),
        (b'{"column_name": "a"}', "must be a list"),
        (b'[{"column_desc": "x"}]', "entry [0] is missing field 'column_name'"),
        (
            b'[{"column_name": "a", "column_desc": "x"}, {"column_name": "b"}]',
            "entry [1] is missing field 'column_desc'",
        ),
        (b'[{"column_name": "a", "column_desc": 5}]', "field 'column_desc' must be a string"),
        (b'["a"]', "entry [0] must be an object"),
    ],
)
def test_bad_column_definitions(write_bytes: Writer, tmp_path: Path, content: bytes, needle: str) -> None:
    data = write_bytes("d.csv", b"a\n1\n")
    defs = write_bytes("column_definitions.json", content)
    with pytest.raises(BadInputError) as info:
        ingest([data], tmp_path / "job", columns_file=defs)
    assert "column_definitions.json" in info.value.message
    assert needle in info.value.message
    assert info.value.fix


# ------------------------------------------------------------------------------------------------- resolve_inputs


def test_resolve_folder_sorted_with_definitions(write_bytes: Writer, tmp_path: Path) -> None:
    b = write_bytes("b.csv", b"x\n1\n")
    a = write_bytes("a.xlsx", b"ignored")
    write_bytes("notes.md", b"# not data")
    write_bytes("~$a.xlsx", b"lock")
    defs = write_bytes("column_definitions.json", json.dumps([]).encode())
    files, columns = resolve_inputs([tmp_path / "in"], None)
    assert files == [a, b]
    assert columns == defs


def test_resolve_keeps_given_order_and_accepts_definitions_file(write_bytes: Writer) -> None:
    z = write_bytes("z.csv", b"x\n1\n")
    a = write_bytes("a.csv", b"x\n1\n")
    defs = write_bytes("column_definitions.json", b"[]")
    files, columns = resolve_inputs([z, defs, a, z], None)
    assert files == [z, a]
    assert columns == defs


def test_resolve_explicit_columns_file_wins(write_bytes: Writer, tmp_path: Path) -> None:
    write_bytes("a.csv", b"x\n1\n")
    write_bytes("column_definitions.json", b"[]")
    explicit = tmp_path / "mine.json"
    explicit.write_text("[]")
    _, columns = resolve_inputs([tmp_path / "in"], explicit)
    assert columns == explicit


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda w, t: t / "missing.csv", "not found"),
        (lambda w, t: w("x.txt", b"{}"), "unsupported"),
        (lambda w, t: (t / "emptydir").mkdir() or t / "emptydir", "no data files"),
    ],
)
def test_resolve_errors_name_the_path(write_bytes: Writer, tmp_path: Path, make: Callable, needle: str) -> None:
    path = make(write_bytes, tmp_path)
    with pytest.raises(BadInputError) as info:
        resolve_inputs([path], None)
    assert path.name in info.value.message
    assert needle in info.value.message
    assert info.value.exit_code == 2
