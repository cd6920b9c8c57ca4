"""What a database or driver error means for the user: one line naming the source and the fix (exit 2).

The server's own first line is kept (it names the table, column or user), the SQL text and SQLAlchemy's links are
not, and the password is scrubbed from whatever is shown in case a driver ever echoed it.
"""

from __future__ import annotations

from typing import Any

from insightloom.config import DB_PASSWORD_ENV_VARS, SNAPSHOT_ENV
from insightloom.errors import BadInputError
from insightloom.intake.database.source import DatabaseSource

#: SQLSTATE codes (PostgreSQL's error codes) with a fix of their own.
_QUERY_CANCELED = "57014"
_READ_ONLY = "25006"
_PRIVILEGE = "42501"
_LOGIN = ("28P01", "28000")
_UNKNOWN_DATABASE = "3D000"
_LOGIN_TEXT = ("password authentication failed", "no password supplied", "authentication failed")
_UNREACHABLE_TEXT = ("connection refused", "could not translate host", "timeout expired", "no route to host",
                     "could not connect", "connection to server")  # fmt: skip


def database_error(
    exc: Any, source: DatabaseSource, password: tuple[str | None, str], timeout_s: float
) -> BadInputError:
    """A SQLAlchemy error as a BadInputError naming the source and the fix."""
    orig = getattr(exc, "orig", None) or exc
    state = getattr(orig, "sqlstate", None)
    detail = _first_line(orig, password[0])
    low = detail.lower()
    where = source.display
    if state == _QUERY_CANCELED:
        return BadInputError(
            f"{where}: a statement took longer than {timeout_s:g} s and the server stopped it.",
            f"narrow the query, or raise sql_timeout_s (config, or env {SNAPSHOT_ENV['sql_timeout_s']}).",
        )
    if state == _READ_ONLY:
        return BadInputError(f"{where}: the query tries to change the database ({detail}); a snapshot only reads.",
                             "give a SELECT (or WITH ... SELECT) that only reads.")  # fmt: skip
    if state == _PRIVILEGE:
        return BadInputError(f"{where}: {detail}.", "connect as a user with SELECT rights on it, or ask for them.")
    if state in _LOGIN or (state is None and any(t in low for t in _LOGIN_TEXT)):
        return BadInputError(f"{where}: the server refused the login ({detail}).", _login_fix(password[1]))
    if state == _UNKNOWN_DATABASE or ("does not exist" in low and low.startswith(("database", "connection"))):
        return BadInputError(f"{where}: {detail}.", "check the database name at the end of the URL.")
    if state is None and any(t in low for t in _UNREACHABLE_TEXT):
        return BadInputError(
            f"{where}: cannot reach the database server ({detail}).",
            "check the host and port in the URL, that the server runs, and that it accepts TCP connections from here.",
        )
    return BadInputError(
        f"{where}: the database answered: {detail}.",
        "check the table names and the query (it runs as given, in the database's SQL).",
    )


def _login_fix(password_source: str) -> str:
    if password_source == "none":
        return (f"give the password in the environment ({' or '.join(DB_PASSWORD_ENV_VARS)}) or in a password file "
                "(~/.pgpass, or the file PGPASSFILE names, mode 600), and check the user name in the URL.")  # fmt: skip
    return f"the password came from {password_source}: correct it there, and check the user name in the URL."


def _first_line(orig: Any, password: str | None) -> str:
    """The server's primary message, else the error's first line, without the password."""
    diag = getattr(orig, "diag", None)
    text = str(getattr(diag, "message_primary", None) or orig).strip()
    line = next((part.strip() for part in text.splitlines() if part.strip()), type(orig).__name__)
    if password:
        line = line.replace(password, "***")
    return line.removeprefix("(psycopg.OperationalError) ")[:300]
