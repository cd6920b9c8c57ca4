"""A small Python client of the service API, with an SSE reader (tests, benchmarks, scripts).

Every call has a timeout, and :meth:`ServiceClient.wait_for` has an overall deadline, so nothing waits forever: the
server's keepalive comments let the deadline be checked even while a job is silent.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

logger = logging.getLogger(__name__)


class ServiceClient:
    """Talks to one insightloom server as one user.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000``.
        token: The bearer token; None for an open server.
        timeout: Seconds for connecting and for each read (the SSE keepalive must come more often).
    """

    def __init__(self, base_url: str, token: str | None = None, *, timeout: float = 60.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _json(self, response: httpx.Response) -> Any:
        if response.is_error:
            raise httpx.HTTPStatusError(
                f"{response.status_code} on {response.request.method} {response.request.url.path}: {response.text}",
                request=response.request,
                response=response,
            )
        return response.json()

    def submit(
        self,
        files: Iterable[Path],
        request: str,
        *,
        provider: str | None = None,
        auto_approve: bool = False,
        max_revisions: int | None = None,
    ) -> str:
        """Upload data files (and an optional column definitions JSON) with a request; returns the job id."""
        data: dict[str, str] = {"request": request, "auto_approve": str(auto_approve).lower()}
        if provider:
            data["provider"] = provider
        if max_revisions is not None:
            data["max_revisions"] = str(max_revisions)
        with ExitStack() as stack:
            parts = [("files", (p.name, stack.enter_context(Path(p).open("rb")))) for p in files]
            return self._json(self.http.post("/jobs", data=data, files=parts))["id"]

    def jobs(self) -> list[dict[str, Any]]:
        return self._json(self.http.get("/jobs"))["jobs"]

    def job(self, job_id: str) -> dict[str, Any]:
        return self._json(self.http.get(f"/jobs/{job_id}"))

    def review(self, job_id: str, *, approve: bool, feedback: str | None = None) -> dict[str, Any]:
        return self._json(self.http.post(f"/jobs/{job_id}/review", json={"approve": approve, "feedback": feedback}))

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self._json(self.http.post(f"/jobs/{job_id}/cancel"))

    def download(self, job_id: str, path: str, dest: Path) -> Path:
        response = self.http.get(f"/jobs/{job_id}/artifacts/{path}")
        if response.is_error:
            self._json(response)
        dest.write_bytes(response.content)
        return dest

    def events(self, job_id: str, *, last_event_id: int | None = None, deadline: float | None = None) -> Iterator[Any]:
        """Events of the job as dicts, from the start (or after ``last_event_id``) until the server ends the stream.

        Yields ``None`` for each keepalive comment, so a caller can look at the clock.

        Raises:
            TimeoutError: ``deadline`` (a ``time.monotonic()`` value) passed.
        """
        headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
        with self.http.stream("GET", f"/jobs/{job_id}/events", headers=headers) as response:
            if response.is_error:
                response.read()
                self._json(response)
            data: list[str] = []
            for line in response.iter_lines():
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"job {job_id}: no end of stream before the deadline")
                if line.startswith(":"):
                    yield None
                elif line.startswith("data:"):
                    data.append(line[5:].strip())
                elif not line and data:
                    yield json.loads("\n".join(data))
                    data = []

    def wait_for(
        self, job_id: str, kinds: Iterable[str], *, after: int = 0, timeout: float = 600.0
    ) -> list[dict[str, Any]]:
        """Read the job's events after ``after`` until one of ``kinds`` arrives; returns every event read.

        Raises:
            TimeoutError: None of ``kinds`` came within ``timeout`` seconds, or the stream ended without it.
        """
        wanted = set(kinds)
        seen: list[dict[str, Any]] = []
        for event in self.events(job_id, last_event_id=after or None, deadline=time.monotonic() + timeout):
            if event is None:
                continue
            seen.append(event)
            if event["kind"] in wanted:
                return seen
        raise TimeoutError(f"job {job_id}: the stream ended without {sorted(wanted)}; last: {seen[-1:]}")
