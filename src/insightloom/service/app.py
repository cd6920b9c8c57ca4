"""The FastAPI app: the job API, its event stream, downloads, the sign-in session and the web page.

Routes (all but ``/healthz``, ``/readyz``, the page and ``/session`` sign-in need a bearer token or session cookie
when a token is configured): ``POST /jobs``, ``GET /jobs``, ``GET /jobs/{id}``, ``POST /jobs/{id}/review``,
``POST /jobs/{id}/cancel``, ``GET /jobs/{id}/events`` (SSE), ``GET /jobs/{id}/artifacts/{path}``,
``GET /jobs/{id}/report.html`` (the finished report as safe HTML for the page), and the follow-up
questions of ``service/ask_routes.py``: ``POST /jobs/{id}/ask``, ``POST /ask`` and ``/ask/sessions``. ``/healthz`` and
``/readyz`` need no token.

Every error answers ``{"detail": ..., "fix": ...}`` (:mod:`.errors_http`); a 503 (the queue is full or its broker is
down) also says ``Retry-After``.
"""

from __future__ import annotations

import functools
import logging
import mimetypes
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, BinaryIO
from urllib.parse import quote

from fastapi import FastAPI, File, Form, Header, HTTPException, Request, Response, UploadFile
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from ..ask.sessions import FINISHED
from ..config import PROVIDERS, Settings
from ..errors import BrokerUnavailable, InsightloomError, JobConflict
from .ask_routes import add_ask_routes
from .auth import COOKIE, Authenticator, User
from .errors_http import HTTP_STATUS, error_response, http_status, internal_body
from .manager import JobManager
from .queue import JobQueue, broker_reachable
from .report_html import ReportSource, report_html
from .service_settings import ServiceConfig
from .sse import event_stream
from .uploads import BodyLimit, plan_uploads
from .webfont import MEDIA_TYPE as FONT_MEDIA_TYPE
from .webfont import warm_in_background, web_font

logger = logging.getLogger(__name__)

__all__ = ["HTTP_STATUS", "BrokerProbe", "create_app", "http_status"]  # the status table lives in .errors_http

STATIC = Path(__file__).parent / "static"
#: Beside the jobs, out of every script's reach (like the owners folder): revoked session nonces.
SESSIONS_DIR = ".sessions"
_DOWNLOAD_CHUNK = 1024 * 1024
PAGE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
#: The report fragment runs nothing and loads only this server's images, even when opened on its own.
REPORT_CSP = "default-src 'none'; img-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'"


class ReviewBody(BaseModel):
    """``{"approve": true}`` or ``{"approve": false, "feedback": "..."}``."""

    model_config = ConfigDict(extra="forbid")
    approve: bool
    feedback: str | None = Field(default=None, max_length=20_000)

    @model_validator(mode="after")
    def _feedback_when_not_approving(self) -> ReviewBody:
        if not self.approve and not (self.feedback or "").strip():
            raise ValueError("feedback is required when approve is false: say what the plan should change")
        return self


class SignIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: str = Field(min_length=1, max_length=4096)


