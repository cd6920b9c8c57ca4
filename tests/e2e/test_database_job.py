"""``insightloom run postgresql://...`` through the real CLI, on the offline model, against the tests' own server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jobcheck import check_job

from pg_server import ShopDatabase

pytestmark = pytest.mark.e2e


def test_a_job_on_two_database_tables_completes_from_its_snapshot(shop_db: ShopDatabase, tmp_path: Path) -> None:
    job = tmp_path / "job"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_ACCESS", "AWS_SECRET", "INSIGHTLOOM_"))}
    env["INSIGHTLOOM_DB_PASSWORD"] = shop_db.password  # the environment, never the command line
    args = ["run", shop_db.url, "--table", "orders", "--table", "customers", "-r", "Analyze the orders and write a "
            "DOCX report", "--provider", "offline", "--yes", "--job-dir", str(job)]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "insightloom", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=900, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == str(job.resolve())
    assert "orders: 240 rows snapshotted" in done.stderr  # the CLI's progress lines
    check_job(job, min_charts=1, min_markers=3)  # request.json too: the source without a password
    profile = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))
    assert [(t["view"], t["file"], t["rows"]) for t in profile["tables"]] == [
        ("orders", "orders.parquet", 240),
        ("customers", "customers.parquet", 24),
    ]
    assert profile["aliases"] == {"data": "orders"}
    request = json.loads((job / "request.json").read_text(encoding="utf-8"))
    assert request["source"]["url"] == shop_db.url and request["source"]["tables"] == ["orders", "customers"]
    progress = [json.loads(line) for line in (job / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {e["data"]["view"] for e in progress if e["kind"] == "progress" and e["data"].get("done")} == {
        "orders",
        "customers",
    }
    for path in job.rglob("*"):  # not in a log, a transcript, a script or run_info.json
        assert not path.is_file() or shop_db.password.encode() not in path.read_bytes(), path
