"""Issue 23: inputs past intake's memory budget or the job quota are refused up front with the setting named, the
file cap is 5 GB, and intake reports its progress per file and per table."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from insightloom.config import Settings
from insightloom.errors import BadInputError
from insightloom.intake import ingest
from insightloom.intake.budget import BASE_MB, check_budget, default_memory_budget_mb, table_bytes


def _csv(folder: Path, name: str = "sales.csv", rows: int = 200) -> Path:
    path = folder / name
    path.write_text("region,amount\n" + "".join(f"{'North' if i % 2 else 'South'},{i * 1.5}\n" for i in range(rows)))
    return path


def test_a_table_past_the_memory_budget_is_refused_before_anything_is_copied(tmp_path: Path) -> None:
    data = _csv(tmp_path)
    job = tmp_path / "job"
    with pytest.raises(BadInputError) as info:
        ingest([data], job, memory_budget_mb=BASE_MB / 2)
    assert str(data) in info.value.message and "memory_budget_mb" in info.value.message
    assert "INSIGHTLOOM_MEMORY_BUDGET_MB" in info.value.fix
    assert not (job / "data").exists()  # refused up front: nothing copied, nothing cached


def test_inputs_that_would_fill_the_job_quota_are_refused_naming_max_job_mb(tmp_path: Path) -> None:
    data = _csv(tmp_path, rows=20_000)
    with pytest.raises(BadInputError) as info:
        check_budget([data], memory_budget_mb=None, max_job_mb=0.1)
    assert "max_job_mb" in info.value.message and "max_job_mb:" in info.value.fix
    check_budget([data], memory_budget_mb=None, max_job_mb=2048)  # the default quota holds it


def test_a_workbook_counts_as_unpacked(tmp_path: Path) -> None:
    book = tmp_path / "book.xlsx"
    with zipfile.ZipFile(book, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", "<row/>" * 100_000)
    assert table_bytes(book) == 600_000 > book.stat().st_size


def test_the_defaults_take_files_of_gigabytes() -> None:
    assert Settings().max_file_mb == 5120
    assert Settings().memory_budget_mb is None and default_memory_budget_mb() > 1024


def test_intake_reports_each_file_read_and_each_table_cached(tmp_path: Path) -> None:
    events: list[dict[str, Any]] = []
    ingest(
        [_csv(tmp_path), _csv(tmp_path, "costs.csv", rows=30)],
        tmp_path / "job",
        on_progress=lambda **event: events.append(event),
    )
    messages = [e["message"] for e in events]
    assert messages[0].startswith("sales.csv: reading") and "MB" in messages[0]
    assert "sales: 200 rows read, typed and cached" in messages and "costs: 30 rows read, typed and cached" in messages
    assert {e["rows"] for e in events if "rows" in e} == {200, 30}


def test_a_json_array_is_budgeted_as_parsed_whole(tmp_path: Path) -> None:
    rows = ",".join(f'{{"region": "North", "amount": {i}}}' for i in range(20_000))
    array, lines = tmp_path / "sales.json", tmp_path / "sales.jsonl"
    array.write_text(f"[{rows}]")
    lines.write_text("\n".join(f'{{"region": "North", "amount": {i}}}' for i in range(20_000)))
    budget = BASE_MB + 20 * array.stat().st_size / 1024 / 1024  # room for JSON Lines, not for the whole array
    check_budget([lines], memory_budget_mb=budget, max_job_mb=2048)
    with pytest.raises(BadInputError) as info:
        check_budget([array], memory_budget_mb=budget, max_job_mb=2048)
    assert str(array) in info.value.message and ".jsonl" in info.value.fix
