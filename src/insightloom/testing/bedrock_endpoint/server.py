"""The strict endpoint: a loopback HTTP server speaking Bedrock Runtime's Converse, ConverseStream and CountTokens.

The real ``boto3`` client reaches it through ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME`` with dummy credentials
(:meth:`BedrockEndpoint.env`). Each request is checked against ``rules.RULES`` and refused as Bedrock refuses it
(HTTP 400 ``ValidationException``, the rule's name first in the message); a valid one is billed by the cache
ledger, answered by the brain, and logged. Faults are injected on demand: :meth:`BedrockEndpoint.throttle` answers
the next N calls with 429 ``ThrottlingException``, :meth:`BedrockEndpoint.stall` holds the next N calls past the
client's read timeout, :meth:`BedrockEndpoint.refuse` answers every call with an error such as
``AccessDeniedException``.

It binds to 127.0.0.1 only, reads only what the request carries, and never follows a path from it.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from ...context.tokens import count_tokens
from .brains import Brain, BrainReply, ConverseCall, NoBrainError
from .caching import CacheLedger, CacheUsage, request_blocks
from .family_rules import family_rule
from .model_access import access_violation
from .rules import Violation, check_request
from .wire import ERROR_TYPE_SUFFIX, converse_body, encode_event, error_body, stream_events

__all__ = ["BedrockEndpoint", "Exchange", "Fault"]

#: The largest request body read (Bedrock's own limit is far above any job's request).
MAX_BODY_BYTES = 64 * 1024 * 1024
_OPERATIONS = {"converse": "converse", "converse-stream": "converse-stream", "count-tokens": "count-tokens"}
#: Status and default message of each error the endpoint can answer with (Bedrock Runtime's error shapes).
ERRORS: dict[str, tuple[int, str]] = {
    "ValidationException": (400, "The request is invalid."),
    "ThrottlingException": (429, "Too many requests, please wait before trying again."),
    "AccessDeniedException": (403, "You don't have access to the model with the specified model ID."),
    "ResourceNotFoundException": (404, "Model not found or not available in this region."),
    "ServiceUnavailableException": (503, "The service is temporarily unavailable."),
    "ModelErrorException": (424, "The model produced an error."),
}


@dataclass
class Exchange:
    """One request the endpoint received and what it answered.

    Attributes:
        operation: ``converse``, ``converse-stream`` or ``count-tokens``.
        model_id: The model id or inference profile from the URL.
        request: The decoded body.
        status: The HTTP status answered.
        error: The error code answered (``ValidationException``...), empty on success.
        violations: The rules the request broke.
        usage: The billed usage of a successful model call.
        role: The brain's role for the call, when the brain says (``RoleRouter``).
    """

    operation: str
    model_id: str
    request: dict[str, Any]
    status: int = 0
    error: str = ""
    violations: list[Violation] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    role: str = ""


@dataclass
class Fault:
    """An injected fault: the next ``calls`` model calls get it (a negative count: every call)."""

    code: str
    calls: int
    message: str = ""
    stall_s: float = 0.0


class BedrockEndpoint:
    """A strict, local stand-in for the Bedrock Runtime API.

    Use it as a context manager; ``env()`` gives the variables that point boto3 at it::

        with BedrockEndpoint(brain) as endpoint:
            os.environ.update(endpoint.env())
            ...  # run anything that calls Bedrock through boto3
        assert not endpoint.violations, endpoint.violations

    Args:
        brain: Decides each reply from the call (``brains.RoleRouter``, ``ScriptedBrain``, ``ModelBrain``...).
        region: The region the endpoint says it serves; ``env()`` sets it, and an inference profile of another
            geography is refused (``model.region``).
        ledger: The prompt cache's accounting (a fresh one by default).
        latency_ms: The latency reported in each reply's metrics.
    """

    def __init__(
        self,
        brain: Brain,
        *,
        region: str = "us-west-2",
        ledger: CacheLedger | None = None,
        latency_ms: int = 5,
    ) -> None:
        self.brain = brain
        self.region = region
        self.ledger = ledger or CacheLedger()
        self.latency_ms = latency_ms
        self.exchanges: list[Exchange] = []
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> BedrockEndpoint:
        """Listen on a free loopback port and serve in a daemon thread."""
        endpoint = self

        class Handler(_Handler):
            owner = endpoint

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="bedrock-endpoint", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> BedrockEndpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        if self._server is None:
            raise RuntimeError("the endpoint is not started: call start() or use it in a with block")
        return f"http://127.0.0.1:{self._server.server_port}"

    def env(self) -> dict[str, str]:
        """Environment variables that send boto3's bedrock-runtime client here, with dummy credentials and no
        metadata-service probe (set them on the process or the subprocess that runs the product)."""
        return {
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": self.url,
            "AWS_ACCESS_KEY_ID": "AKIDSTRICTENDPOINT",
            "AWS_SECRET_ACCESS_KEY": "strict-endpoint-dummy-secret",
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    @contextmanager
    def environment(self, environ: dict[str, str]) -> Iterator[None]:
        """``env()`` applied to ``environ`` (``os.environ``, say) for the block, the old values restored after."""
        saved = {key: environ.get(key) for key in self.env()}
        environ.update(self.env())
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    environ.pop(key, None)
                else:
                    environ[key] = value

    # -- faults ------------------------------------------------------------------------------------------------

    def throttle(self, calls: int) -> None:
        """Answer the next ``calls`` model calls with 429 ``ThrottlingException``."""
        self._add_fault(Fault("ThrottlingException", calls))

    def stall(self, calls: int, seconds: float) -> None:
        """Hold the next ``calls`` model calls ``seconds`` before answering (past the client's read timeout, the
        client gives up and retries; a stalled call is answered nothing)."""
        self._add_fault(Fault("", calls, stall_s=seconds))

    def refuse(self, code: str, message: str = "", calls: int = -1) -> None:
        """Answer model calls with the error ``code`` (every call by default), e.g. ``AccessDeniedException``."""
        if code not in ERRORS:
            raise ValueError(f"unknown error code {code!r}: one of {', '.join(sorted(ERRORS))}")
        self._add_fault(Fault(code, calls, message))

    def clear_faults(self) -> None:
        """Drop every pending fault."""
        with self._lock:
            self._faults.clear()

    def _add_fault(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def _take_fault(self) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.calls != 0:
                    fault.calls -= 1 if fault.calls > 0 else 0
                    return fault
            return None

    # -- what happened -----------------------------------------------------------------------------------------

    @property
    def violations(self) -> list[Violation]:
        """Every rule broken so far, in arrival order."""
        with self._lock:
            return [v for exchange in self.exchanges for v in exchange.violations]

    def stats(self) -> dict[str, int]:
        """Counts over every exchange so far: model ``requests``, ``rejected`` (a rule broken), ``throttled``,
        ``stalled``, ``completed`` calls, and the billed ``input``, ``cache_read``, ``cache_write`` and ``output``
        tokens."""
        with self._lock:
            calls = [e for e in self.exchanges if e.operation != "count-tokens"]
            totals = {"requests": len(calls), "rejected": sum(bool(e.violations) for e in calls)}
            totals["throttled"] = sum(e.error == "ThrottlingException" for e in calls)
            totals["stalled"] = sum(e.error == "stalled" for e in calls)
            totals["completed"] = sum(e.status == 200 for e in calls)
            for key, name in (
                ("input", "inputTokens"),
                ("cache_read", "cacheReadInputTokens"),
                ("cache_write", "cacheWriteInputTokens"),
                ("output", "outputTokens"),
            ):
                totals[key] = sum(e.usage.get(name, 0) for e in calls)
            return totals

    def _log(self, exchange: Exchange) -> Exchange:
        with self._lock:
            self.exchanges.append(exchange)
        return exchange

    # -- one request -------------------------------------------------------------------------------------------

    def handle(self, operation: str, model_id: str, request: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        """Answer one decoded request: status, headers and body (the HTTP handler only moves bytes)."""
        exchange = self._log(Exchange(operation, model_id, request))
        if operation == "count-tokens":
            return self._count_tokens(exchange)
        fault = self._take_fault()
        if fault is not None and fault.stall_s:
            exchange.error = "stalled"
            time.sleep(fault.stall_s)  # the client has given up by now: this is the timeout being injected
            return self._error(exchange, "ServiceUnavailableException", "stalled past the client's read timeout")
        if fault is not None:
            return self._error(exchange, fault.code, fault.message)
        exchange.violations = access_violation(model_id, self.region) + check_request(model_id, request)
        if exchange.violations:
            return self._error(exchange, "ValidationException", "; ".join(str(v) for v in exchange.violations))
        usage = self.ledger.account(model_id, request, cache=family_rule(model_id).prompt_cache)
        call = ConverseCall.from_request(model_id, request, operation)
        try:
            reply = self.brain(call)
        except NoBrainError as exc:
            return self._error(exchange, "ModelErrorException", f"[brain] {exc}")
        exchange.role = reply.role
        reply = _fit_output(reply, int((request.get("inferenceConfig") or {}).get("maxTokens") or 0))
        exchange.usage, exchange.status = _usage(usage, reply), 200
        if operation == "converse":
            body = converse_body(reply.content, reply.stop_reason, exchange.usage, self.latency_ms)
            return 200, {"Content-Type": "application/json"}, json.dumps(body, ensure_ascii=False).encode()
        events = stream_events(reply.content, reply.stop_reason, exchange.usage, self.latency_ms)
        payload = b"".join(encode_event(name, event) for name, event in events)
        return 200, {"Content-Type": "application/vnd.amazon.eventstream"}, payload

    def _count_tokens(self, exchange: Exchange) -> tuple[int, dict[str, str], bytes]:
        converse = (exchange.request.get("input") or {}).get("converse") or {}
        exchange.violations = check_request(exchange.model_id, converse)
        if exchange.violations:
            return self._error(exchange, "ValidationException", "; ".join(str(v) for v in exchange.violations))
        tokens = sum(block.tokens for block in request_blocks(converse)[0])
        exchange.status = 200
        return 200, {"Content-Type": "application/json"}, json.dumps({"inputTokens": tokens}).encode()

    def _error(self, exchange: Exchange, code: str, message: str = "") -> tuple[int, dict[str, str], bytes]:
        status, default = ERRORS[code]
        exchange.status, exchange.error = status, (exchange.error or code)
        return (
            status,
            {"Content-Type": "application/json", "x-amzn-ErrorType": code + ERROR_TYPE_SUFFIX},
            error_body(message or default),
        )


def _usage(billed: CacheUsage, reply: BrainReply) -> dict[str, int]:
    output = reply.output_tokens if reply.output_tokens is not None else _output_tokens(reply.content)
    return {
        "inputTokens": billed.input_tokens,
        "outputTokens": output,
        "totalTokens": billed.sent + output,
        "cacheReadInputTokens": billed.cache_read_tokens,
        "cacheWriteInputTokens": billed.cache_write_tokens,
    }


def _output_tokens(content: list[dict[str, Any]]) -> int:
    total = 0
    for block in content:
        if "text" in block:
            total += count_tokens(str(block["text"]))
        elif "toolUse" in block:
            use = block["toolUse"]
            total += count_tokens(str(use.get("name", "")) + json.dumps(use.get("input") or {}, ensure_ascii=False))
        elif "reasoningContent" in block:
            total += count_tokens(str(block["reasoningContent"].get("reasoningText", {}).get("text", "")))
    return total


def _fit_output(reply: BrainReply, max_tokens: int) -> BrainReply:
    """Cut a reply at ``maxTokens`` as the model would: text up to the budget, no tool use past it,
    stop reason ``max_tokens``."""
    if max_tokens <= 0 or _output_tokens(reply.content) <= max_tokens:
        return reply
    kept: list[dict[str, Any]] = []
    budget = max_tokens
    for block in reply.content:
        size = _output_tokens([block])
        if size <= budget:
            kept.append(block)
            budget -= size
            continue
        if "text" in block and budget > 0:
            words = str(block["text"]).split(" ")
            while words and count_tokens(" ".join(words)) > budget:
                words = words[: int(len(words) * 0.9)]
            if words:
                kept.append({"text": " ".join(words)})
        break
    return BrainReply(kept or [{"text": "…"}], "max_tokens", max_tokens, reply.role)


class _Handler(BaseHTTPRequestHandler):
    owner: BedrockEndpoint
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        length = int(self.headers.get("Content-Length") or 0)
        if len(parts) != 3 or parts[0] != "model" or parts[2] not in _OPERATIONS or length > MAX_BODY_BYTES:
            self._send(404, {"Content-Type": "application/json"}, error_body(f"Unknown operation {self.path!r}."))
            return
        raw = self.rfile.read(length)
        try:
            request = json.loads(raw or b"{}")
        except ValueError as exc:
            headers = {
                "Content-Type": "application/json",
                "x-amzn-ErrorType": "ValidationException" + ERROR_TYPE_SUFFIX,
            }
            self._send(400, headers, error_body(f"[body.json] The request body is not JSON: {exc}"))
            return
        if "Authorization" not in self.headers:
            headers = {
                "Content-Type": "application/json",
                "x-amzn-ErrorType": "UnrecognizedClientException" + ERROR_TYPE_SUFFIX,
            }
            self._send(403, headers, error_body("The request is not signed (no Authorization header)."))
            return
        status, headers, body = self.owner.handle(_OPERATIONS[parts[2]], unquote(parts[1]), request)
        self._send(status, headers, body)

    def _send(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # a stalled call whose client already gave up
            pass

    def log_message(self, *args: Any) -> None:  # no stderr chatter per request
        pass
