"""Bedrock's prompt cache as one account sees it, so the endpoint reports cache reads and writes as Bedrock would.

The rules, from Bedrock's "Prompt caching for faster model inference" page and Anthropic's "Prompt caching":

- A request is read in the order tools → system → messages; a ``cachePoint`` ends a prefix to cache.
- A cache point takes effect only when the tokens since the previous effective point reach the model's minimum
  ("the first cache checkpoint can be defined after 1,024 tokens and the second after 2,048"); below it the call
  succeeds and nothing is cached. The minimum per family is ``context.prompt_cache.min_cacheable_tokens``.
- At each point the service looks back up to 20 block boundaries for the longest prefix it has cached: that part is
  a cache read, the tokens from there to the last effective point are a cache write, the rest is plain input.
- A prefix matches only byte for byte (same blocks, same model); an entry lives 5 minutes, and each hit renews it.

Tokens are counted with the product's tokenizer (``context.tokens``), so the figures line up with the product's
own estimates. The prefix key is the exact JSON of every block, tool-use ids included: two requests that differ
only in an id do not share a cache entry, as on Bedrock.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# The documented figures and the usage record are shared; the billing below is the endpoint's own.
from ...context.prompt_cache import CACHE_TTL_SECONDS, LOOKBACK_BLOCKS, CacheUsage, min_cacheable_tokens
from ...context.tokens import block_text, count_tokens

__all__ = ["CACHE_TTL_SECONDS", "CacheLedger", "CacheUsage", "LOOKBACK_BLOCKS"]


@dataclass(frozen=True)
class _Block:
    tokens: int
    key: str


def _key(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def request_blocks(request: Mapping[str, Any]) -> tuple[list[_Block], set[int]]:
    """The request's content blocks in processing order, and the cache points as counts of blocks before them."""
    blocks: list[_Block] = []
    points: set[int] = set()

    def add(block: Mapping[str, Any], tokens_text: str, key: str) -> None:
        if "cachePoint" in block:
            points.add(len(blocks))
        else:
            blocks.append(_Block(count_tokens(tokens_text), key))

    config = request.get("toolConfig")
    for tool in (config.get("tools") or []) if isinstance(config, Mapping) else []:
        spec = tool.get("toolSpec", {})
        add(tool, _key(spec), "tools|" + _key(tool))
    for block in request.get("system") or []:
        add(block, block_text(block), "system|" + _key(block))
    for message in request.get("messages") or []:
        for index, block in enumerate(message.get("content") or []):
            add(block, block_text(block), f"{message.get('role')}|{int(index == 0)}|" + _key(block))
    points.discard(0)
    return blocks, points


class CacheLedger:
    """The cache of one endpoint, shared by every model id it serves (entries are keyed per model).

    Args:
        clock: Seconds, monotonic; a test passes its own to move time past the TTL.
        ttl_seconds: Time to live of an entry, renewed on each hit.
        min_tokens: The minimum cacheable prefix of a model id.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        ttl_seconds: float = CACHE_TTL_SECONDS,
        min_tokens: Callable[[str], int] = min_cacheable_tokens,
    ) -> None:
        self.clock = clock
        self.ttl_seconds = ttl_seconds
        self.min_tokens = min_tokens
        self._expiry: dict[str, float] = {}
        self._lock = threading.Lock()

    def account(self, model_id: str, request: Mapping[str, Any], *, cache: bool = True) -> CacheUsage:
        """Bill one request: read the longest prefix cached earlier, write what its effective points add.

        Args:
            model_id: The model the request went to (entries are not shared between models).
            request: The decoded Converse request.
            cache: False for a model without prompt caching: every token is plain input.
        """
        blocks, points = request_blocks(request)
        positions, hashes = [0], [hashlib.sha256(model_id.encode()).hexdigest()]
        for block in blocks:
            hashes.append(hashlib.sha256((hashes[-1] + block.key).encode("utf-8", "surrogatepass")).hexdigest())
            positions.append(positions[-1] + block.tokens)
        if not cache or not points:
            return CacheUsage(positions[-1])
        ordered = sorted(points)
        effective, previous, minimum = [], 0, self.min_tokens(model_id)
        for point in ordered:
            if positions[point] - previous >= minimum:
                effective.append(point)
                previous = positions[point]
        now = self.clock()
        with self._lock:
            self._expiry = {key: until for key, until in self._expiry.items() if until > now}
            hit = self._longest_hit(ordered, hashes)
            read = positions[hit] if hit is not None else 0
            if hit is not None:
                self._expiry[hashes[hit]] = now + self.ttl_seconds
            new = [point for point in effective if positions[point] > read]
            for point in new:
                self._expiry[hashes[point]] = now + self.ttl_seconds
        write = positions[new[-1]] - read if new else 0
        return CacheUsage(positions[-1] - read - write, read, write)

    def _longest_hit(self, points: list[int], hashes: list[str]) -> int | None:
        """The longest cached prefix within the look-back window of any point (the caller holds the lock)."""
        best: int | None = None
        for point in points:
            for boundary in range(point, max(0, point - LOOKBACK_BLOCKS) - 1, -1):
                if boundary > 0 and hashes[boundary] in self._expiry:
                    best = boundary if best is None else max(best, boundary)
                    break
        return best
