"""Snapshots of a real PostgreSQL server (``pg_server``): one read-only transaction, limits that refuse, the same
typing and profile as a CSV of the same table, and a snapshot that later steps and resumes read instead of the
database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import pytest
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.config import Settings
from insightloom.contracts import load_schema
from insightloom.errors import BadInputError
from insightloom.intake import ingest
from insightloom.intake.database import MANIFEST, DatabaseSource, SnapshotLimits, ingest_database
from insightloom.intake.profile import DataProfile
from insightloom.workflow import JobOptions, create_job, load_runtime, stages
from insightloom.workflow.pipeline import job_inputs
from pg_server import ShopDatabase

LIMITS = SnapshotLimits(max_rows=10_000, max_mb=64, timeout_s=30)


def snapshot(
    db: ShopDatabase,
    job: Path,
    tables: list[str] | None = None,
    query: str | None = None,
    name: str | None = None,
    limits: SnapshotLimits = LIMITS,
    **kwargs: Any,
) -> DataProfile:
    source = DatabaseSource.parse(db.url, tables if tables is not None else ["orders"], query, name)
    return ingest_database(source, job, limits=limits, **kwargs)


@pytest.fixture
def login(monkeypatch: pytest.MonkeyPatch, shop_db: ShopDatabase) -> ShopDatabase:
    monkeypatch.setenv("INSIGHTLOOM_DB_PASSWORD", shop_db.password)
    return shop_db


def test_tables_are_read_in_one_repeatable_read_read_only_transaction(login: ShopDatabase, tmp_path: Path) -> None:
    events: list[dict[str, Any]] = []

    def on_progress(**data: Any) -> None:
        events.append(data)
        if data["view"] == "orders" and data["done"]:  # orders is read; customers is not yet: change both now
            with login.connect() as other:
                other.execute("INSERT INTO customers VALUES (999, 'Late', 'retail', 'Seoul', date '2024-06-01')")
                other.execute("INSERT INTO orders VALUES (9999, 999, date '2024-06-02', 'web', 1, 5.00)")

    settings = (
        "SELECT current_setting('transaction_isolation') AS isolation, "
        "current_setting('transaction_read_only') AS read_only"
    )
    profile = snapshot(login, tmp_path, ["orders", "customers"], settings, "tx", on_progress=on_progress)
    assert [t.view for t in profile.tables] == ["orders", "customers", "tx"] and profile.aliases == {"data": "orders"}
    assert login.rows("customers") == 25  # the late row is in the database ...
    customers = pd.read_parquet(tmp_path / "cache" / "customers.parquet")
    assert len(customers) == 24 and 999 not in set(customers["customer_id"])  # ... and in no table of the snapshot
    tx = pd.read_parquet(tmp_path / "cache" / "tx.parquet")
    assert tx.iloc[0].to_dict() == {"isolation": "repeatable read", "read_only": "on"}
    assert [e["message"] for e in events if e["done"]][0] == "orders: 240 rows snapshotted (0.0 MB)"
    assert {e["reason"] for e in events} == {"snapshot"}


def test_a_table_over_the_row_limit_is_refused_with_the_fix_and_nothing_is_kept(
    login: ShopDatabase, tmp_path: Path
) -> None:
    with pytest.raises(BadInputError) as info:
        snapshot(login, tmp_path, ["customers", "orders"], limits=SnapshotLimits(100, 64, 30))
    assert "table orders" in info.value.message and "more than 100 rows" in info.value.message
    assert "max_snapshot_rows" in info.value.fix and "INSIGHTLOOM_MAX_SNAPSHOT_ROWS" in info.value.fix
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["customers.parquet"]  # no manifest: not whole
    with pytest.raises(BadInputError, match="max_snapshot_mb"):
        snapshot(login, tmp_path / "small", limits=SnapshotLimits(10_000, 0.001, 30))


def test_the_statement_timeout_stops_a_slow_query(login: ShopDatabase, tmp_path: Path) -> None:
    with pytest.raises(BadInputError) as info:
        snapshot(login, tmp_path, [], "SELECT pg_sleep(5), 1 AS one", limits=SnapshotLimits(10, 64, 0.5))
    assert "0.5 s" in info.value.message and "sql_timeout_s" in info.value.fix


def test_a_query_that_writes_is_refused_and_writes_nothing(login: ShopDatabase, tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="data-modifying"):
        snapshot(login, tmp_path / "with", [], "WITH gone AS (DELETE FROM orders RETURNING *) SELECT * FROM gone")
    with login.connect() as conn:  # a function that writes passes the cursor's rule: the READ ONLY transaction stops it
        conn.execute("CREATE FUNCTION wipe() RETURNS int LANGUAGE sql AS 'DELETE FROM orders RETURNING 1'")
    with pytest.raises(BadInputError) as info:
        snapshot(login, tmp_path / "function", [], "SELECT wipe() AS n")
    assert "only reads" in info.value.message and "read-only transaction" in info.value.message
    assert login.rows("orders") == 240


def test_a_missing_table_names_the_ones_there(login: ShopDatabase, tmp_path: Path) -> None:
    with pytest.raises(BadInputError) as info:
        snapshot(login, tmp_path, ["order"])
    assert "'order'" in info.value.message and "customers, orders" in info.value.fix


def test_a_refused_login_names_where_the_password_came_from(
    shop_db: ShopDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(BadInputError) as info:
        snapshot(shop_db, tmp_path / "none")
    assert "refused the login" in info.value.message and "PGPASSWORD" in info.value.fix
    monkeypatch.setenv("PGPASSWORD", "wrong-Pa55word")
    with pytest.raises(BadInputError) as info:
        snapshot(shop_db, tmp_path / "wrong")
    assert "PGPASSWORD" in info.value.fix and "wrong-Pa55word" not in str(info.value)
    monkeypatch.delenv("PGPASSWORD")
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{shop_db.server.port}:{shop_db.name}:postgres:{shop_db.password}\n")
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    assert snapshot(shop_db, tmp_path / "file").tables[0].rows == 240


def test_the_snapshot_is_what_later_intakes_read(login: ShopDatabase, tmp_path: Path) -> None:
    first = snapshot(login, tmp_path)
    with login.connect() as conn:
        conn.execute("DELETE FROM orders WHERE order_id > 100")
    again = snapshot(login, tmp_path)  # a resumed intake: the manifest is there, the database is not read
    assert again.tables[0].rows == first.tables[0].rows == 240
    manifest = json.loads((tmp_path / "data" / MANIFEST).read_text())
    assert manifest["tables"][0]["rows"] == 240 and manifest["source"]["url"] == login.url
    (tmp_path / "data" / "orders.parquet").write_bytes(b"changed")
    with pytest.raises(BadInputError, match="changed after intake"):
        snapshot(login, tmp_path)


def test_a_resumed_job_reads_the_snapshot_request_json_names(login: ShopDatabase, tmp_path: Path) -> None:
    source = DatabaseSource.parse(login.url, ["customers"])
    rt = create_job(
        JobOptions(inputs=[], request="analyze", settings=Settings(), job_dir=tmp_path / "job", source=source)
    )
    stages.intake(rt, [], None, source=source)  # the first intake: the source the command line named
    with login.connect() as conn:
        conn.execute("INSERT INTO customers VALUES (999, 'Late', 'retail', 'Seoul', date '2024-06-01')")
    resumed = load_runtime(rt.root)
    stages.intake(resumed, job_inputs(resumed), None)  # what `insightloom resume` does for a job stopped in intake
    assert resumed.profile is not None and resumed.profile.tables[0].rows == 24
    assert len(pd.read_parquet(rt.root / "cache" / "customers.parquet")) == 24


def test_a_resume_never_connects_to_the_database_a_script_wrote_into_request_json(
    login: ShopDatabase, tmp_path: Path
) -> None:
    source = DatabaseSource.parse(login.url, ["customers"])
    rt = create_job(
        JobOptions(inputs=[], request="analyze", settings=Settings(), job_dir=tmp_path / "job", source=source)
    )
    stages.intake(rt, [], None, source=source)
    request = json.loads((rt.root / "request.json").read_text())
    request["source"]["tables"] = ["orders"]  # a script asks for another table and removes the snapshot
    (rt.root / "request.json").write_text(json.dumps(request))
    (rt.root / "data" / "snapshot.json").unlink()
    resumed = load_runtime(rt.root)
    with pytest.raises(BadInputError, match="never connects to a database again") as info:
        stages.intake(resumed, job_inputs(resumed), None)
    assert "insightloom run" in info.value.fix
    assert not (rt.root / "data" / "orders.parquet").exists()


def test_a_snapshot_manifest_naming_other_files_or_views_is_not_read(login: ShopDatabase, tmp_path: Path) -> None:
    source = DatabaseSource.parse(login.url, ["customers"])
    rt = create_job(
        JobOptions(inputs=[], request="analyze", settings=Settings(), job_dir=tmp_path / "job", source=source)
    )
    stages.intake(rt, [], None, source=source)
    manifest = rt.root / "data" / "snapshot.json"
    document = json.loads(manifest.read_text())
    document["tables"][0]["file"] = "../cache/profile.json"  # a script points the snapshot elsewhere
    manifest.write_text(json.dumps(document))
    resumed = load_runtime(rt.root)
    with pytest.raises(BadInputError, match="missing or incomplete"):
        stages.intake(resumed, job_inputs(resumed), None)


def test_a_table_profiles_as_its_csv_export_does(login: ShopDatabase, tmp_path: Path) -> None:
    csv = tmp_path / "orders.csv"
    with login.connect() as conn, conn.cursor().copy("COPY orders TO STDOUT WITH (FORMAT csv, HEADER)") as copy:
        csv.write_bytes(b"".join(bytes(chunk) for chunk in copy))
    from_csv = ingest([csv], tmp_path / "csv").tables[0]
    from_db = snapshot(login, tmp_path / "db").tables[0]
    assert from_db.rows == from_csv.rows == 240 and from_db.view == from_csv.view == "orders"
    keys = ("name", "dtype", "role", "semantic", "aggregation", "unit", "missing", "distinct", "min", "max")
    assert [{k: c.to_dict().get(k) for k in keys} for c in from_db.columns] == [
        {k: c.to_dict().get(k) for k in keys} for c in from_csv.columns
    ]
    assert from_db.headline_measures == from_csv.headline_measures and from_db.time_axis == from_csv.time_axis
    db_frame = pd.read_parquet(tmp_path / "db" / "cache" / "orders.parquet")
    csv_frame = pd.read_parquet(tmp_path / "csv" / "cache" / "orders.parquet")
    pd.testing.assert_frame_equal(db_frame, csv_frame, check_dtype=False)  # dates: ms from date objects, us from text


def test_server_types_keep_their_type_across_chunks_and_text_passes_unchanged(
    login: ShopDatabase, tmp_path: Path
) -> None:
    query = (
        "SELECT g AS n, CASE WHEN g > 1500 THEN g * 1.5 END AS late_amount, g % 2 = 0 AS even, "
        "timestamptz '2024-01-01 09:00+09' + g * interval '1 hour' AS at, gen_random_uuid() AS id, "
        "json_build_object('g', g) AS doc, '100% :x ::y' AS pct "
        "FROM generate_series(1, 3000) g"
    )
    profile = snapshot(login, tmp_path, [], query, "mixed")
    types = {c.name: c.dtype for c in profile.tables[0].columns}
    assert types["n"] == "int64" and types["late_amount"] == "float64" and types["even"].startswith("bool")
    assert types["at"].startswith("datetime") and types["pct"] == "string"
    frame = pd.read_parquet(tmp_path / "cache" / "mixed.parquet")
    assert frame["late_amount"].isna().sum() == 1500 and frame["late_amount"].max() == 4500.0  # first chunk all NULL
    assert set(frame["pct"]) == {"100% :x ::y"} and str(frame["at"].dt.tz) == "UTC"
    assert frame["at"].iloc[0] == pd.Timestamp("2024-01-01 01:00", tz="UTC")


def test_a_failed_intake_through_the_cli_leaves_no_password_anywhere(
    login: ShopDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSIGHTLOOM_MAX_SNAPSHOT_ROWS", "50")
    job = tmp_path / "job"
    result = CliRunner().invoke(app, ["run", login.url, "--table", "orders", "-r", "analyze", "--provider", "offline",
                                      "--yes", "--job-dir", str(job), "-vv"])  # fmt: skip
    assert result.exit_code == 2, result.stderr
    assert "max_snapshot_rows" in result.stderr and login.password not in result.stdout + result.stderr
    request = json.loads((job / "request.json").read_text())
    jsonschema.validate(request, load_schema("request"))
    assert request["inputs"] == [] and request["source"] == {
        "kind": "database", "url": login.url, "tables": ["orders"], "query": None, "query_name": None
    }  # fmt: skip
    for path in job.rglob("*"):
        assert not path.is_file() or login.password.encode() not in path.read_bytes(), path
