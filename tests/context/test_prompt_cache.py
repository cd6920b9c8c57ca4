"""The simulated Bedrock prefix cache: minimum length, look-back reads, 5-minute TTL and the 4-point limit."""

from __future__ import annotations

import pytest

from insightloom.context.prompt_cache import PrefixCache, min_cacheable_tokens
from insightloom.context.tokens import count_request, request_blocks
from insightloom.errors import ModelError

STATIC = "Rules of the analyst. " * 400  # ~2,000 tokens
POINT = {"cachePoint": {"type": "default"}}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def user(text: str) -> dict:
    return {"role": "user", "content": [{"text": text}]}


def exchange(n: int, size: int = 300) -> list[dict]:
    use = {"toolUse": {"toolUseId": f"t{n}", "name": "tool", "input": {"n": n}}}
    result = {"toolResult": {"toolUseId": f"t{n}", "status": "success", "content": [{"text": f"out {n} " * size}]}}
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]


def bill(cache: PrefixCache, messages: list[dict], system: list[dict], *, auto: bool = True):
    blocks = request_blocks(messages, None, None, system)
    usage = cache.account(blocks, auto=auto)
    assert usage.sent == count_request(messages, None, None, system)  # every token is billed exactly once
    return usage


def test_minimum_lengths_follow_the_model_family() -> None:
    assert min_cacheable_tokens("us.anthropic.claude-sonnet-4-5-20250929-v1:0") == 1024
    assert min_cacheable_tokens("us.anthropic.claude-haiku-4-5-20251001-v1:0") == 4096
    assert min_cacheable_tokens("offline-coder") == 1024


def test_static_prefix_is_written_once_then_read_and_the_dynamic_part_is_input() -> None:
    cache = PrefixCache("offline-tracker", clock=Clock())
    first = bill(cache, [user("task one")], [{"text": STATIC}, POINT, {"text": "plan section A"}], auto=False)
    assert first.cache_read_tokens == 0 and first.cache_write_tokens > 1024
    second = bill(cache, [user("task two")], [{"text": STATIC}, POINT, {"text": "plan section B"}], auto=False)
    assert second.cache_read_tokens == first.cache_write_tokens and second.cache_write_tokens == 0
    assert second.input_tokens < 30


def test_a_point_below_the_minimum_caches_nothing() -> None:
    cache = PrefixCache("offline-x", clock=Clock())
    small = [{"text": "short rules"}, POINT, {"text": "dynamic"}]
    assert bill(cache, [user("a")], small, auto=False).cache_write_tokens == 0
    assert bill(cache, [user("a")], small, auto=False).cache_read_tokens == 0


def test_growing_conversation_reads_the_previous_call_through_the_look_back() -> None:
    cache = PrefixCache("offline-coder", clock=Clock())
    system = [{"text": STATIC}, POINT, {"text": "dynamic part"}]
    messages = [user("do the items")] + exchange(1, 700)
    previous = bill(cache, messages, system)
    for n in range(2, 6):
        messages += exchange(n, 700)
        usage = bill(cache, messages, system)
        assert usage.cache_read_tokens == previous.sent  # the whole previous request comes from the cache
        assert usage.cache_write_tokens > 0 and usage.input_tokens == 0
        previous = usage


def test_entries_expire_after_five_minutes_and_a_hit_renews_them() -> None:
    clock = Clock()
    cache = PrefixCache("offline-x", clock=clock)
    system = [{"text": STATIC}, POINT]
    bill(cache, [user("a")], system, auto=False)
    clock.now = 299
    assert bill(cache, [user("b")], system, auto=False).cache_read_tokens > 0  # hit at 299 s renews to 599 s
    clock.now = 590
    assert bill(cache, [user("c")], system, auto=False).cache_read_tokens > 0
    clock.now = 590 + 301
    expired = bill(cache, [user("d")], system, auto=False)
    assert expired.cache_read_tokens == 0 and expired.cache_write_tokens > 0


def test_more_than_four_cache_points_is_rejected() -> None:
    cache = PrefixCache("offline-x", clock=Clock())
    system = [item for i in range(5) for item in ({"text": f"part {i} " + STATIC}, POINT)]
    with pytest.raises(ModelError, match="at most 4"):
        bill(cache, [user("a")], system, auto=False)


def test_look_back_stops_after_twenty_blocks() -> None:
    cache = PrefixCache("offline-x", clock=Clock())
    system = [{"text": "x"}]
    messages = [user(STATIC)]
    first = bill(cache, messages, system)
    assert first.cache_write_tokens > 0
    for n in range(11):  # 22 new blocks after the cached point
        messages += exchange(n, 5)
    far = bill(cache, messages, system)
    assert far.cache_read_tokens == 0
