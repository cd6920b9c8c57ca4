"""Conversation memory: weighting and decay, dedup that keeps short distinct turns, the cap, restarts, isolation.

The ``test_contract_*`` tests take a ``memory`` fixture (a ``Stores``) and hold for every store: this module runs
them on ``SQLiteMemory``, and ``tests/deploy/test_ask_memory_redis.py`` runs the same functions on ``RedisMemory``
against a real ``redis-server``.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from insightloom.ask.memory import (
    DEFAULT_POLICY,
    MemoryStore,
    RedisMemory,
    SQLiteMemory,
    Turn,
    open_memory,
    relevance,
    score_importance,
    turn_weight,
)
from insightloom.errors import BadInputError, ConfigError

HOUR = 3600.0
DAY = 24 * HOUR
T0 = 1_800_000_000.0
#: Hypothesis examples share one function-scoped store; each example uses its own session, so they never meet.
SHARED_STORE = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


class Clock:
    """A clock the test moves by hand, so decay is measured without waiting."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Stores:
    """Opens the store under test; ``restart()`` then ``open()`` is a new process's view of the same data."""

    def __init__(self, opener: Callable[[Clock, int], MemoryStore], restart: Callable[[], None]) -> None:
        self._opener = opener
        self._restart = restart

    def open(self, clock: Clock | None = None, max_turns: int = 500) -> MemoryStore:
        return self._opener(clock or Clock(), max_turns)

    def restart(self) -> None:
        self._restart()


@pytest.fixture
def memory(tmp_path: Path) -> Stores:
    path = tmp_path / "memory.sqlite3"
    return Stores(lambda clock, cap: SQLiteMemory(path, max_turns=cap, clock=clock), lambda: None)


def fresh_session() -> str:
    return f"s-{uuid.uuid4().hex[:8]}"


def texts(store: MemoryStore, user: str, session: str) -> list[str]:
    return [turn.text for turn in store.turns(user, session, limit=1000)]


def turn(age_s: float, idle_s: float, importance: float, now: float = T0) -> Turn:
    return Turn("user", "what was revenue in March?", now - age_s, now - idle_s, importance)


# --- the weight ---------------------------------------------------------------------------------------------------

ages = st.floats(min_value=0, max_value=30 * DAY)
importances = st.floats(min_value=0.05, max_value=1.0)


@given(age=ages, idle_share=st.floats(0, 1), importance=importances)
def test_recency_halves_the_weight_every_half_life(age: float, idle_share: float, importance: float) -> None:
    idle = age * idle_share
    young, old = turn(age, idle, importance), turn(age + DEFAULT_POLICY.half_life_s, idle, importance)
    assert turn_weight(old, T0, 0.0) == pytest.approx(turn_weight(young, T0, 0.0) / 2, rel=1e-9)


@given(age=ages, importance=importances)
def test_freshness_halves_the_weight_every_access_half_life(age: float, importance: float) -> None:
    recalled, idle = turn(age, 0.0, importance), turn(age, DEFAULT_POLICY.access_half_life_s, importance)
    assert turn_weight(idle, T0, 0.0) == pytest.approx(turn_weight(recalled, T0, 0.0) / 2, rel=1e-9)


@given(a=ages, b=ages, importance=importances, rel=st.floats(0, 1))
def test_older_turns_weigh_less_and_relevance_adds_its_boost(a: float, b: float, importance: float, rel: float) -> None:
    younger, older = sorted((a, b))
    first, second = turn(younger, younger, importance), turn(older, older, importance)
    assert turn_weight(first, T0, rel) >= turn_weight(second, T0, rel)
    if older - younger > HOUR:
        assert turn_weight(first, T0, 0.0) > turn_weight(second, T0, 0.0)
    assert turn_weight(first, T0, rel) == pytest.approx(
        turn_weight(first, T0, 0.0) + DEFAULT_POLICY.relevance_boost * rel
    )


