"""A database URL is vetted before anything connects: scheme, no password, the extra; and where a password may come
from instead (the environment, a libpq password file). None of these tests needs a server."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.config import database_password, load_settings
from insightloom.contracts import load_schema
from insightloom.errors import BadInputError, ConfigError
from insightloom.intake.database import INSTALL_HINT, DatabaseSource, is_database_url, redact, require_extra
from insightloom.intake.database.pgpass import passfile_password, split_line

SECRET = "s3cr3t-Pa55"


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout + result.stderr


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://analyst:{SECRET}@127.0.0.1:5432/shop",
        f"postgres://analyst:{SECRET}@db/shop",
        f"postgresql://analyst:{SECRET}/x@db/shop",  # a "/" in the password: the host part is misread by urlsplit
        f"postgresql://analyst:{SECRET}@x@db/shop",
        f"postgresql://db/shop?user=analyst&password={SECRET}",
        f"postgresql://db/shop?sslpassword={SECRET}",
        "postgresql://analyst:@db/shop",
    ],
)
def test_a_url_with_a_password_is_refused_without_echoing_it(url: str, tmp_path: Path) -> None:
    with pytest.raises(BadInputError) as info:
        DatabaseSource.parse(url, ["orders"])
    assert SECRET not in str(info.value) and "PGPASSWORD" in info.value.fix and ".pgpass" in info.value.fix
    assert SECRET not in redact(url)
    job = tmp_path / "job"
    code, output = cli("run", url, "--table", "orders", "-r", "analyze", "--provider", "offline", "--yes",
                       "--job-dir", str(job))  # fmt: skip
    assert code == 2, output
    assert SECRET not in output and "password" in output.lower() and "Traceback" not in output
    assert not job.exists()  # refused before a job folder exists


@pytest.mark.parametrize("url", ["mysql://u@db/shop", "sqlite:///tmp/x.db", "file:///etc/passwd", "s3://b/k.csv"])
def test_other_schemes_are_refused_naming_the_supported_ones(url: str) -> None:
    code, output = cli("run", url, "--table", "t", "-r", "analyze", "--provider", "offline", "--yes")
    assert code == 2 and "postgresql://" in output and url.split("://")[0] in output


def test_urls_are_told_from_paths() -> None:
    assert is_database_url("postgresql://u@h/db") and is_database_url("postgres://h/db")
    assert not is_database_url("sales.csv") and not is_database_url("/data/postgresql/x.csv")
    assert not is_database_url("C:\\data\\x.csv")


def test_the_selection_is_checked() -> None:
    with pytest.raises(BadInputError, match="no table or query"):
        DatabaseSource.parse("postgresql://u@h/db")
    with pytest.raises(BadInputError, match="not a table name"):
        DatabaseSource.parse("postgresql://u@h/db", ["a.b.c"])
    with pytest.raises(BadInputError, match="--query is empty"):
        DatabaseSource.parse("postgresql://u@h/db", [], "  ")
    with pytest.raises(BadInputError, match="--name"):
        DatabaseSource.parse("postgresql://u@h/db", ["orders"], None, "x")
    source = DatabaseSource.parse("postgresql://u@h:6543/db?sslmode=require", ["public.orders"], "SELECT 1", "one")
    assert source.parts == {"display": source.url, "host": "h", "port": 6543, "database": "db", "user": "u"}
    assert DatabaseSource.from_request(source.to_request()) == source
    assert source.to_request() == {"kind": "database", "url": "postgresql://u@h:6543/db?sslmode=require",
                                   "tables": ["public.orders"], "query": "SELECT 1", "query_name": "one"}  # fmt: skip


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["x.csv", "--query", "SELECT 1"], "no database URL"),  # --table alone also picks SQLite tables
        (["postgresql://u@127.0.0.1:1/db"], "--table"),
        (["postgresql://u@127.0.0.1:1/db", "x.csv", "--table", "t"], "only input"),
    ],
)
def test_cli_refuses_a_mixed_or_empty_selection(args: list[str], needle: str) -> None:
    code, output = cli("run", *args, "-r", "analyze", "--provider", "offline", "--yes")
    assert code == 2 and needle in output, output


def test_without_the_extra_a_url_exits_2_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # import sqlalchemy now raises ImportError
    with pytest.raises(ConfigError) as info:
        require_extra()
    assert INSTALL_HINT in info.value.fix
    code, output = cli("run", "postgresql://u@127.0.0.1:1/db", "--table", "t", "-r", "x", "--provider", "offline",
                       "--yes")  # fmt: skip
    assert code == 2 and "pip install 'insightloom[sql]'" in output, output


def test_request_schema_refuses_a_url_with_a_password() -> None:
    schema = load_schema("request")
    good = {"request": "r", "inputs": [], "created_at": "2026-12-01T08:00:00Z",
            "source": {"kind": "database", "url": "postgresql://u@h/db", "tables": ["t"], "query": None}}  # fmt: skip
    jsonschema.validate(good, schema)
    for url in (f"postgresql://u:{SECRET}@h/db", f"postgresql://h/db?password={SECRET}"):
        bad = {**good, "source": {**good["source"], "url": url}}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


# --- where the password comes from ----------------------------------------------------------------------------


def _passfile(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "pgpass"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_password_file_lines_match_as_libpq_reads_them(tmp_path: Path) -> None:
    path = _passfile(tmp_path, "# comment\n"
                               "other:5432:shop:analyst:wrong\n"
                               "db.example:*:shop:analyst:pa\\:ss:with:colons\n"
                               "*:*:*:analyst:fallback\n")  # fmt: skip
    assert (
        passfile_password(path, host="db.example", port="6000", database="shop", user="analyst") == "pa:ss:with:colons"
    )
    assert passfile_password(path, host="elsewhere", port="5432", database="x", user="analyst") == "fallback"
    assert passfile_password(path, host="elsewhere", port="5432", database="x", user="nobody") is None
    assert passfile_password(tmp_path / "missing", host="h", port="1", database="d", user="u") is None
    assert split_line(r"h\:1:5432:d:u:p\\w") == ["h:1", "5432", "d", "u", "p\\w"]


def test_a_password_file_others_can_read_is_ignored_with_the_fix(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _passfile(tmp_path, "*:*:*:*:leaked\n", mode=0o644)
    with caplog.at_level(logging.WARNING):
        assert passfile_password(path, host="h", port="1", database="d", user="u") is None
    assert "chmod 600" in caplog.text and "leaked" not in caplog.text


def test_database_password_prefers_the_environment_then_the_file(tmp_path: Path) -> None:
    path = _passfile(tmp_path, "localhost:5432:shop:analyst:from-file\n")
    env = {"PGPASSFILE": str(path), "PGPASSWORD": "from-pg", "INSIGHTLOOM_DB_PASSWORD": "from-insightloom"}
    assert database_password(None, None, "shop", "analyst", env=env) == ("from-insightloom", "INSIGHTLOOM_DB_PASSWORD")
    del env["INSIGHTLOOM_DB_PASSWORD"]
    assert database_password(None, None, "shop", "analyst", env=env) == ("from-pg", "PGPASSWORD")
    del env["PGPASSWORD"]
    assert database_password(None, None, "shop", "analyst", env=env) == ("from-file", f"password file {path}")
    assert database_password("/run/postgresql", None, "shop", "analyst", env=env)[0] == "from-file"  # a socket
    assert database_password("db", 5432, "shop", "analyst", env=env) == (None, "none")
    home = tmp_path / "home"
    home.mkdir()
    _passfile(tmp_path, "*:*:*:*:home-file\n").rename(home / ".pgpass")
    assert database_password("db", None, None, "u", env={}, home=home)[0] == "home-file"


def test_snapshot_limits_are_settings_with_env_overrides(tmp_path: Path) -> None:
    settings = load_settings(None, env={}, cwd=tmp_path)
    assert (settings.max_snapshot_rows, settings.max_snapshot_mb, settings.sql_timeout_s) == (5_000_000, 1024.0, 300.0)
    env = {
        "INSIGHTLOOM_MAX_SNAPSHOT_ROWS": "1000",
        "INSIGHTLOOM_MAX_SNAPSHOT_MB": "2.5",
        "INSIGHTLOOM_SQL_TIMEOUT_S": "9",
    }
    settings = load_settings(None, env=env, cwd=tmp_path)
    assert (settings.max_snapshot_rows, settings.max_snapshot_mb, settings.sql_timeout_s) == (1000, 2.5, 9.0)
    with pytest.raises(ConfigError, match="INSIGHTLOOM_MAX_SNAPSHOT_ROWS"):
        load_settings(None, env={"INSIGHTLOOM_MAX_SNAPSHOT_ROWS": "lots"}, cwd=tmp_path)
    (tmp_path / "insightloom.yaml").write_text("max_snapshot_rows: 0\n")
    with pytest.raises(ConfigError, match="max_snapshot_rows"):
        load_settings(None, env={}, cwd=tmp_path)
