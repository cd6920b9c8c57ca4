"""A simulation of Bedrock's prompt (prefix) caching, so offline runs report the cache reads and writes a hosted
run would, and ``usage.json`` is a dry-run cost estimate.

The rules simulated, from the Bedrock and Anthropic documentation:

- A request is processed in the order tool specs → system blocks → messages. A ``cachePoint`` block marks the end of
  a prefix to cache; at most four points per request, otherwise the request is rejected.
- A point creates a cache entry only when the prefix since the previous (valid) point holds the model's minimum
  cacheable length (1,024 tokens for Claude Sonnet 4.5; 4,096 for Claude Haiku 4.5); a point below it is ignored and
  the call still succeeds.
- At each point the service looks back up to 20 block boundaries for the longest prefix cached earlier: that prefix
  is read from the cache, the tokens from there to the last valid point are written, and the rest is plain input.
- An entry lives 5 minutes, and every hit resets its time to live.
- With the automatic strategy (Strands ``CacheConfig(strategy="auto")`` on a Claude model), a point is added at the
  end of the system prompt unless the caller placed one there, and one at the end of the last user message.

``input_tokens`` excludes cache reads and writes, as Bedrock's ``inputTokens`` does.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from .tokens import RequestBlock, count_request

logger = logging.getLogger(__name__)

CACHE_TTL_SECONDS = 300.0
MAX_CACHE_POINTS = 4
LOOKBACK_BLOCKS = 20
#: Minimum cacheable prefix per model family (substring of the model id → tokens); the first match wins.
#: Anthropic, "Prompt caching": 4,096 for Opus 4.5 and Haiku 4.5, 2,048 for Haiku 3.5 and 3, 1,024 for the rest.
#: An offline model is simulated at its role's configured model id (``OfflineModel(priced_as=...)``); a bare
#: ``offline-<role>`` id (tests, the ablation's naive brain) is simulated like Claude Sonnet.
MIN_CACHEABLE_TOKENS: tuple[tuple[str, int], ...] = (
    ("claude-haiku-4-5", 4096),
    ("claude-opus-4-5", 4096),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
    ("claude-sonnet-4-5", 1024),
    ("claude-sonnet-4", 1024),
    ("claude-3-7-sonnet", 1024),
    ("offline-", 1024),
)
DEFAULT_MIN_CACHEABLE = 1024


def min_cacheable_tokens(model_id: str) -> int:
    """The minimum prefix length a cache point needs for ``model_id``."""
    lowered = model_id.lower()
    return next((tokens for key, tokens in MIN_CACHEABLE_TOKENS if key in lowered), DEFAULT_MIN_CACHEABLE)


def static_prefix_note(static: str, tool_specs: Sequence[Mapping[str, Any]], model_id: str) -> str | None:
    """Why a system cache point after ``static`` can never cache for ``model_id``, or None when it can.

    The prefix up to that point is the tool specs and the static system text (request order); below the model's
    minimum Bedrock ignores the point and bills the prefix as input, so the point is not sent.
    """
    tokens = count_request([], list(tool_specs), static)
    minimum = min_cacheable_tokens(model_id)
    if tokens >= minimum:
        return None
    return (
        f"static prompt and tools {tokens:,} tokens, below the {minimum:,}-token minimum of {model_id}: no system "
        "cache point is sent and the prefix is billed as input (a longer prefix at the last message may still cache)"
    )


@dataclass(frozen=True)
class CacheUsage:
    """How one request's input tokens were billed."""

    input_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def sent(self) -> int:
        """Every input token the request carried, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


def _auto_points(blocks: Sequence[RequestBlock], system_point: bool = True) -> set[int]:
    """Where the automatic strategy adds points, as positions in the list of content blocks (markers removed);
    without ``system_point`` (Strands' ``CacheConfig(system_prompt_ttl=False)``) none at the system prompt's end."""
    content = [b for b in blocks if not b.cache_point]
    points: set[int] = set()
    has_system_point = any(b.cache_point and b.section == "system" for b in blocks)
    system_end = max((i + 1 for i, b in enumerate(content) if b.section == "system"), default=0)
    if system_end and system_point and not has_system_point:
        points.add(system_end)
    last_user_start = max((i for i, b in enumerate(content) if b.section == "user" and b.starts_message), default=-1)
    if last_user_start >= 0:
        end = last_user_start + 1
        while end < len(content) and content[end].section == "user" and not content[end].starts_message:
            end += 1
        points.add(end)
    return points


class PrefixCache:
    """The simulated cache of one model, shared by every call made through it.

    Args:
        model_id: Picks the minimum cacheable length.
        min_tokens: Overrides that minimum (tests).
        ttl_seconds: Time to live of an entry, reset on each hit.
        clock: Seconds, monotonic; tests pass a fake one to move time.
    """

    def __init__(
        self,
        model_id: str,
        *,
        min_tokens: int | None = None,
        ttl_seconds: float = CACHE_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model_id = model_id
        self.min_tokens = min_cacheable_tokens(model_id) if min_tokens is None else min_tokens
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self._expiry: dict[str, float] = {}
        self._lock = threading.Lock()

    def account(self, blocks: Sequence[RequestBlock], *, auto: bool, system_point: bool = True) -> CacheUsage:
        """Bill one request: read what an earlier request cached, write what this one newly caches.

        Args:
            blocks: The request in processing order, cache-point markers included.
            auto: Whether the automatic strategy adds its points (the agent asked for caching).
            system_point: Whether that strategy adds one at the end of the system prompt.

        Raises:
            ModelError: More than four cache points, which Bedrock rejects.
        """
        content = [b for b in blocks if not b.cache_point]
        positions, hashes = self._prefixes(content)
        points = self._explicit_points(blocks) | (_auto_points(blocks, system_point) if auto else set())
        points.discard(0)
        if len(points) > MAX_CACHE_POINTS:
            raise ModelError(
                f"The request has {len(points)} cache points; Bedrock accepts at most {MAX_CACHE_POINTS}.",
                "place fewer cachePoint blocks (system, tools and the last message share the limit).",
            )
        valid = self._valid_points(sorted(points), positions)
        now = self.clock()
        with self._lock:
            self._expiry = {key: until for key, until in self._expiry.items() if until > now}
            read_at = self._longest_hit(sorted(points), hashes)
            read = positions[read_at] if read_at is not None else 0
            if read_at is not None:
                self._expiry[hashes[read_at]] = now + self.ttl_seconds
            new = [p for p in valid if positions[p] > read]
            for point in new:
                self._expiry[hashes[point]] = now + self.ttl_seconds
        write = positions[new[-1]] - read if new else 0
        return CacheUsage(positions[-1] - read - write, read, write)

    @staticmethod
    def _explicit_points(blocks: Sequence[RequestBlock]) -> set[int]:
        points, seen = set(), 0
        for block in blocks:
            if block.cache_point:
                points.add(seen)
            else:
                seen += 1
        return points

    def _prefixes(self, content: Sequence[RequestBlock]) -> tuple[list[int], list[str]]:
        """Token position and chained hash after each number of blocks (index 0 is the empty prefix)."""
        positions, hashes = [0], [hashlib.sha256(self.model_id.encode()).hexdigest()]
        for block in content:
            key = f"{block.section}|{int(block.starts_message)}|{block.text}"
            hashes.append(hashlib.sha256((hashes[-1] + key).encode("utf-8", "surrogatepass")).hexdigest())
            positions.append(positions[-1] + block.tokens)
        return positions, hashes

    def _valid_points(self, points: list[int], positions: list[int]) -> list[int]:
        """Points whose section since the previous valid point holds the minimum cacheable length."""
        valid, previous = [], 0
        for point in points:
            if positions[point] - previous >= self.min_tokens:
                valid.append(point)
                previous = positions[point]
        return valid

    def _longest_hit(self, points: list[int], hashes: list[str]) -> int | None:
        """The longest cached prefix within the look-back window of any point (caller holds the lock)."""
        best: int | None = None
        for point in points:
            for boundary in range(point, max(0, point - LOOKBACK_BLOCKS) - 1, -1):
                if boundary > 0 and hashes[boundary] in self._expiry:
                    if best is None or boundary > best:
                        best = boundary
                    break
        return best
