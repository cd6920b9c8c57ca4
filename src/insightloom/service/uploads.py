"""Uploads: size limit while the body arrives, safe file names, and which files a job accepts.

The limit is enforced on the raw request body as it streams in (before the multipart parser spools it to disk), so an
oversized upload costs neither disk nor time. Names are reduced to a plain base name: no folders, no dot files, no
characters a shell or a file system could misread; Hangul and other letters stay.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..intake.inputs import COLUMNS_FILE_NAME

#: Every data type intake reads but ``.json``, which an upload keeps for the column definitions (send JSON data as
#: ``.jsonl``).
DATA_SUFFIXES = (".csv", ".tsv", ".xlsx", ".xlsm", ".parquet", ".jsonl", ".ndjson", ".sqlite", ".db")
_DATA_TYPES = ", ".join(DATA_SUFFIXES)
COLUMNS_SUFFIX = ".json"
MAX_NAME = 120
FORM_SLACK_BYTES = 1024 * 1024  # room for the request text and the other form fields
_UNSAFE = re.compile(r"[^\w.\- ]+", re.UNICODE)


def too_large(limit_mb: float, *, upload: bool = True) -> HTTPException:
    if not upload:
        return HTTPException(413, f"Request body too large: the limit is {limit_mb:g} MB for this endpoint.")
    return HTTPException(
        status_code=413,
        detail=f"Upload too large: the limit is {limit_mb:g} MB. Send a smaller extract, or raise "
        "INSIGHTLOOM_MAX_UPLOAD_MB on the server.",
    )


class BodyLimit:
    """ASGI middleware: request bodies over their limit answer 413, by Content-Length or while streaming.

    ``POST /jobs`` may carry uploads up to the configured limit; every other request gets a small body (a review, a
    sign-in), so no request can make the server buffer more than it allows.
    """

    def __init__(self, app: ASGIApp, *, limit_bytes: int, limit_mb: float, path: str = "/jobs") -> None:
        self.app = app
        self.upload_limit = limit_bytes + FORM_SLACK_BYTES
        self.limit_mb = limit_mb
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        uploads = scope["method"] == "POST" and scope["path"].rstrip("/") == self.path
        limit, limit_mb = (self.upload_limit, self.limit_mb) if uploads else (FORM_SLACK_BYTES, 1.0)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _reject(send, too_large(limit_mb, upload=uploads).detail)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise too_large(limit_mb, upload=uploads)  # FastAPI re-raises HTTPExceptions from body parsing
            return message

        await self.app(scope, counted, send)


async def _reject(send: Send, detail: str) -> None:
    body = json.dumps({"detail": detail, "fix": None}).encode("utf-8")  # the one error shape (errors_http)
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def safe_name(raw: str | None, default_suffix: str = ".csv") -> str:
    """A file name that stays inside the folder it is written to.

    Folders (``/`` and ``\\``) are dropped, characters other than letters, digits, ``.``, ``-``, ``_`` and space become
    ``_``, leading dots go, and the name is cut to a sane length with its extension kept.
    """
    text = unicodedata.normalize("NFC", raw or "")
    base = PureWindowsPath(PurePosixPath(text).name).name
    base = _UNSAFE.sub("_", base).strip(" .")
    stem, dot, suffix = base.rpartition(".")
    if not dot:
        stem, suffix = base, ""
    suffix = f".{suffix.lower()}" if suffix else ""
    stem = stem.strip(" ._")[: MAX_NAME - len(suffix)] or "upload"
    return stem + (suffix or default_suffix)


@dataclass
class Upload:
    """One accepted file: the name it gets in the job's ``data/`` folder, and its bytes' source."""

    original: str
    name: str
    is_columns: bool


def plan_uploads(names: list[str | None]) -> list[Upload]:
    """Decide each upload's role and final name.

    Raises:
        HTTPException: 400 for an unsupported type, more than one JSON file, or no data file at all.
    """
    uploads: list[Upload] = []
    taken: set[str] = {COLUMNS_FILE_NAME}
    for raw in names:
        original = raw or "(unnamed)"
        suffix = PurePosixPath((raw or "").replace("\\", "/")).suffix.lower()
        if suffix == COLUMNS_SUFFIX:
            if any(u.is_columns for u in uploads):
                raise HTTPException(400, f"{original}: only one column definitions JSON file may be sent.")
            uploads.append(Upload(original, COLUMNS_FILE_NAME, True))
            continue
        if suffix not in DATA_SUFFIXES:
            hint = " Save the sheet as .xlsx first." if suffix == ".xls" else ""
            raise HTTPException(
                400,
                f"{original}: unsupported file type '{suffix or '(none)'}'. Send data files ({_DATA_TYPES}) and at "
                f"most one column definitions .json.{hint}",
            )
        name = safe_name(raw, suffix)
        stem, suffix = name[: -len(suffix)], suffix
        n = 2
        while name.lower() in taken:
            name = f"{stem}_{n}{suffix}"
            n += 1
        taken.add(name.lower())
        uploads.append(Upload(original, name, False))
    if not any(not u.is_columns for u in uploads):
        raise HTTPException(400, f"No data file: send at least one data file ({_DATA_TYPES}) in the 'files' field.")
    return uploads
