"""``RedisMemory`` against a real ``redis-server`` on loopback: the same contract tests as ``SQLiteMemory``.

The ``test_contract_*`` functions of ``tests/ask/test_memory.py`` run here with a ``memory`` fixture that opens
``RedisMemory`` (each test under its own key prefix) and whose restart is a real ``redis-server`` restart from its
append-only file. Without redis-server the tests skip locally and fail under ``INSIGHTLOOM_NO_SKIPS=1`` (CI).
"""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path
from types import ModuleType

import pytest
from celery_lane import RedisServer, free_port

from insightloom.ask.memory import RedisMemory
from insightloom.errors import ServiceBusy

CONTRACT_FILE = Path(__file__).resolve().parents[1] / "ask" / "test_memory.py"


def load_contract() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ask_memory_contract", CONTRACT_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and hypothesis resolve their module by name
    spec.loader.exec_module(module)
    return module


contract = load_contract()
# Collected here as this module's tests, so they take this module's ``memory`` fixture.
globals().update({name: test for name, test in vars(contract).items() if name.startswith("test_contract_")})


@pytest.fixture
def memory(redis_server: RedisServer) -> object:
    prefix = f"test:{uuid.uuid4().hex[:8]}"

    def opener(clock: contract.Clock, max_turns: int) -> RedisMemory:
        return RedisMemory(redis_server.url, max_turns=max_turns, prefix=prefix, clock=clock)

    return contract.Stores(opener, redis_server.restart)


def test_the_contract_tests_were_collected() -> None:
    names = [name for name in globals() if name.startswith("test_contract_")]
    assert len(names) >= 12, names


def test_keys_stay_under_the_prefix_and_forget_leaves_none(redis_server: RedisServer) -> None:
    store = RedisMemory(redis_server.url, prefix="keys-check")
    store.add("ana", "q", "user", "what was revenue in March?")
    assert all(key.startswith("keys-check:") for key in store.client.keys("*") if "keys-check" in key)
    assert store.client.keys("keys-check:t:*")
    store.forget("ana", "q")
    assert store.client.keys("keys-check:t:*") == []


def test_an_unreachable_redis_is_a_busy_service_naming_where_without_the_password() -> None:
    store = RedisMemory(f"redis://:hunter2@127.0.0.1:{free_port()}/0")
    with pytest.raises(ServiceBusy) as caught:
        store.add("ana", "q", "user", "what was revenue in March?")
    assert "127.0.0.1" in caught.value.message and "hunter2" not in str(caught.value)