class SecurityHeaders:
    """ASGI middleware: no sniffing, no framing, no referrer, and a strict CSP on everything the app serves."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                for name, value in (
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                    (b"content-security-policy", PAGE_CSP.encode()),
                ):
                    if name not in present:
                        headers.append((name, value))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


#: How long one answer about the broker stands: health and readiness probes must not hammer it.
BROKER_CHECK_TTL_S = 2.0
BROKER_DOWN = BrokerUnavailable(
    "The job queue's broker cannot be reached.",
    "check that the broker (Redis) runs and that CELERY_BROKER_URL names it; jobs can be submitted once it answers.",
)


class BrokerProbe:
    """Whether the queue's broker answers, asked at most once per ``ttl_s`` whatever the number of probes.

    Args:
        queue: Returns the queue now in use (None before the service started).
        ttl_s: How long an answer is reused.
        clock: Seconds on a monotonic clock.
    """

    def __init__(
        self,
        queue: Callable[[], object],
        *,
        ttl_s: float = BROKER_CHECK_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.queue = queue
        self.ttl_s = ttl_s
        self.clock = clock
        self._lock = threading.Lock()
        self._checked: tuple[float, bool | None] | None = None

    def state(self) -> str:
        """``ok``, ``unreachable``, or ``none`` for a queue without a broker (the in-process pool)."""
        with self._lock:  # one check at a time: concurrent probes wait for it and share its answer
            now = self.clock()
            if self._checked is None or now - self._checked[0] >= self.ttl_s:
                self._checked = (now, self._ask())
            reachable = self._checked[1]
        return "none" if reachable is None else "ok" if reachable else "unreachable"

    def _ask(self) -> bool | None:
        try:
            return broker_reachable(self.queue())
        except Exception:  # a check that fails is an unreachable broker, not a failed probe
            logger.warning("the broker check failed", exc_info=True)
            return False


def create_app(
    settings: Settings, config: ServiceConfig | None = None, *, queue: JobQueue | None = None, cwd: Path | None = None
) -> FastAPI:
    """Build the service.

    Args:
        settings: Server settings (artifacts root, default provider...); ``auto`` is resolved per job.
        config: Server-only settings; read from env vars when not given.
        queue: Where work goes; an in-process pool of ``config.workers`` threads when not given.
        cwd: Where the jobs look for ``./skills``.
    """
    config = config or ServiceConfig.from_env()
    manager = JobManager(settings, config, cwd=cwd)
    auth = Authenticator(config, revoked_path=manager.root / SESSIONS_DIR / "revoked.json")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        manager.open(queue)
        warm_in_background()  # the Hangul web font is ready before a page asks for it (service/webfont.py)
        logger.info(
            "insightloom service: artifacts %s, %s, %d workers",
            manager.root,
            "open (no token)" if config.open else f"{len(set(config.tokens.values()))} user(s)",
            config.workers,
        )
        yield
        manager.close()

    app = FastAPI(title="insightloom", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.manager = manager
    app.state.auth = auth
    app.state.broker = broker = BrokerProbe(lambda: manager.queue)
    app.add_middleware(BodyLimit, limit_bytes=config.max_upload_bytes, limit_mb=config.max_upload_mb)
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(InsightloomError)
    async def _domain_error(request: Request, exc: InsightloomError) -> JSONResponse:
        status = http_status(exc)
        if status == 500:
            logger.error("error on %s %s: %s", request.method, request.url.path, exc)
        elif status == 503:
            logger.warning("busy on %s %s: %s", request.method, request.url.path, exc.message)
        return error_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """Errors the routes raise themselves (401, 413...) get the same body, with no fix to offer."""
        return JSONResponse({"detail": exc.detail, "fix": None}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unexpected error on %s %s", request.method, request.url.path)
        return JSONResponse(internal_body(), status_code=500)

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        """Always 200 while the process serves (the image's HEALTHCHECK): a broker outage is not a reason to restart."""
        return {"status": "ok", "version": __version__, "broker": broker.state()}

    @app.get("/readyz", response_model=None)
    def readyz() -> dict[str, Any] | JSONResponse:
        """200 when new jobs can be queued, else 503 with the error body: load balancers stop sending work here."""
        state = broker.state()
        if state == "unreachable":
            return error_response(BROKER_DOWN)
        return {"status": "ready", "version": __version__, "broker": state}

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")

    @app.get("/fonts/cjk", include_in_schema=False)
    def cjk_font() -> Response:
        """A Hangul font for browsers that have none (the one charts use), fetched only for Korean text."""
        data = web_font()
        if data is None:
            raise HTTPException(404, "No CJK web font on this server.")
        return Response(data, media_type=FONT_MEDIA_TYPE, headers={"Cache-Control": "public, max-age=86400"})

    @app.get("/session")
    def session(user: User, request: Request) -> dict[str, Any]:
        """Who is signed in, what the submit form may offer, and the CSRF token for cookie sessions."""
        cookie = request.cookies.get(COOKIE)
        return {
            "user": user,
            "csrf_token": auth.csrf_token(cookie) if cookie and not config.open else None,
            "open": config.open,
            "providers": list(PROVIDERS),
            "default_provider": settings.provider,
            "max_revisions": settings.max_revisions,
            "max_upload_mb": config.max_upload_mb,
        }

    @app.post("/session")
    def sign_in(body: SignIn, request: Request, response: Response) -> dict[str, Any]:
        """Trade a token for an HttpOnly, SameSite=Strict session cookie (the page can't send headers on SSE)."""
        auth.check_origin(request)
        if config.open:
            return {"user": auth.user(request)}
        user = auth.user_for_token(body.token.strip())
        if user is None:
            raise HTTPException(401, "Unknown token.", headers={"WWW-Authenticate": "Bearer"})
        cookie = auth.make_session(user)
        response.set_cookie(
            COOKIE,
            cookie,
            max_age=int(config.session_hours * 3600),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return {"user": user, "csrf_token": auth.csrf_token(cookie)}

    @app.delete("/session", status_code=204)
    def sign_out(request: Request, response: Response) -> None:
        """Sign out: the cookie is revoked on the server, so a copy the browser kept stops working too."""
        auth.check_origin(request)
        if cookie := request.cookies.get(COOKIE):
            auth.revoke(cookie)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")

    @app.post("/jobs", status_code=201)
    def submit(
        user: User,
        response: Response,
        files: Annotated[list[UploadFile], File(description="CSV/XLSX data files and at most one columns JSON")],
        request_text: Annotated[str, Form(alias="request")],
        provider: Annotated[str | None, Form()] = None,
        auto_approve: Annotated[bool, Form()] = False,
        max_revisions: Annotated[int | None, Form()] = None,
    ) -> dict[str, str]:
        uploads = plan_uploads([f.filename for f in files])
        for upload, file in zip(uploads, files, strict=True):
            if file.size is not None and file.size > config.max_upload_bytes:
                raise HTTPException(413, f"{upload.original} is over the {config.max_upload_mb:g} MB upload limit.")
        job_id = manager.submit(
            user,
            [(upload, file.file) for upload, file in zip(uploads, files, strict=True)],
            request_text,
            provider=provider or None,
            auto_approve=auto_approve,
            max_revisions=max_revisions,
        )
        response.headers["Location"] = f"/jobs/{job_id}"
        return {"id": job_id}

    @app.get("/jobs")
    def list_jobs(user: User) -> dict[str, Any]:
        return {"jobs": manager.list_jobs(user)}

    @app.get("/jobs/{job_id}")
    def get_job(job_id: str, user: User) -> dict[str, Any]:
        return manager.describe(job_id, user)

    @app.post("/jobs/{job_id}/review", status_code=202)
    def post_review(job_id: str, body: ReviewBody, user: User) -> dict[str, Any]:
        manager.review(job_id, user, approve=body.approve, feedback=(body.feedback or "").strip())
        return {"id": job_id, "accepted": "approve" if body.approve else "feedback"}

    @app.post("/jobs/{job_id}/cancel", status_code=202)
    def post_cancel(job_id: str, user: User) -> dict[str, str]:
        return {"id": job_id, "cancel": manager.cancel(job_id, user)}

    @app.get("/jobs/{job_id}/events")
    async def events(
        job_id: str, user: User, last_event_id: Annotated[str | None, Header()] = None
    ) -> StreamingResponse:
        read = manager.events_reader(job_id, user)
        try:
            after = int(last_event_id) if last_event_id else 0
        except ValueError:
            raise HTTPException(400, "Last-Event-ID must be an event id (an integer).") from None

        async def frames() -> AsyncIterator[bytes]:
            with manager.hub.waiter(job_id) as wake:
                async for chunk in event_stream(
                    read,
                    wake,
                    after_id=after,
                    keepalive_s=config.keepalive_s,
                    poll_s=config.poll_s,
                    stopping=manager.stopping.is_set,
                ):
                    yield chunk

        return StreamingResponse(
            frames(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @app.get("/jobs/{job_id}/artifacts/{path:path}", response_model=None)
    def artifact(job_id: str, path: str, user: User) -> Response:
        """A download: a local store's file streamed from the handle opened without following a link (never
        opened again by name), a remote store's bytes, both with the same headers."""
        found = manager.artifact(job_id, user, path)
        name = path.rsplit("/", 1)[-1]
        media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        headers = {
            "Content-Security-Policy": "sandbox",
            "Cache-Control": "private, no-store",
            "Content-Disposition": attachment(name),
        }
        if isinstance(found, bytes):
            return Response(found, media_type=media_type, headers=headers)
        handle, size = found
        return StreamingResponse(
            _chunks(handle), media_type=media_type, headers={**headers, "Content-Length": str(size)}
        )

    @app.get("/jobs/{job_id}/report.html", response_model=None)
    def report_page(job_id: str, user: User) -> Response:
        """The finished report as one ``<article>`` of escaped HTML: charts inline, each marker linked to its check.

        Only the owner sees it (like every artifact); a job without a rendered report is answered 409 with the fix.
        """
        status = manager.owned(job_id, user)
        files = manager.store.list_files(job_id)
        source = ReportSource(
            read=lambda name: manager.store.read_bytes(job_id, name),
            files=set(files),
            artifact_url=lambda path: f"/jobs/{quote(job_id)}/artifacts/{quote(path)}",
        )
        body = report_html(source) if status["status"] in FINISHED else None
        if body is None:
            raise JobConflict(
                f"Job {job_id} has no finished report to show (it is {status['status']}).",
                "wait until the job is completed or needs_review; a failed or cancelled job has no report.",
            )
        headers = {"Cache-Control": "private, no-store", "Content-Security-Policy": REPORT_CSP}
        return Response(body, media_type="text/html; charset=utf-8", headers=headers)

    add_ask_routes(app, manager)  # POST /jobs/{id}/ask, POST /ask, /ask/sessions (service.ask_routes)
    return app


def _chunks(handle: BinaryIO) -> Iterator[bytes]:
    """The file's bytes in chunks, the handle closed at the end (or when the client goes away)."""
    with handle:
        yield from iter(functools.partial(handle.read, _DOWNLOAD_CHUNK), b"")


def attachment(filename: str) -> str:
    """A ``Content-Disposition`` for a download, as Starlette's FileResponse writes it (RFC 5987 for non-ASCII)."""
    quoted = quote(filename)
    return f"attachment; filename*=utf-8''{quoted}" if quoted != filename else f'attachment; filename="{filename}"'
