"""Inputs that looked fine but were not: Latin-1 read as Hangul, control bytes, random bytes, XLSX bombs and
formulas with no saved values (the input gaps of the isolation issue). Each is read right or refused with exit 2."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from insightloom.errors import BadInputError
from insightloom.intake import ingest, readers

Writer = Callable[[str, bytes], Path]


def _refused(path: Path, tmp_path: Path) -> BadInputError:
    with pytest.raises(BadInputError) as info:
        ingest([path], tmp_path / "job")
    assert info.value.exit_code == 2 and path.name in info.value.message and info.value.fix
    assert "\n" not in str(info.value)
    return info.value


def test_a_latin1_swedish_file_is_not_read_as_korean(write_bytes: Writer, tmp_path: Path) -> None:
    text = "Ort,Antal\nÄngelholm,3\nMalmö,4\nGöteborg,5\nÅre,6\n"
    profile = ingest([write_bytes("orter.csv", text.encode("latin-1"))], tmp_path / "job")
    table = profile.tables[0]
    frame = pd.read_parquet(tmp_path / "job" / table.parquet)
    assert frame["Ort"].tolist() == ["Ängelholm", "Malmö", "Göteborg", "Åre"]
    assert table.encoding not in (None, "utf-8", "cp949")  # the profile says which encoding was used
    korean = ingest([write_bytes("kr.csv", "지역,매출\n서울,100\n부산,200\n".encode("cp949"))], tmp_path / "job2")
    assert korean.tables[0].encoding == "cp949"


def test_control_characters_are_removed_and_counted(write_bytes: Writer, tmp_path: Path) -> None:
    data = b"name,amount\nAna\x1b[31m,1\nB\x00en,2\nCy,3\n"
    profile = ingest([write_bytes("ctl.csv", data)], tmp_path / "job")
    table = profile.tables[0]
    frame = pd.read_parquet(tmp_path / "job" / table.parquet)
    assert frame["name"].tolist() == ["Ana[31m", "Ben", "Cy"]
    assert table.control_chars_removed == 2
    assert '"control_chars_removed": 2' in (tmp_path / "job" / "cache" / "profile.json").read_text()


def test_control_characters_go_from_arrow_text_and_from_mixed_cells_alike() -> None:
    frame = pd.DataFrame({
        "text": pd.Series(["x\x00y", "ok", None, "e\x1b[1m\ufffe"], dtype="str"),  # a CSV column: Arrow strings
        "mixed": pd.Series([1, "z\x07", None, 2.5], dtype=object),  # an XLSX column: numbers and text
    })  # fmt: skip
    cleaned, removed = readers.strip_control_chars(frame)
    assert removed == 4
    assert cleaned["text"].tolist()[:2] == ["xy", "ok"] and cleaned["text"].tolist()[3] == "e[1m"
    assert cleaned["mixed"].tolist()[:2] == [1, "z"] and str(cleaned["text"].dtype) == "str"


def test_random_bytes_are_not_a_text_table(write_bytes: Writer, tmp_path: Path) -> None:
    err = _refused(write_bytes("noise.csv", os.urandom(20_000)), tmp_path)
    assert "not a text table" in err.message


def test_a_stray_cell_at_the_end_of_a_sheet_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "bomb.xlsx"
    wb = openpyxl.Workbook()
    wb.active["A1"], wb.active["A2"], wb.active["XFD1048576"] = "name", "x", "boom"
    wb.save(path)
    started = time.monotonic()
    err = _refused(path, tmp_path)
    assert "cap" in err.message and "1,048,576 rows" in err.message
    assert time.monotonic() - started < 30  # the benchmark figure is in the closing note; this only guards a hang


def test_a_sheet_that_expands_past_the_cell_cap_stops_while_streaming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "wide.xlsx"
    wb = openpyxl.Workbook()
    for row in range(1, 101):
        wb.active.append([f"c{j}" if row == 1 else row * j for j in range(20)])
    wb.save(path)
    monkeypatch.setattr(readers, "MAX_SHEET_CELLS", 500)
    monkeypatch.setattr(readers, "_check_declared_size", lambda path, ws: None)  # as if the dimension lied
    err = _refused(path, tmp_path)
    assert "expands past" in err.message


def test_a_column_of_formulas_without_saved_values_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "formulas.xlsx"
    wb = openpyxl.Workbook()
    wb.active.append(["qty", "price", "total"])
    for row in range(2, 12):
        wb.active.append([row, 2.5, f"=A{row}*B{row}"])  # openpyxl saves formulas, never their results
    wb.save(path)
    err = _refused(path, tmp_path)
    assert "'total'" in err.message and "formulas" in err.message and "save" in err.fix


def test_reading_a_big_sheet_stops_when_the_job_is_cancelled(tmp_path: Path) -> None:
    from insightloom.errors import JobCancelled

    path = tmp_path / "long.xlsx"
    wb = openpyxl.Workbook()
    for row in range(3000):
        wb.active.append(["name", "amount"] if row == 0 else [f"n{row}", row])
    wb.save(path)
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) >= 2  # the user cancels while the second thousand rows are read

    with pytest.raises(JobCancelled, match="long.xlsx"):
        readers.read_xlsx(path, cancelled=cancelled)
    assert len(readers.read_xlsx(path, cancelled=lambda: False)[0].frame) == 2999


def test_some_formulas_without_saved_values_are_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "mixed.xlsx"
    wb = openpyxl.Workbook()
    wb.active.append(["qty", "total"])
    for row in range(2, 12):
        wb.active.append([row, row * 2 if row % 2 else f"=A{row}*2"])  # half saved numbers, half bare formulas
    wb.save(path)
    with caplog.at_level("WARNING", logger="insightloom.intake"):
        profile = ingest([path], tmp_path / "job")
    assert profile.tables[0].rows == 10
    assert any("'total'" in r.getMessage() and "no saved value" in r.getMessage() for r in caplog.records)


def test_the_size_limit_applies_to_what_a_workbook_expands_to(tmp_path: Path) -> None:
    path = tmp_path / "compressible.xlsx"
    wb = openpyxl.Workbook()
    for _ in range(4000):
        wb.active.append(["same text in every cell"] * 5)  # zips to little, expands to a lot
    wb.save(path)
    assert path.stat().st_size < 200_000
    with pytest.raises(BadInputError) as info:
        ingest([path], tmp_path / "job", max_file_mb=0.5)
    assert "expands to" in info.value.message and "max_file_mb" in info.value.message
