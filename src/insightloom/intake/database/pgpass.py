"""Look a password up in a libpq password file (``~/.pgpass``, or the file ``PGPASSFILE`` names).

The format is libpq's: one ``hostname:port:database:username:password`` a line, ``*`` matches anything in the first
four fields, ``\\:`` and ``\\\\`` escape a colon and a backslash, and lines starting with ``#`` are comments. The first
matching line wins. As libpq does, a file that others may read is ignored, with a warning naming the fix.
"""

from __future__ import annotations

import logging
import stat
from pathlib import Path

logger = logging.getLogger(__name__)

#: The most of a password file read: a real one has a few lines.
_MAX_BYTES = 1024 * 1024


def passfile_password(path: Path, *, host: str, port: str, database: str, user: str) -> str | None:
    """The password of the first line of ``path`` that matches the connection, else None.

    A missing file is no password; a file that is not a regular file, or that group or others may read, is ignored
    with a warning (libpq ignores it too), so the password never comes from a file others could have changed.
    """
    try:
        info = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        logger.warning("password file %s is not a regular file, so it is ignored", path)
        return None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        logger.warning("password file %s may be read by others, so it is ignored (as libpq does); fix: chmod 600 %s",
                       path, path)  # fmt: skip
        return None
    try:
        with path.open("rb") as handle:
            text = handle.read(_MAX_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        logger.warning("password file %s cannot be read (%s), so it is ignored", path, exc.strerror or exc)
        return None
    wanted = (host, port, database, user)
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = split_line(line)
        if len(fields) >= 5 and all(got in ("*", want) for got, want in zip(fields[:4], wanted, strict=True)):
            return fields[4]
    return None


def split_line(line: str) -> list[str]:
    """A password-file line split on its unescaped colons, with ``\\:`` and ``\\\\`` unescaped."""
    fields: list[str] = []
    current: list[str] = []
    escaped = False
    for char in line.rstrip("\r"):
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ":" and len(fields) < 4:  # the password, last, keeps its colons
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
    fields.append("".join(current))
    return fields
