"""Bad input: exit 2 with one line naming the file and the fix, never a traceback."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from insightloom.cli import app


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {
        "empty": tmp_path / "empty.csv",
        "header": tmp_path / "header.csv",
        "binary": tmp_path / "binary.csv",
        "ext": tmp_path / "notes.txt",
        "good": tmp_path / "good.csv",
    }
    out["empty"].write_bytes(b"")
    out["header"].write_text("a,b,c\n")
    out["binary"].write_bytes(bytes(range(256)) * 40)
    out["ext"].write_text("hello")
    out["good"].write_text("region,sales\nnorth,10\nsouth,20\n")
    return out


@pytest.mark.parametrize("case", ["missing", "empty", "header", "binary", "ext"])
def test_bad_file_exits_2_naming_the_file(case: str, files: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "missing.csv" if case == "missing" else files[case]
    code, _, stderr = run(
        "run", str(path), "-r", "analyze", "--provider", "offline", "--yes", "--job-dir", str(tmp_path / f"job-{case}")
    )
    assert code == 2, stderr
    assert path.name in stderr
    assert "Traceback" not in stderr
    assert "Fix" in stderr or "fix" in stderr


def test_empty_request_exits_2(files: dict[str, Path]) -> None:
    code, _, stderr = run("run", str(files["good"]), "-r", "   ", "--provider", "offline", "--yes")
    assert code == 2 and "request" in stderr.lower()


def test_non_tty_without_yes_refuses(files: dict[str, Path], tmp_path: Path) -> None:
    code, _, stderr = run(
        "run", str(files["good"]), "-r", "analyze", "--provider", "offline", "--job-dir", str(tmp_path / "j")
    )
    assert code == 2 and "--yes" in stderr
    assert not (tmp_path / "j").exists()


def test_non_empty_job_dir_refused(files: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    code, _, stderr = run(
        "run", str(files["good"]), "-r", "analyze", "--provider", "offline", "--yes", "--job-dir", str(target)
    )
    assert code == 2 and "not empty" in stderr
    assert (target / "keep.txt").read_text() == "mine"


def test_version() -> None:
    code, stdout, _ = run("--version")
    assert code == 0 and stdout.startswith("insightloom ")


def test_an_unknown_table_exits_2_naming_it_and_the_request_records_the_tables(tmp_path: Path) -> None:
    db = tmp_path / "shop.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE orders (region TEXT, sales INTEGER)")
    con.executemany("INSERT INTO orders VALUES (?, ?)", [("north", 10), ("south", 20)])
    con.commit()
    con.close()
    job = tmp_path / "job"
    code, _, stderr = run(
        "run", str(db), "-r", "analyze", "--provider", "offline", "--yes", "--job-dir", str(job), "--table", "nope"
    )
    assert code == 2, stderr
    assert "shop.sqlite" in stderr and "'nope'" in stderr and "its tables: orders" in stderr
    assert json.loads((job / "request.json").read_text(encoding="utf-8"))["tables"] == ["nope"]  # what resume reads
