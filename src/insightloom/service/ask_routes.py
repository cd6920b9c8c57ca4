"""Follow-up questions over HTTP: ``POST /jobs/{id}/ask``, ``POST /ask`` and the conversation sessions.

- ``POST /jobs/{id}/ask`` ``{"question", "session"?, "analyze"?}`` answers from one finished job of the caller's
  (another user's job is not found, as everywhere in the API).
- ``POST /ask`` ``{"question", "session"?, "analyze"?, "jobs"?}`` answers across the caller's own finished jobs (all
  of them, or the ``jobs`` listed); nobody else's job is ever searched.
- ``GET /ask/sessions``, ``GET /ask/sessions/{name}`` (its turns, oldest first) and ``DELETE /ask/sessions/{name}``.

The answer is ``{"answer", "citations", "abstained", "reason", ...}`` (:class:`insightloom.ask.answer.AskResult`
plus the job ids searched). With ``Accept: text/event-stream`` it streams as SSE instead: ``event: text`` frames carry
the checked answer's pieces (``{"text": ...}``) as ``ask`` hands them over, then one ``event: answer`` carries the
whole result. An error after the stream began is an ``event: error`` frame with the usual ``{"detail", "fix"}`` body.
Auth and CSRF are the API's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ..ask import answer as answering
from ..ask.analyze import FollowupResult
from ..ask.memory import MemoryStore, open_memory
from ..ask.sessions import FINISHED, SESSION_PATTERN, SESSION_RE
from ..errors import BadInputError, InsightloomError, JobConflict, ServiceBusy
from .auth import User
from .errors_http import error_body, internal_body
from .manager import FOLLOWUPS_DIR, JobManager

logger = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 4000
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
#: How long a question waits for a worker's follow-up analysis, and how often it looks for the result.
FOLLOWUP_WAIT_S = 600.0
FOLLOWUP_POLL_S = 0.5


SessionName = Annotated[str, Field(pattern=SESSION_PATTERN)]


class AskBody(BaseModel):
    """``{"question": "...", "session": "q3", "analyze": false}``; ``jobs`` narrows ``POST /ask`` to those ids."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    session: SessionName | None = None
    analyze: bool = False
    jobs: list[str] | None = Field(default=None, max_length=200)


def wants_stream(request: Request) -> bool:
    """Whether the client asked for SSE (``Accept: text/event-stream``)."""
    return "text/event-stream" in request.headers.get("accept", "").lower()


