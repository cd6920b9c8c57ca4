"""Record every model request and response of a job, and replay a recorded job from that file.

``transcripts/model_io.jsonl`` holds one line per model call, provider-neutral (the Strands request and the Strands
stream events, whatever the provider):

``{"call": n, "role": ..., "model_id": ..., "request": {"system", "messages", "tool_specs"}, "events": [...]}``

It holds data from the table (the scripts' outputs, the report's text), so it is a job file like any other: the
service serves it only to the job's owner. Credentials never reach a Strands request; values under a key that names
one (``authorization``, ``api_key``, ``secret``, ``password``, ``session_token``, signed headers) and anything shaped
like an AWS access key id are redacted anyway. Token counts stay: replay needs them.

Replay compares each incoming request with the recorded call of the same role and number after
:func:`normalise` and answers with the recorded events; the first request that differs fails naming the role, the
call and a diff. What is normalised: job ids (``20261203T130429Z-121f5ceee0f1``), the job folder's path
(``<job>``), other temporary paths (``<tmp>``), ISO timestamps (``<ts>``) and durations printed in seconds or
milliseconds (``<dur>``). Nothing else: a changed prompt line, tool result or number is a difference.
"""

from __future__ import annotations

import difflib
import json
import re
import threading
from collections.abc import AsyncGenerator, AsyncIterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec

from ..errors import ConfigError, InsightloomError, ModelError
from ..fileio import append_text, read_text

T = TypeVar("T", bound=BaseModel)
MODEL_IO = "model_io.jsonl"
MAX_RECORDING_BYTES = 512 * 1024 * 1024
REDACTED = "[redacted]"
_SECRET_KEY_RE = re.compile(
    r"authorization|api[_-]?key|secret|password|passwd|session[_-]?token|security[_-]?token|x-amz-(?:date|"
    r"signature|credential|content-sha256)|signature|credential|bearer",
    re.IGNORECASE,
)
_AWS_KEY_RE = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")
_NORMALISE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b\d{8}T\d{6}Z-[0-9a-f]{12}\b"), "<job-id>"),
    (re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<ts>"),
    (re.compile(r"(?:/private)?/tmp/[^\s\"'`<>)\]]+"), "<tmp>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b"), "<dur>"),
)


