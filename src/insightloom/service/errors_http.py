"""Domain errors as HTTP answers: the status table and the one error body the API and the AgentCore entrypoint share.

Every error answer has the same shape, ``{"detail": <message>, "fix": <what to do, or null>}``, so a client (the web
page, the CLI client, an AgentCore caller) reads one format. Errors without a status here are 500s: their text may
name server paths or internals, so the body stays generic and the details go to the server log.
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from ..errors import (
    BadInputError,
    BrokerUnavailable,
    ConfigError,
    InsightloomError,
    JobConflict,
    JobNotFound,
    ServiceBusy,
)

#: Domain errors → HTTP status, most specific first; this table is the only place the two meet.
HTTP_STATUS: tuple[tuple[type[InsightloomError], int], ...] = (
    (JobNotFound, 404),
    (JobConflict, 409),
    (ServiceBusy, 503),
    (BadInputError, 400),
    (ConfigError, 400),
)
#: Seconds a client waits before retrying a 503 whose error names no better time.
RETRY_AFTER_S = 30
INTERNAL_DETAIL = "Internal error."
INTERNAL_FIX = "Try again; if it keeps failing, see the server log for the details."


def http_status(exc: InsightloomError) -> int:
    """The HTTP status a domain error answers with (500 for anything not in ``HTTP_STATUS``)."""
    return next((status for kind, status in HTTP_STATUS if isinstance(exc, kind)), 500)


def error_body(exc: InsightloomError) -> dict[str, Any]:
    """The answer body for a domain error: its message and fix (``None`` when it has none), generic for a 500."""
    if http_status(exc) == 500:
        return internal_body()
    return {"detail": exc.message, "fix": exc.fix or None}


def internal_body() -> dict[str, Any]:
    """The body of a 500: nothing from the exception itself, which may name server internals."""
    return {"detail": INTERNAL_DETAIL, "fix": INTERNAL_FIX}


def retry_after(exc: InsightloomError) -> int | None:
    """Seconds for ``Retry-After`` when the error is a 503 (the broker's own estimate when it gave one)."""
    if isinstance(exc, BrokerUnavailable):
        return exc.retry_after_s
    return RETRY_AFTER_S if isinstance(exc, ServiceBusy) else None


def error_headers(exc: InsightloomError) -> dict[str, str]:
    """Headers an error answer carries: ``Retry-After`` on a 503."""
    seconds = retry_after(exc)
    return {} if seconds is None else {"Retry-After": str(seconds)}


def error_response(exc: InsightloomError) -> JSONResponse:
    """The whole HTTP answer for a domain error: status, the one body, and ``Retry-After`` when busy."""
    return JSONResponse(error_body(exc), status_code=http_status(exc), headers=error_headers(exc))