def test_weight_is_importance_times_both_decays_plus_relevance() -> None:
    # Four days old (0.5**4), last recalled three days ago (one 72 h freshness half-life).
    old = turn(4 * DAY, 3 * DAY, 0.8)
    assert turn_weight(old, T0, 0.5) == pytest.approx(0.8 * 0.5**4 * 0.5 + 0.5)
    assert turn_weight(turn(-HOUR, -HOUR, 0.8), T0, 0.0) == pytest.approx(0.8)  # a clock running backwards


def test_importance_rises_with_numbers_citations_and_questions_and_falls_for_acknowledgements() -> None:
    ack = score_importance("user", "ok, thanks!")
    plain = score_importance("assistant", "West leads the regions")
    numbers = score_importance("assistant", "West leads with 1,204 orders")
    cited = score_importance("assistant", "West leads with 1,204 orders [F3]")
    assert ack < plain < numbers < cited <= 1.0
    assert score_importance("user", "why is West ahead?") > score_importance("user", "West is ahead")
    assert score_importance("user", "감사합니다") == score_importance("user", "OK. Thank you very much!") == ack
    assert score_importance("user", "no, the other one") == plain


def test_relevance_is_the_share_of_query_words_found_in_english_and_korean() -> None:
    assert relevance("what was West revenue?", "West revenue grew 12%") == 1.0
    assert relevance("what was West revenue?", "East margins fell") == 0.0
    assert relevance("광고비 대비 전환", "채널별 광고비 대비 전환율") == 1.0
    assert relevance("", "anything") == 0.0


# --- recall: the heaviest turns, in the order they were said -------------------------------------------------------


def test_contract_turns_returns_the_heaviest_in_chronological_order(memory: Stores) -> None:
    clock = Clock()
    store = memory.open(clock)
    said = [
        ("user", "what was total revenue in March 2024?"),
        ("assistant", "Total revenue in March was 48,210 [F2]."),
        ("user", "ok thanks"),
        ("user", "why is the West region ahead of the others?"),
    ]
    for role, text in said:
        assert store.add("ana", "q1", role, text)  # type: ignore[arg-type]
        clock.now += HOUR
    recalled = store.turns("ana", "q1", limit=3, now=clock.now)
    assert [t.text for t in recalled] == [said[0][1], said[1][1], said[3][1]]  # "ok thanks" weighs least
    assert [t.role for t in recalled] == ["user", "assistant", "user"]
    assert all(t.last_access == clock.now for t in recalled)


def test_contract_decay_lets_new_turns_outrank_old_ones_and_relevance_lifts_an_old_one(memory: Stores) -> None:
    clock = Clock()
    store = memory.open(clock)
    store.add("ana", "q1", "user", "how did the West region revenue change in spring?")
    clock.now += 3 * DAY
    store.add("ana", "q1", "user", "which product category has the highest margin?")
    clock.now += HOUR
    store.add("ana", "q1", "user", "which five customers placed the most orders?")
    now = clock.now + HOUR
    assert [t.text for t in store.turns("ana", "q1", limit=1, now=now)] == [
        "which five customers placed the most orders?"
    ]
    assert [t.text for t in store.turns("ana", "q1", query="West revenue", limit=1, now=now)] == [
        "how did the West region revenue change in spring?"
    ]


def test_contract_recall_refreshes_freshness_so_a_recalled_turn_outlives_an_ignored_one(memory: Stores) -> None:
    clock = Clock()
    store = memory.open(clock)
    store.add("ana", "q1", "user", "what was the revenue of Seoul stores last quarter?")
    store.add("ana", "q1", "user", "what was the revenue of Busan stores last quarter?")
    # Seoul is asked about again two days later, so its last access moves; a day after that, it weighs more.
    store.turns("ana", "q1", query="Seoul stores", limit=1, now=T0 + 2 * DAY)
    assert [t.text for t in store.turns("ana", "q1", limit=1, now=T0 + 3 * DAY)] == [
        "what was the revenue of Seoul stores last quarter?"
    ]


# --- dedup ----------------------------------------------------------------------------------------------------------

SHORT = ["yes", "no", "no, the other one", "the other one", "yes please", "sure, do it", "West", "East", "네", "아니요"]


