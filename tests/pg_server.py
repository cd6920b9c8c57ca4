"""A real PostgreSQL server for the database-source tests: Debian's binaries, a loopback port, a temporary cluster.

No mock database. ``initdb`` and ``postgres`` refuse to run as root, so under root (CI) the cluster belongs to the
unprivileged ``nobody`` (or, where that user is missing, a system user made once with ``useradd``) and the binaries
run through ``setpriv``. The server listens on 127.0.0.1 only, on a free port, with its socket in its own folder; TCP
logins need the password (SCRAM), so the tests exercise the real password paths. Where PostgreSQL is not installed
the fixtures skip, and fail under ``INSIGHTLOOM_NO_SKIPS=1`` (CI), naming the install command.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"
SUPERUSER = "postgres"
#: The unprivileged owner of the cluster when the tests run as root.
RUN_AS = "nobody"
FALLBACK_USER = "insightloom-pg"
_INSTALL = "PostgreSQL is not installed; .ci/run installs it (apt-get install --no-install-recommends postgresql)"
SHOP = "shop"


def pg_bindir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` that has initdb and postgres."""
    found = [
        Path(p) for p in glob.glob(PG_BIN_GLOB) if (Path(p) / "initdb").is_file() and (Path(p) / "postgres").is_file()
    ]
    return max(found, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0) if found else None


def missing(what: str) -> None:
    """Skip, or fail under ``INSIGHTLOOM_NO_SKIPS=1`` (CI must run these tests)."""
    if os.environ.get("INSIGHTLOOM_NO_SKIPS") == "1":
        pytest.fail(f"{what} (CI runs the database tests with no skips)")
    pytest.skip(what)


def _unprivileged_ids() -> tuple[int, int]:
    """uid and gid the cluster runs as under root: ``nobody``, else a system user made for it if missing."""
    for name in (RUN_AS, FALLBACK_USER):
        try:
            entry = pwd.getpwnam(name)
            return entry.pw_uid, entry.pw_gid
        except KeyError:
            continue
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", FALLBACK_USER],
                   check=True, capture_output=True)  # fmt: skip
    entry = pwd.getpwnam(FALLBACK_USER)
    return entry.pw_uid, entry.pw_gid


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """One temporary cluster: ``start()`` runs initdb and the server, ``stop()`` shuts it down and deletes it."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.password = secrets.token_urlsafe(18)
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.ids = _unprivileged_ids() if os.geteuid() == 0 else None
        self.has_shop = False
        # /tmp itself, not pytest's folders: those are private to root, and the cluster's owner must enter this one.
        self.folder = Path(tempfile.mkdtemp(prefix="insightloom-pg-", dir="/tmp" if self.ids else None))
        if self.ids:
            os.chown(self.folder, *self.ids)
        self.data = self.folder / "data"
        self.log = self.folder / "postgres.log"

    def _as_owner(self, args: list[str]) -> list[str]:
        if self.ids is None:
            return args
        uid, gid = self.ids
        return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *args]

    def _env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.folder), "LC_ALL": "C.UTF-8"}

    def start(self) -> PostgresServer:
        pwfile = self.folder / "pw"
        pwfile.write_text(self.password + "\n")
        pwfile.chmod(0o600)
        if self.ids:
            os.chown(pwfile, *self.ids)
        initdb = [
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            f"--pwfile={pwfile}",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
        ]
        done = subprocess.run(self._as_owner(initdb), env=self._env(), capture_output=True, text=True, check=False)
        pwfile.unlink()
        if done.returncode != 0:
            pytest.fail(f"initdb failed ({done.returncode}): {done.stderr[-2000:]}")
        for _ in range(3):  # a free port can be taken between the probe and the bind: try another
            self.port = _free_port()
            if self._launch():
                return self
        pytest.fail(f"postgres did not start: {self.log.read_text(errors='replace')[-2000:]}")

    def _launch(self) -> bool:
        args = [
            str(self.bindir / "postgres"),
            "-D",
            str(self.data),
            "-p",
            str(self.port),
            "-k",
            str(self.folder),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=40",
        ]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(self._as_owner(args), env=self._env(), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                self.connect("postgres").close()
                return True
            except Exception:  # not accepting connections yet
                time.sleep(0.2)
        self.stop()
        return False

    def connect(self, dbname: str) -> Any:
        """A psycopg connection (autocommit) as the superuser, over TCP with the password."""
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user=SUPERUSER, password=self.password,
                               dbname=dbname, autocommit=True, connect_timeout=5)  # fmt: skip

    def stop(self) -> None:
        """Fast shutdown (SIGINT: roll back, disconnect, exit), then kill if it lingers."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class ShopDatabase:
    """A fresh database with ``customers`` and ``orders`` (a foreign key between them), on the test server."""

    server: PostgresServer
    name: str

    @property
    def url(self) -> str:
        """The URL a user passes: no password in it."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.server.port}/{self.name}"

    @property
    def password(self) -> str:
        return self.server.password

    def connect(self) -> Any:
        return self.server.connect(self.name)

    def rows(self, table: str) -> int:
        with self.connect() as conn:
            return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


SEGMENTS = ("retail", "wholesale", "online")
CITIES = ("Seoul", "Busan", "Incheon", "Daegu")
CHANNELS = ("store", "web", "phone")


def fill_shop(conn: Any, customers: int = 24, orders: int = 240) -> None:
    """Deterministic rows: every customer in a segment and city, every order for a customer, on a date."""
    conn.execute("CREATE TABLE customers (customer_id int PRIMARY KEY, name text NOT NULL, segment text NOT NULL, "
                 "city text NOT NULL, signup_date date NOT NULL)")  # fmt: skip
    conn.execute("CREATE TABLE orders (order_id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customers, "
                 "order_date date NOT NULL, channel text NOT NULL, quantity int NOT NULL, "
                 "amount numeric(10,2) NOT NULL)")  # fmt: skip
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO customers VALUES (%s, %s, %s, %s, date '2023-01-01' + %s)",
            [(i, f"Customer {i:02d}", SEGMENTS[i % 3], CITIES[i % 4], (i * 11) % 300) for i in range(1, customers + 1)],
        )
        rows = [
            (
                i,
                1 + (i * 7) % customers,
                (i * 3) % 360,
                CHANNELS[i % 3],
                1 + (i * 5) % 9,
                10 + (i * 37) % 250 + i % 4 / 4,
            )
            for i in range(1, orders + 1)
        ]
        cur.executemany("INSERT INTO orders VALUES (%s, %s, date '2024-01-01' + %s, %s, %s, %s)", rows)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (started on first use, deleted at the end of the session)."""
    bindir = pg_bindir()
    if bindir is None:
        missing(_INSTALL)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        missing("psycopg is not installed; pip install -e '.[dev]' (or '.[sql]') installs it")
    assert bindir is not None
    server = PostgresServer(bindir)
    try:
        yield server.start()
    finally:
        server.remove()


@pytest.fixture
def shop_db(postgres_server: PostgresServer) -> ShopDatabase:
    """The ``shop`` database with fresh customers and orders for one test (its schema is made again each time, which
    is quicker than a new database)."""
    if not postgres_server.has_shop:
        with postgres_server.connect("postgres") as admin:
            admin.execute(f"CREATE DATABASE {SHOP}")
        postgres_server.has_shop = True
    db = ShopDatabase(postgres_server, SHOP)
    with db.connect() as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
        fill_shop(conn)
    return db