def sse_frame(event: str, data: dict[str, Any]) -> bytes:
    """One SSE frame; the data is one JSON line, so newlines in an answer cannot end the frame early."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def result_body(result: answering.AskResult, job_ids: list[str]) -> dict[str, Any]:
    """The JSON answer: every field of the result, plus the jobs that were searched."""
    return {**dataclasses.asdict(result), "jobs": job_ids}


class Asker:
    """Finds the caller's askable jobs and runs :func:`insightloom.ask.answer.ask` over them.

    Args:
        manager: The service's job manager (ownership, the store).
    """

    def __init__(self, manager: JobManager) -> None:
        self.manager = manager
        self._memory: MemoryStore | None = None
        self._memory_lock = threading.Lock()

    @property
    def memory(self) -> MemoryStore:
        """The conversation store, opened on first use (beside the jobs, or the deployment's Redis)."""
        with self._memory_lock:
            if self._memory is None:
                self._memory = open_memory(self.manager.root, self.manager.settings.ask_memory)
            return self._memory

    def job_dir(self, job_id: str, user: str) -> Path:
        """The local folder of one of the caller's finished jobs (pulled first when the store is remote).

        Raises:
            JobNotFound: No such job, or not the caller's.
            JobConflict: The job has not finished with a report.
        """
        state = self.manager.owned(job_id, user)["status"]
        if state not in FINISHED:
            raise JobConflict(
                f"Job {job_id} is {state}: only a job that finished with a report can be asked about.",
                "ask about a completed job, or wait until this one completes.",
            )
        return self.manager.store.pull(job_id)

    def own_finished(self, user: str) -> list[str]:
        """Ids of the caller's finished jobs, newest first."""
        return [job["id"] for job in self.manager.list_jobs(user) if job["status"] in FINISHED]

    def targets(self, user: str, job_id: str | None, body: AskBody) -> tuple[list[str], list[Path]]:
        """The job ids and folders a question searches: the one job, the ``jobs`` named, or all the caller's own.

        Raises:
            BadInputError: ``POST /ask`` and the caller has no finished job.
        """
        if job_id is not None:
            ids = [job_id]
        elif body.jobs:
            ids = list(dict.fromkeys(body.jobs))
        else:
            ids = self.own_finished(user)
            if not ids:
                raise BadInputError("You have no finished jobs to ask about.", "submit a job and wait until it ends.")
        return ids, [self.job_dir(i, user) for i in ids]

    def ask(
        self, user: str, ids: list[str], dirs: list[Path], body: AskBody, on_text: Callable[[str], None] | None = None
    ) -> dict[str, Any]:
        """Answer the question and save what it wrote into the jobs (ask events, knowledge) back to the store."""
        settings = self.manager.job_settings(None, None)
        on_worker = body.analyze and not getattr(self.manager.queue, "in_process", True)
        result = answering.ask(
            dirs,
            body.question.strip(),
            settings=settings,
            user=user,
            session=body.session,
            memory=self.memory if body.session else None,
            analyze=body.analyze,
            on_text=on_text,
            analyzer=self.on_worker if on_worker else None,
        )
        if self.manager.store.remote:
            for job_id in ids:
                self.manager.store.push(job_id)
        return result_body(result, ids)

    def on_worker(self, job_dir: Path, question: str) -> FollowupResult:
        """Run the follow-up analysis on a queue worker, like any stage, and wait for the record it leaves.

        Raises:
            ServiceBusy: No worker finished it within ``FOLLOWUP_WAIT_S`` (the broker is down or every worker busy).
            BadInputError: The follow-up itself was refused (its message and fix).
        """
        job_id = job_dir.name
        record = f"{FOLLOWUPS_DIR}/{self.manager.queue_followup(job_id, question)}.json"
        deadline = time.monotonic() + FOLLOWUP_WAIT_S
        while (raw := self.manager.store.read_bytes(job_id, record)) is None:
            if time.monotonic() > deadline:
                raise ServiceBusy(
                    f"The follow-up analysis of job {job_id} did not finish within {FOLLOWUP_WAIT_S:.0f} s.",
                    "ask again without analyze, or later when the workers are less busy.",
                )
            time.sleep(FOLLOWUP_POLL_S)  # a worker elsewhere writes the record; the store is all we share
        data = json.loads(raw)
        if "error" in data:
            raise BadInputError(str(data["error"]), str(data.get("fix") or ""))
        self.manager.store.pull(job_id)  # the merged calculations and the re-indexed knowledge
        names = {f.name for f in dataclasses.fields(FollowupResult)}
        return FollowupResult(**{key: value for key, value in data.items() if key in names})


def add_ask_routes(app: FastAPI, manager: JobManager) -> None:
    """Add the ask routes to the service (``create_app`` calls it once)."""
    asker = Asker(manager)

    def answer(request: Request, user: str, job_id: str | None, body: AskBody) -> dict[str, Any] | StreamingResponse:
        ids, dirs = asker.targets(user, job_id, body)  # errors before the stream starts are plain HTTP answers
        if not wants_stream(request):
            return asker.ask(user, ids, dirs, body)
        return StreamingResponse(stream(user, ids, dirs, body), media_type="text/event-stream", headers=SSE_HEADERS)

    async def stream(user: str, ids: list[str], dirs: list[Path], body: AskBody) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[str] = asyncio.Queue()

        def on_text(text: str) -> None:  # called on the answering thread
            loop.call_soon_threadsafe(chunks.put_nowait, text)

        work = asyncio.ensure_future(asyncio.to_thread(asker.ask, user, ids, dirs, body, on_text))
        while True:
            getter = asyncio.ensure_future(chunks.get())
            await asyncio.wait({getter, work}, return_when=asyncio.FIRST_COMPLETED)
            if not getter.done():
                getter.cancel()
                break
            yield sse_frame("text", {"text": getter.result()})
        while not chunks.empty():  # chunks sent just before the answer was done
            yield sse_frame("text", {"text": chunks.get_nowait()})
        try:
            yield sse_frame("answer", work.result())
        except InsightloomError as exc:
            yield sse_frame("error", error_body(exc))
        except Exception:
            logger.exception("an ask failed while streaming")
            yield sse_frame("error", internal_body())

    @app.post("/jobs/{job_id}/ask", response_model=None)
    def ask_job(job_id: str, body: AskBody, user: User, request: Request) -> dict[str, Any] | StreamingResponse:
        """Ask one finished job of the caller's a question."""
        return answer(request, user, job_id, body)

    @app.post("/ask", response_model=None)
    def ask_all(body: AskBody, user: User, request: Request) -> dict[str, Any] | StreamingResponse:
        """Ask across the caller's own finished jobs (or the ones listed in ``jobs``)."""
        return answer(request, user, None, body)

    @app.get("/ask/sessions")
    def list_sessions(user: User) -> dict[str, Any]:
        return {"sessions": asker.memory.sessions(user)}

    @app.get("/ask/sessions/{name}")
    def session_turns(name: str, user: User) -> dict[str, Any]:
        """A session's turns, oldest first (what the page shows as its history)."""
        turns = asker.memory.turns(user, _session(name), limit=200)
        return {"session": name, "turns": [{"role": t.role, "text": t.text, "created_at": t.created_at} for t in turns]}

    @app.delete("/ask/sessions/{name}", status_code=204)
    def forget_session(name: str, user: User) -> Response:
        """Delete one of the caller's sessions for good (idempotent: an unknown name is already gone)."""
        forgotten = asker.memory.forget(user, _session(name))
        logger.info("user %s forgot ask session %s (%d turns)", user, name, forgotten)
        return Response(status_code=204)


def _session(name: str) -> str:
    """A session name from a URL path, checked like the body's."""
    if not SESSION_RE.match(name):
        raise BadInputError(
            f"{name[:80]!r} is not a session name.", "use letters, digits, '.', '_' or '-' (64 at most)."
        )
    return name
