"""The Bedrock Runtime wire format: JSON bodies, error shapes, and the AWS event-stream framing of ConverseStream.

An event-stream message is a 12-byte prelude (total length, headers length, CRC32 of those 8 bytes), the headers,
the payload and a CRC32 of everything before it; all integers big-endian. A header is a 1-byte name length, the
name, a 1-byte value type (7: string), a 2-byte value length and the value. botocore's ``botocore.eventstream``
decodes it, which is how the tests check this encoder. Reference: "Event stream encoding" in the AWS SDK docs.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = [
    "converse_body",
    "encode_event",
    "encode_message",
    "error_body",
    "stream_events",
]

_STRING = 7
#: The error-type header Bedrock sends; botocore keeps the part before the colon as the error code.
ERROR_TYPE_SUFFIX = ":http://internal.amazon.com/coral/com.amazon.bedrock/"


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!BH", _STRING, len(raw_value)) + raw_value


def encode_message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message with string headers."""
    encoded = b"".join(_header(name, value) for name, value in headers.items())
    prelude = struct.pack("!II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack("!I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack("!I", zlib.crc32(message))


def encode_event(event_type: str, payload: Mapping[str, Any]) -> bytes:
    """One ConverseStream event (``messageStart``, ``contentBlockDelta``...) with its JSON payload."""
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, json.dumps(payload, ensure_ascii=False).encode())


def error_body(message: str) -> bytes:
    """Bedrock's error body: ``{"message": ...}`` (the error code travels in the ``x-amzn-ErrorType`` header)."""
    return json.dumps({"message": message}, ensure_ascii=False).encode()


def _stream_block(index: int, block: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    if "toolUse" in block:
        use = block["toolUse"]
        start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
        yield "contentBlockStart", {"start": start, "contentBlockIndex": index}
        raw = use.get("input")
        text = raw if isinstance(raw, str) else json.dumps(raw or {}, ensure_ascii=False)  # a raw string as written
        delta: dict[str, Any] = {"toolUse": {"input": text}}
        yield "contentBlockDelta", {"delta": delta, "contentBlockIndex": index}
    elif "reasoningContent" in block:
        reasoning = block["reasoningContent"].get("reasoningText", {})
        yield (
            "contentBlockDelta",
            {"delta": {"reasoningContent": {"text": reasoning.get("text", "")}}, "contentBlockIndex": index},
        )
        if reasoning.get("signature"):
            yield (
                "contentBlockDelta",
                {"delta": {"reasoningContent": {"signature": reasoning["signature"]}}, "contentBlockIndex": index},
            )
    else:
        yield "contentBlockDelta", {"delta": {"text": block.get("text", "")}, "contentBlockIndex": index}
    yield "contentBlockStop", {"contentBlockIndex": index}


def stream_events(
    content: Sequence[Mapping[str, Any]], stop_reason: str, usage: Mapping[str, int], latency_ms: int
) -> list[tuple[str, dict[str, Any]]]:
    """The ConverseStream events of one reply, in Bedrock's order: start, blocks, stop, metadata."""
    events: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
    for index, block in enumerate(content):
        events.extend(_stream_block(index, block))
    events.append(("messageStop", {"stopReason": stop_reason}))
    events.append(("metadata", {"usage": dict(usage), "metrics": {"latencyMs": latency_ms}}))
    return events


def converse_body(
    content: Sequence[Mapping[str, Any]], stop_reason: str, usage: Mapping[str, int], latency_ms: int
) -> dict[str, Any]:
    """The Converse (non-streaming) response body of one reply."""
    return {
        "output": {"message": {"role": "assistant", "content": list(content)}},
        "stopReason": stop_reason,
        "usage": dict(usage),
        "metrics": {"latencyMs": latency_ms},
    }
