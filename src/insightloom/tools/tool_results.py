"""Tool results in Strands' shape."""

from __future__ import annotations

from typing import Any


def tool_error(text: str) -> dict[str, Any]:
    """An error result the model sees as a failed tool call, with the message and its fix."""
    return {"status": "error", "content": [{"text": text}]}
