"""Issue 23: a whole offline job completes from a fresh folder on a Parquet file and on a SQLite database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jobcheck import check_job
from test_offline_jobs import cli

from source_tables import rows, write_parquet, write_sqlite

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("name", "views"), [("x.parquet", ["x"]), ("x.sqlite", ["orders", "regions"])])
def test_run_on_a_new_source_completes(name: str, views: list[str], tmp_path: Path) -> None:
    write = write_parquet if name.endswith(".parquet") else write_sqlite
    data = write(tmp_path / name, rows())
    job_dir = tmp_path / "job"
    done = cli(
        "run", data.name, "-r", "Analyze this data", "--provider", "offline", "--yes", "--job-dir", "job", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == str(job_dir.resolve())
    check_job(job_dir, min_charts=1, min_markers=5)
    profile = json.loads((job_dir / "cache" / "profile.json").read_text(encoding="utf-8"))
    assert [t["view"] for t in profile["tables"]] == views
    assert (job_dir / "data" / name).is_file()