def redact(value: Any) -> Any:
    """``value`` with credentials replaced by :data:`REDACTED` (keys that name one, AWS key ids anywhere)."""
    if isinstance(value, dict):
        return {k: REDACTED if _SECRET_KEY_RE.search(str(k)) else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return _AWS_KEY_RE.sub(REDACTED, value)
    return value


def normalise(text: str, job_root: str | None = None) -> str:
    """``text`` with what changes from one run to the next replaced by placeholders (module docstring)."""
    if job_root:
        text = text.replace(job_root, "<job>")
    for pattern, placeholder in _NORMALISE:
        text = pattern.sub(placeholder, text)
    return text


def request_record(
    messages: Messages, tool_specs: list[ToolSpec] | None, system_prompt: str | None, kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The request of one call as recorded: system (text or content blocks), messages and tool specs."""
    system: Any = kwargs.get("system_prompt_content") or system_prompt
    return redact({"system": system, "messages": messages, "tool_specs": tool_specs or []})


class RecordingModel(Model):
    """Passes every call to ``inner`` and appends the request and its stream events to ``path``.

    Args:
        inner: The model that answers.
        role: The agent role, recorded with each call.
        path: The job's ``transcripts/model_io.jsonl``.
        job_root: The job folder's path, recorded so that a replay can normalise it away.
    """

    _lock = threading.Lock()  # several agents of one job append to the same file

    def __init__(self, inner: Model, role: str, path: Path, *, job_root: str | None = None) -> None:
        self.inner = inner
        self.role = role
        self.path = path
        self.job_root = job_root
        self.calls = 0

    def update_config(self, **model_config: Any) -> None:
        self.inner.update_config(**model_config)

    def get_config(self) -> Any:
        return self.inner.get_config()

    def __getattr__(self, name: str) -> Any:  # count_tokens, client, prompt_cache...: the inner model's own
        return getattr(self.inner, name)

    def structured_output(
        self, output_model: type[T], prompt: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        return self.inner.structured_output(output_model, prompt, system_prompt, **kwargs)

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        request = request_record(messages, tool_specs, system_prompt, kwargs)  # before the loop changes them
        events: list[Any] = []
        async for event in self.inner.stream(messages, tool_specs, system_prompt, **kwargs):
            events.append(event)
            yield event
        config = self.inner.get_config()
        model_id = config.get("model_id") if isinstance(config, dict) else None
        with self._lock:
            self.calls += 1
            line = {"call": self.calls, "role": self.role, "model_id": model_id, "job_root": self.job_root,
                    "request": request}  # fmt: skip
            line["events"] = redact(events)
            text = json.dumps(line, ensure_ascii=False, default=str) + "\n"
            append_text(self.path, text, beneath=self.path.parent.parent)  # never through a link a script planted


def read_model_io(path: Path) -> list[dict[str, Any]]:
    """The calls recorded in ``path`` (a regular file, read without following a link).

    Raises:
        ConfigError: The file is missing or a line is not a recorded call.
    """
    try:
        lines = read_text(path, beneath=path.parent, max_bytes=MAX_RECORDING_BYTES).splitlines()
    except (OSError, InsightloomError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise ConfigError(
            f"Cannot read the recording {path}: {reason}.",
            "pass the model_io.jsonl of a job run with --record (transcripts/model_io.jsonl).",
        ) from exc
    calls = []
    for number, line in enumerate(lines, 1):
        try:
            call = json.loads(line)
            if not isinstance(call, dict) or not {"role", "request", "events"} <= set(call):
                raise ValueError("not a recorded call")
        except ValueError as exc:
            raise ConfigError(
                f"Line {number} of {path} is not a recorded model call ({exc}).",
                "record the job again with --record; do not edit the file.",
            ) from exc
        calls.append(call)
    return calls


def _canonical(request: Any, job_root: str | None) -> list[str]:
    text = json.dumps(request, ensure_ascii=False, indent=1, sort_keys=True, default=str)
    return normalise(text, job_root).replace("\\n", "\n").splitlines()  # a prompt's lines diff as lines


class ReplayModel(Model):
    """Answers one role's calls from a recording, failing at the first request that differs from it.

    Args:
        role: The agent role whose recorded calls it answers, in order.
        calls: Every recorded call of the job (:func:`read_model_io`).
        job_root: This job's folder path, normalised away in the new requests (the recorded one is in each call).
    """

    def __init__(self, role: str, calls: list[dict[str, Any]], *, job_root: str | None = None) -> None:
        self.role = role
        self._calls: Iterator[dict[str, Any]] = iter([c for c in calls if c.get("role") == role])
        self.job_root = job_root
        self.config: dict[str, Any] = {"model_id": f"replay-{role}", "context_window_limit": 200_000}
        self.served = 0

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    def structured_output(
        self, output_model: type[T], prompt: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        raise ModelError("The replay provider answers recorded stream calls only.", "record the job again.")

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        self.served += 1
        recorded = next(self._calls, None)
        if recorded is None:
            raise ModelError(
                f"Replay: the {self.role} agent made call {self.served}, which the recording does not hold.",
                "the product now makes more calls than when the job was recorded: record it again, or find the change.",
            )
        self.config["model_id"] = recorded.get("model_id") or self.config["model_id"]
        want = _canonical(recorded["request"], recorded.get("job_root"))
        got = _canonical(request_record(messages, tool_specs, system_prompt, kwargs), self.job_root)
        if want != got:
            diff = [line[:200] for line in difflib.unified_diff(want, got, "recorded", "now", n=1, lineterm="")]
            raise ModelError(
                f"Replay: request {self.served} of the {self.role} agent differs from the recording:\n"
                + "\n".join(diff[:40])
                + ("\n…" if len(diff) > 40 else ""),
                "the change above altered what the model is sent; record the job again if it is intended.",
            )
        for event in recorded["events"]:
            yield event