@SHARED_STORE
@given(answers=st.lists(st.sampled_from(SHORT), min_size=2, max_size=12, unique=True))
def test_contract_dedup_keeps_short_distinct_turns(memory: Stores, answers: list[str]) -> None:
    store, session = memory.open(), fresh_session()
    for answer in answers:
        store.add("ana", session, "assistant", "Which region should I look at next?")
        assert store.add("ana", session, "user", answer), answer
    assert [text for text in texts(store, "ana", session) if text in SHORT] == answers


@SHARED_STORE
@given(word=st.sampled_from(SHORT))
def test_contract_short_turns_repeat_when_something_came_between(memory: Stores, word: str) -> None:
    store, session = memory.open(), fresh_session()
    assert store.add("ana", session, "user", word)
    assert store.add("ana", session, "assistant", "Shall I break it down by month as well?")
    assert store.add("ana", session, "user", word)  # a second "yes" to a second question is a distinct turn
    assert not store.add("ana", session, "user", word)  # the same turn twice in a row is a double submit
    assert texts(store, "ana", session) == [word, "Shall I break it down by month as well?", word]


def test_contract_a_contained_turn_collapses_onto_the_longer_one(memory: Stores) -> None:
    store = memory.open()
    long = "What was total revenue in March, broken down by region and by channel?"
    assert store.add("ana", "a", "user", long)
    assert not store.add("ana", "a", "user", "what was total revenue in March")
    assert texts(store, "ana", "a") == [long]
    # The other way round the longer one replaces the shorter.
    assert store.add("ana", "b", "user", "what was total revenue in March")
    assert store.add("ana", "b", "user", long)
    assert texts(store, "ana", "b") == [long]


def test_contract_strong_prefix_overlap_and_near_duplicates_collapse(memory: Stores) -> None:
    store = memory.open()
    base = (
        "Revenue in the West region grew because the spring campaign doubled visits and two new stores opened in April"
    )
    assert store.add("ana", "p", "assistant", base + " [F1]")
    assert not store.add("ana", "p", "assistant", base + " [F4]")  # same prefix, one token differs: a retry
    words = " ".join(f"w{i}" for i in range(80))
    assert store.add("ana", "j", "assistant", "Alpha " + words)
    assert not store.add("ana", "j", "assistant", "Beta " + words)  # no common prefix, shingled Jaccard 0.96
    assert texts(store, "ana", "p") == [base + " [F1]"] and texts(store, "ana", "j") == ["Alpha " + words]


def test_contract_similar_but_distinct_questions_and_other_roles_are_kept(memory: Stores) -> None:
    store = memory.open()
    questions = ["what was revenue in March 2024 for West?", "what was revenue in March 2024 for East?"]
    for question in questions:
        assert store.add("ana", "d", "user", question)
    assert store.add("ana", "d", "assistant", questions[1])  # an answer repeating the question is still an answer
    assert texts(store, "ana", "d") == [*questions, questions[1]]


# --- the cap, restarts, sessions --------------------------------------------------------------------------------------


def test_contract_the_cap_evicts_the_lowest_weight_turn_not_the_oldest(memory: Stores) -> None:
    clock = Clock()
    store = memory.open(clock, max_turns=3)
    store.add("ana", "cap", "user", "what was total revenue in 2024 by region?")
    clock.now += HOUR
    store.add("ana", "cap", "user", "thanks")
    clock.now += HOUR
    store.add("ana", "cap", "assistant", "West had 41% of 2024 revenue [F1].")
    clock.now += HOUR
    store.add("ana", "cap", "user", "and which channel brought the most orders?")
    assert texts(store, "ana", "cap") == [
        "what was total revenue in 2024 by region?",
        "West had 41% of 2024 revenue [F1].",
        "and which channel brought the most orders?",
    ]
    clock.now += HOUR
    assert store.add("ana", "cap", "user", "ok")  # the lightest turn of all, but the newest is always kept
    assert len(texts(store, "ana", "cap")) == 3 and texts(store, "ana", "cap")[-1] == "ok"


