"""A database named by URL: what to read from it, vetted before anything connects.

The URL is user input. It is parsed here with the standard library (no driver needed), never passed to a shell,
and refused when it holds a password: a password on the command line lands in shell history, ``ps`` and logs, so it
comes from the environment or a password file instead (``config.database_password``). What ``request.json``
records is :meth:`DatabaseSource.to_request`, which therefore never holds one.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from insightloom.errors import BadInputError, ConfigError
from insightloom.intake.inputs import SUPPORTED_TYPES

#: Schemes accepted, all read through SQLAlchemy with psycopg 3 (the ``sql`` extra).
SCHEMES: tuple[str, ...] = ("postgresql", "postgres", "postgresql+psycopg")
SQLALCHEMY_SCHEME = "postgresql+psycopg"
INSTALL_HINT = "pip install 'insightloom[sql]'"
DEFAULT_QUERY_NAME = "query"
#: ``scheme://`` at the start of a DATA argument: a URL, never a file path.
_URL_START = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_TABLE_NAME = re.compile(r"^[^.\s\x00]+(?:\.[^.\s\x00]+)?$")
#: The extra's modules: SQLAlchemy and the psycopg driver it uses.
_EXTRA_MODULES = ("sqlalchemy", "psycopg")
_PASSWORD_FIX = (
    "remove the password from the URL (postgresql://USER@HOST:PORT/DB) and give it in the environment "
    "(INSIGHTLOOM_DB_PASSWORD or PGPASSWORD) or in a password file (~/.pgpass, or the file PGPASSFILE names, "
    "mode 600); it is in your shell history now, so consider changing it."
)


def is_database_url(arg: str) -> bool:
    """Whether a DATA argument is a URL (``scheme://...``) rather than a path."""
    return bool(_URL_START.match(arg))


@dataclass(frozen=True)
class DatabaseSource:
    """One database and the tables (and at most one query) to snapshot from it, in one transaction.

    Attributes:
        url: The URL as given, without a password (one with a password is refused).
        tables: Table (or database view) names, ``name`` or ``schema.name``, in the order given.
        query: A ``SELECT`` whose rows become one more view, or None.
        query_name: The view name of the query's rows (``--name``).
    """

    url: str
    tables: tuple[str, ...] = ()
    query: str | None = None
    query_name: str = DEFAULT_QUERY_NAME

    @classmethod
    def parse(
        cls, url: str, tables: list[str] | None = None, query: str | None = None, name: str | None = None
    ) -> DatabaseSource:
        """Vet the URL and the selection (the CLI's DATA, ``--table``, ``--query`` and ``--name``).

        Raises:
            BadInputError: An unsupported scheme, a password in the URL, a malformed URL or table name, or nothing
                to read. Messages never echo a password.
        """
        parts = vet_url(url)
        chosen = tuple(t.strip() for t in tables or [])
        for table in chosen:
            if not _TABLE_NAME.match(table):
                raise BadInputError(
                    f"--table {table!r} is not a table name.", "give NAME or SCHEMA.NAME, e.g. --table public.orders."
                )
        if query is not None and not query.strip():
            raise BadInputError("--query is empty.", 'give a SELECT, e.g. --query "SELECT region, amount FROM sales".')
        if not chosen and query is None:
            raise BadInputError(
                f"{parts['display']}: no table or query to read.",
                'name the tables with --table (repeat it for several), or give --query "SELECT ...".',
            )
        if name is not None and query is None:
            raise BadInputError(
                "--name names the view of --query, and no --query was given.", "add --query or drop --name."
            )
        label = (name or DEFAULT_QUERY_NAME).strip()
        if not label:
            raise BadInputError("--name is empty.", "give the query's view a name, e.g. --name monthly_sales.")
        return cls(url=url, tables=chosen, query=query, query_name=label)

    @classmethod
    def from_request(cls, data: dict[str, Any]) -> DatabaseSource:
        """Rebuild the source ``request.json`` recorded (a resumed job), vetted again."""
        return cls.parse(str(data["url"]), list(data.get("tables") or []), data.get("query"), data.get("query_name"))

    def to_request(self) -> dict[str, Any]:
        """What ``request.json`` records: the URL (no password in it), the tables and the query."""
        return {
            "kind": "database",
            "url": self.url,
            "tables": list(self.tables),
            "query": self.query,
            "query_name": self.query_name if self.query is not None else None,
        }

    @property
    def parts(self) -> dict[str, Any]:
        """Host, port, database and user from the URL (each None when the URL leaves it to libpq's defaults)."""
        return vet_url(self.url)

    @property
    def display(self) -> str:
        """The URL for messages and logs (vetted: no password in it)."""
        return redact(self.url)


def vet_url(url: str) -> dict[str, Any]:
    """Split a database URL into host, port, database and user, refusing what insightloom will not use.

    A refusal echoes no part of a URL that may hold a password: only its scheme.

    Raises:
        BadInputError: Unsupported scheme, a password (in the user part or the query string), or a malformed URL.
    """
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in SCHEMES:
        raise BadInputError(
            f"Unsupported data source '{scheme}://'.",
            f"pass a PostgreSQL URL ({', '.join(s + '://' for s in SCHEMES)}), or files ({SUPPORTED_TYPES}).",
        )
    if _has_password(rest):
        raise BadInputError("The database URL holds a password, and insightloom never takes one on the command line.",
                            _PASSWORD_FIX)  # fmt: skip
    try:
        split = urlsplit(url)
        port = split.port
        query = dict(parse_qsl(split.query, keep_blank_values=True))
    except ValueError as exc:  # its text may quote the URL: not shown
        raise BadInputError(
            "The database URL's host or port does not parse.", "e.g. postgresql://USER@HOST:5432/DB"
        ) from exc
    return {
        "display": url,
        "host": split.hostname or query.get("host") or None,
        "port": port or (int(query["port"]) if query.get("port", "").isdigit() else None),
        "database": split.path.lstrip("/") or query.get("dbname") or None,
        "user": split.username or query.get("user") or None,
    }


def _has_password(rest: str) -> bool:
    """A password in the user part (``user:secret@``, even one with ``/`` or ``@`` in it) or the query string."""
    at = rest.rfind("@")
    userinfo = rest[:at] if at >= 0 else ""
    if ":" in userinfo and "?" not in userinfo:  # an "@" inside the query string is no user part
        return True
    try:
        split = urlsplit(f"x://{rest}")
    except ValueError:
        return False  # the port check names it
    return split.password is not None or any("password" in key.lower() for key, _ in parse_qsl(split.query))


def redact(url: str) -> str:
    """The URL with what may be a password replaced by ``***``: for logs, in case one slipped past the vetting."""
    scheme, sep, rest = url.partition("://")
    if not sep or not _has_password(rest):
        return url
    at = rest.rfind("@")
    user = rest[:at].split(":", 1)[0] if at >= 0 else ""
    host = rest[at + 1 :].split("?", 1)[0] if at >= 0 else rest.split("?", 1)[0]
    return f"{scheme}://{user}:***@{host}" if user else f"{scheme}://{host.rpartition('@')[2]}?***"


def require_extra() -> None:
    """Import SQLAlchemy and psycopg, or say how to install them.

    Raises:
        ConfigError: One of them is missing (exit 2), naming ``pip install 'insightloom[sql]'``.
    """
    for name in _EXTRA_MODULES:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ConfigError(
                f"Reading a database needs SQLAlchemy and the psycopg driver, and {name} is not installed.",
                f"install the extra: {INSTALL_HINT}",
            ) from exc