def test_contract_turns_survive_a_restart(memory: Stores) -> None:
    clock = Clock()
    store = memory.open(clock)
    store.add("ana", "r", "user", "what was revenue in March?")
    clock.now += 60
    store.add("ana", "r", "assistant", "Revenue in March was 48,210 [F2].")
    before = store.turns("ana", "r", now=clock.now)
    memory.restart()
    after = memory.open(clock).turns("ana", "r", now=clock.now)
    assert after == before and [t.role for t in after] == ["user", "assistant"]


def test_contract_forget_deletes_only_that_session(memory: Stores) -> None:
    store = memory.open()
    store.add("ana", "march", "user", "what was revenue in March?")
    store.add("ana", "march", "assistant", "Revenue in March was 48,210 [F2].")
    store.add("ana", "april", "user", "what was revenue in April?")
    store.add("bob", "march", "user", "which store sold most in March?")
    assert store.sessions("ana") == ["april", "march"]
    assert store.forget("ana", "march") == 2
    assert store.sessions("ana") == ["april"] and texts(store, "ana", "march") == []
    assert texts(store, "ana", "april") == ["what was revenue in April?"]
    assert texts(store, "bob", "march") == ["which store sold most in March?"]
    assert store.forget("ana", "march") == 0


def test_contract_users_never_see_each_others_sessions(memory: Stores) -> None:
    store = memory.open()
    store.add("ana", "q", "user", "ana's question about West revenue")
    store.add("ana:q", "x", "user", "a user name with a colon is not a key path")
    store.add("bob", "q", "user", "bob's question about East margins")
    assert texts(store, "ana", "q") == ["ana's question about West revenue"]
    assert texts(store, "bob", "q") == ["bob's question about East margins"]
    assert store.sessions("bob") == ["q"] and store.sessions("ana:q") == ["x"] and store.sessions("carol") == []
    assert texts(store, "ana", "q:x") == []


@pytest.mark.parametrize(("user", "session"), [("", "s"), ("ana", ""), ("ana", "a\nb"), ("ana", "s" * 201)])
def test_contract_bad_names_are_refused(memory: Stores, user: str, session: str) -> None:
    with pytest.raises(BadInputError):
        memory.open().add(user, session, "user", "hello there")


# --- SQLite specifics ---------------------------------------------------------------------------------------------


def test_sqlite_turns_written_by_another_process_survive_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    writer = (
        "import sys; from pathlib import Path; from insightloom.ask.memory import SQLiteMemory\n"
        "store = SQLiteMemory(Path(sys.argv[1]))\n"
        "assert store.add('ana', 'r', 'user', 'what was revenue in March?')\n"
        "assert store.add('ana', 'r', 'assistant', 'Revenue in March was 48,210 [F2].')\n"
    )
    subprocess.run([sys.executable, "-c", writer, str(path)], check=True, timeout=60)
    turns = SQLiteMemory(path).turns("ana", "r")
    assert [(t.role, t.text) for t in turns] == [
        ("user", "what was revenue in March?"),
        ("assistant", "Revenue in March was 48,210 [F2]."),
    ]
    assert turns[1].importance > turns[0].importance > 0


def test_open_memory_picks_the_store_from_the_url(tmp_path: Path) -> None:
    default = open_memory(tmp_path)
    assert isinstance(default, SQLiteMemory) and default.path == tmp_path / ".ask" / "memory.sqlite3"
    assert isinstance(open_memory(tmp_path, f"sqlite://{tmp_path}/m.db"), SQLiteMemory)
    assert isinstance(open_memory(tmp_path, str(tmp_path / "x" / "m.db")), SQLiteMemory)
    assert (tmp_path / "x" / "m.db").is_file()
    redis_store = open_memory(tmp_path, "redis://:secret@127.0.0.1:6399/2")  # redis-py connects on first use
    assert isinstance(redis_store, RedisMemory) and "secret" not in redis_store.where
    with pytest.raises(ConfigError):
        open_memory(tmp_path, "postgres://db/memory")
