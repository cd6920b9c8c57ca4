"""Conversation memory for follow-up questions: turns per user and session, weighted, deduplicated and capped.

A session's turns are not replayed verbatim. Each has an effective weight (see ``turn_weight``)::

    weight = importance × recency decay (age) × freshness (time since last recalled) + relevance boost (query)

and ``turns()`` hands the prompt the heaviest ones, in the order they were said. Importance is scored from the text
when a turn is added (numbers, citations and questions raise it; "ok, thanks" lowers it). Before a turn is stored it
is checked against the session's recent turns of the same role: a text contained in another, sharing a strong prefix
with it, or a near-duplicate (shingled Jaccard) collapses onto one turn, the one with more text. Short turns
("yes", "no, the other one") are distinct answers and never collapse, except an exact repeat of the last turn, which
is a double submit. Each session keeps at most ``max_turns``; past that the lowest-weight turns are evicted.

Two stores share this logic and persist across restarts: ``SQLiteMemory`` (stdlib, the default, one file under the
artifacts folder) and ``RedisMemory`` (a deployment's Redis, keys per user and session). ``open_memory`` picks one.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sqlite3
import time
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, cast
from urllib.parse import quote, urlsplit

from ..errors import BadInputError, ConfigError, ServiceBusy
from .retrieval import tokenize

if TYPE_CHECKING:
    import redis

logger = logging.getLogger(__name__)

Role = Literal["user", "assistant"]
ROLES: tuple[Role, ...] = ("user", "assistant")
#: Where ``open_memory`` keeps the SQLite file, relative to the artifacts folder (a dot folder is never a job).
DEFAULT_PATH = Path(".ask") / "memory.sqlite3"
DEFAULT_MAX_TURNS = 500
MAX_NAME_CHARS = 200
REDIS_SCHEMES = ("redis", "rediss", "unix")


@dataclass
class Turn:
    """One thing said in a session.

    Attributes:
        role: ``"user"`` (a question) or ``"assistant"`` (an answer).
        text: What was said.
        created_at: When it was said (epoch seconds).
        last_access: When it was last stored or recalled into a prompt (epoch seconds).
        importance: 0..1, scored from the text by ``score_importance``.
    """

    role: Role
    text: str
    created_at: float
    last_access: float
    importance: float


@dataclass(frozen=True)
class MemoryPolicy:
    """The numbers behind weighting and dedup; the defaults follow the context-engine design.

    Attributes:
        half_life_s: Age at which a turn's recency decay halves its weight. Defaults to 24 h.
        access_half_life_s: Time since last recall at which freshness halves the weight. Defaults to 72 h, so a
            turn the conversation keeps coming back to fades slower than one never recalled.
        relevance_boost: Added weight for a turn sharing every query token (scaled by the share). Defaults to 1.0,
            so a relevant turn outranks an irrelevant one of any age.
        near_duplicate: Shingled Jaccard at or above which two turns are near-duplicates. Defaults to 0.9.
        prefix_overlap: Share of the longer turn's tokens that a common prefix must cover. Defaults to 0.9.
        min_dedup_tokens: Turns shorter than this never collapse onto another (bar an exact double submit).
        dedup_window: How many of the session's latest turns a new turn is compared with.
    """

    half_life_s: float = 24 * 3600.0
    access_half_life_s: float = 72 * 3600.0
    relevance_boost: float = 1.0
    near_duplicate: float = 0.9
    prefix_overlap: float = 0.9
    min_dedup_tokens: int = 6
    dedup_window: int = 50


DEFAULT_POLICY = MemoryPolicy()


class MemoryStore(Protocol):
    """Where conversation turns live, per user and session; users never see each other's sessions."""

    def add(self, user: str, session: str, role: Role, text: str) -> bool:
        """Store a turn; False when it was deduplicated away (an existing turn already says it)."""
        ...

    def turns(
        self, user: str, session: str, *, query: str = "", limit: int = 20, now: float | None = None
    ) -> list[Turn]:
        """The ``limit`` heaviest turns for ``query``, in chronological order; marks them recalled."""
        ...

    def forget(self, user: str, session: str) -> int:
        """Delete one session of one user; the number of turns deleted."""
        ...

    def sessions(self, user: str) -> list[str]:
        """The user's session names, sorted."""
        ...


# --- scoring ------------------------------------------------------------------------------------------------------

_WORD = re.compile(r"\d+(?:[.,]\d+)*|[a-z][a-z0-9']*|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
#: A turn made only of acknowledgements ("ok, thanks!") carries nothing a later answer needs.
_ACK = re.compile(
    r"^(?:(?:ok(?:ay)?|k|thanks?(?: you)?(?: (?:very|so) much)?|thx|ty|cheers|got it|great|cool|nice|perfect|"
    r"alright|understood|sounds good|감사합니다|고마워요?|알겠습니다|알겠어요|좋아요|확인했습니다)[\s,.!~]*)+$",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")
_CITATION = re.compile(r"\[F\d+\]|\{\{calc:[^}]+\}\}")
_QUESTION = re.compile(r"\?|^(what|why|how|which|who|when|where|compare|is|are|does|did|can)\b|(까|나요|니)\s*$", re.I)


def _words(text: str) -> list[str]:
    """Every word and number, lowercased, and character bigrams of Korean/CJK runs.

    Unlike retrieval's ``tokenize`` this keeps stop words: dedup must tell "no, the other one" from "the one".
    """
    tokens: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _CJK.match(word) and len(word) > 1:
            tokens.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            tokens.append(word)
    return tokens


def score_importance(role: Role, text: str) -> float:
    """0..1 from the text alone: acknowledgements 0.1; numbers, citations, questions and substance raise it."""
    stripped = text.strip()
    if _ACK.match(stripped):
        return 0.1
    score = 0.4
    score += 0.2 if _DIGIT.search(stripped) else 0.0
    score += 0.2 if _CITATION.search(stripped) else 0.0
    # The user's questions set the topic the answers hang on.
    score += 0.1 if role == "user" and _QUESTION.search(stripped) else 0.0
    score += 0.1 if len(_words(stripped)) >= 12 else 0.0
    return round(min(score, 1.0), 3)


def relevance(query: str, text: str) -> float:
    """Share of the query's tokens that ``text`` contains, in 0..1 (0 for an empty query).

    Retrieval's ``tokenize`` leaves stop words out, so "what was" never makes two turns relevant to each other.
    """
    wanted = set(tokenize(query))
    if not wanted:
        return 0.0
    return len(wanted & set(tokenize(text))) / len(wanted)


def turn_weight(turn: Turn, now: float, relevance: float, policy: MemoryPolicy = DEFAULT_POLICY) -> float:
    """Effective weight: importance × recency decay × freshness since last access + relevance boost.

    Recency halves every ``half_life_s`` of age and freshness every ``access_half_life_s`` since the turn was last
    recalled; a clock that runs backwards counts as no time passed.
    """
    age = max(now - turn.created_at, 0.0)
    idle = max(now - turn.last_access, 0.0)
    decay = math.pow(0.5, age / policy.half_life_s) * math.pow(0.5, idle / policy.access_half_life_s)
    return turn.importance * decay + policy.relevance_boost * relevance


# --- dedup --------------------------------------------------------------------------------------------------------


@dataclass
class _Row:
    """A stored turn and its key in the backend."""

    key: str
    turn: Turn


@dataclass(frozen=True)
class _Signature:
    """What dedup compares: the token sequence, as a padded string for containment, and its 3-token shingles."""

    tokens: tuple[str, ...]

    @property
    def joined(self) -> str:
        return f" {' '.join(self.tokens)} "

    @property
    def shingles(self) -> frozenset[tuple[str, ...]]:
        size = min(3, len(self.tokens))
        return frozenset(self.tokens[i : i + size] for i in range(len(self.tokens) - size + 1))


def _signature(text: str) -> _Signature:
    return _Signature(tuple(_words(text)))


def _prefix_share(a: _Signature, b: _Signature) -> float:
    common = 0
    for left, right in zip(a.tokens, b.tokens, strict=False):
        if left != right:
            break
        common += 1
    return common / max(len(a.tokens), len(b.tokens), 1)


def _jaccard(a: _Signature, b: _Signature) -> float:
    union = a.shingles | b.shingles
    return len(a.shingles & b.shingles) / len(union) if union else 1.0


def _duplicates(new: _Signature, old: _Signature, policy: MemoryPolicy) -> bool:
    """Whether one of two (long enough) turns makes the other redundant."""
    if min(len(new.tokens), len(old.tokens)) < policy.min_dedup_tokens:
        return False
    return (
        new.joined in old.joined
        or old.joined in new.joined
        or _prefix_share(new, old) >= policy.prefix_overlap
        or _jaccard(new, old) >= policy.near_duplicate
    )


def _find_duplicate(rows: Sequence[_Row], turn: Turn, policy: MemoryPolicy) -> _Row | None:
    """The recent same-role turn that ``turn`` duplicates, newest first, or None."""
    new = _signature(turn.text)
    if rows and rows[-1].turn.role == turn.role and _signature(rows[-1].turn.text) == new:
        return rows[-1]  # an exact repeat of the last turn is a double submit, however short
    for row in reversed(rows[-policy.dedup_window :]):
        if row.turn.role == turn.role and _duplicates(new, _signature(row.turn.text), policy):
            return row
    return None


# --- the shared store logic ---------------------------------------------------------------------------------------


class _Transaction(ABC):
    """One session's turns inside a backend transaction (a SQLite write transaction, a Redis lock)."""

    @abstractmethod
    def rows(self) -> list[_Row]:
        """The session's turns, oldest first."""

    @abstractmethod
    def insert(self, turn: Turn) -> str:
        """Store a new turn; its key."""

    @abstractmethod
    def save(self, row: _Row) -> None:
        """Overwrite a stored turn."""

    @abstractmethod
    def delete(self, keys: Sequence[str]) -> None:
        """Remove turns by key."""


class _WeightedMemory(ABC):
    """Dedup, weighting and eviction over a backend that only stores rows; the stores below supply ``_open``."""

    def __init__(self, *, max_turns: int, policy: MemoryPolicy, clock: Callable[[], float] = time.time) -> None:
        if max_turns < 1:
            raise BadInputError(f"max_turns must be at least 1, not {max_turns}.", "Set a positive session cap.")
        self.max_turns = max_turns
        self.policy = policy
        self._clock = clock

    @abstractmethod
    def _open(self, user: str, session: str) -> AbstractContextManager[_Transaction]:
        """A transaction over one session, committed when the block ends without an error."""

    def add(self, user: str, session: str, role: Role, text: str) -> bool:
        """Store a turn unless a recent turn already says it; evict the lightest turns past ``max_turns``.

        Returns:
            False when the text collapsed onto an existing turn (which is then marked recalled), True when stored
            (possibly replacing a shorter duplicate).
        """
        _check_names(user, session)
        if role not in ROLES:
            raise BadInputError(f"A turn's role is 'user' or 'assistant', not {role!r}.", "Pass one of the two.")
        text = text.strip()
        if not text:
            return False
        now = self._clock()
        turn = Turn(role, text, now, now, score_importance(role, text))
        with self._open(user, session) as txn:
            rows = txn.rows()
            duplicate = _find_duplicate(rows, turn, self.policy)
            if duplicate is not None:
                turn.importance = max(turn.importance, duplicate.turn.importance)
                if len(text) <= len(duplicate.turn.text):  # keep the one with more text; on a tie the older
                    duplicate.turn.last_access, duplicate.turn.importance = now, turn.importance
                    txn.save(duplicate)
                    return False
                txn.delete([duplicate.key])
                rows.remove(duplicate)
            rows.append(_Row(txn.insert(turn), turn))
            self._evict(txn, rows, now)
        return True

    def _evict(self, txn: _Transaction, rows: list[_Row], now: float) -> None:
        """Drop the lowest-weight turns past the cap; the turn just added is kept so the next prompt has it."""
        excess = len(rows) - self.max_turns
        if excess <= 0:
            return
        # Ties go to the older turn; sorted() is stable over the chronological rows.
        candidates = sorted(rows[:-1], key=lambda row: turn_weight(row.turn, now, 0.0, self.policy))
        txn.delete([row.key for row in candidates[:excess]])

    def turns(
        self, user: str, session: str, *, query: str = "", limit: int = 20, now: float | None = None
    ) -> list[Turn]:
        """The ``limit`` heaviest turns for ``query``, in the order they were said; their last access becomes now."""
        _check_names(user, session)
        now = self._clock() if now is None else now
        if limit <= 0:
            return []
        with self._open(user, session) as txn:
            rows = txn.rows()
            weights = {
                row.key: turn_weight(row.turn, now, relevance(query, row.turn.text), self.policy) for row in rows
            }
            # Newer first among equal weights, then back to chronological order for the prompt.
            ranked = {row.key for row in sorted(reversed(rows), key=lambda row: weights[row.key], reverse=True)[:limit]}
            kept = [row for row in rows if row.key in ranked]
            for row in kept:
                row.turn.last_access = now
                txn.save(row)
        return [row.turn for row in kept]


def _check_names(user: str, session: str) -> None:
    for what, name in (("user", user), ("session", session)):
        if not name or len(name) > MAX_NAME_CHARS or any(ord(ch) < 32 for ch in name):
            raise BadInputError(
                f"A conversation {what} name must be 1 to {MAX_NAME_CHARS} printable characters, not {name!r}.",
                f"Pick a shorter {what} name without control characters.",
            )


# --- SQLite ---------------------------------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL,
    session TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    text TEXT NOT NULL,
    created_at REAL NOT NULL,
    last_access REAL NOT NULL,
    importance REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_by_session ON turns (user, session, id);
"""


class _SQLiteTransaction(_Transaction):
    def __init__(self, conn: sqlite3.Connection, user: str, session: str) -> None:
        self.conn, self.user, self.session = conn, user, session

    def rows(self) -> list[_Row]:
        cursor = self.conn.execute(
            "SELECT id, role, text, created_at, last_access, importance FROM turns WHERE user = ? AND session = ?"
            " ORDER BY id",
            (self.user, self.session),
        )
        return [
            _Row(str(key), Turn(role, text, created, access, weight))
            for key, role, text, created, access, weight in cursor
        ]

    def insert(self, turn: Turn) -> str:
        cursor = self.conn.execute(
            "INSERT INTO turns (user, session, role, text, created_at, last_access, importance)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (self.user, self.session, turn.role, turn.text, turn.created_at, turn.last_access, turn.importance),
        )
        return str(cursor.lastrowid)

    def save(self, row: _Row) -> None:
        turn = row.turn
        self.conn.execute(
            "UPDATE turns SET text = ?, created_at = ?, last_access = ?, importance = ? WHERE id = ?",
            (turn.text, turn.created_at, turn.last_access, turn.importance, int(row.key)),
        )

    def delete(self, keys: Sequence[str]) -> None:
        self.conn.executemany("DELETE FROM turns WHERE id = ?", [(int(key),) for key in keys])


class SQLiteMemory(_WeightedMemory):
    """Turns in one SQLite file (WAL), safe for the API and CLI processes sharing it.

    Args:
        path: The database file; its folder is created.
        max_turns: Cap per user and session. Defaults to 500.
        policy: Weighting and dedup numbers. Defaults to ``DEFAULT_POLICY``.
        clock: Epoch seconds now (injected by tests). Defaults to ``time.time``.
    """

    def __init__(
        self,
        path: Path,
        *,
        max_turns: int = DEFAULT_MAX_TURNS,
        policy: MemoryPolicy = DEFAULT_POLICY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(max_turns=max_turns, policy=policy, clock=clock)
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # A connection per call: FastAPI runs handlers on several threads, and sqlite3 connections are not shared.
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _open(self, user: str, session: str) -> Iterator[_Transaction]:
        with self._connect() as conn:
            # IMMEDIATE takes the write lock up front, so two processes never dedup against the same stale rows.
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield _SQLiteTransaction(conn, user, session)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def forget(self, user: str, session: str) -> int:
        """Delete one session of one user; the number of turns deleted."""
        _check_names(user, session)
        with self._connect() as conn:
            cursor = conn.execute("DELETE FROM turns WHERE user = ? AND session = ?", (user, session))
            return cursor.rowcount

    def sessions(self, user: str) -> list[str]:
        """The user's session names, sorted."""
        with self._connect() as conn:
            rows = conn.execute("SELECT DISTINCT session FROM turns WHERE user = ? ORDER BY session", (user,))
            return [session for (session,) in rows]


# --- Redis ----------------------------------------------------------------------------------------------------------


class _RedisTransaction(_Transaction):
    """A session is a hash ``<prefix>:t:<user>:<session>`` of turn id → JSON, with ids from ``…:seq``."""

    def __init__(self, client: redis.Redis, key: str, sessions_key: str, session: str) -> None:
        self.client, self.key = client, key
        self.sessions_key, self.session = sessions_key, session

    def rows(self) -> list[_Row]:
        stored = cast(dict[str, str], self.client.hgetall(self.key))  # decode_responses=True
        return [_Row(key, Turn(**json.loads(stored[key]))) for key in sorted(stored, key=int)]

    def insert(self, turn: Turn) -> str:
        key = str(self.client.incr(f"{self.key}:seq"))
        self.save(_Row(key, turn))
        self.client.sadd(self.sessions_key, self.session)
        return key

    def save(self, row: _Row) -> None:
        self.client.hset(self.key, row.key, json.dumps(asdict(row.turn)))

    def delete(self, keys: Sequence[str]) -> None:
        if keys:
            self.client.hdel(self.key, *keys)


class RedisMemory(_WeightedMemory):
    """Turns in a deployment's Redis, so every API replica and worker sees the same sessions.

    Args:
        url: ``redis://[:password@]host:port/db`` (or ``rediss://``, ``unix://``).
        max_turns: Cap per user and session. Defaults to 500.
        prefix: Key prefix, so the memory shares a Redis with the Celery broker safely. Defaults to
            ``insightloom:ask``.
        policy: Weighting and dedup numbers. Defaults to ``DEFAULT_POLICY``.
        clock: Epoch seconds now (injected by tests). Defaults to ``time.time``.
    """

    def __init__(
        self,
        url: str,
        *,
        max_turns: int = DEFAULT_MAX_TURNS,
        prefix: str = "insightloom:ask",
        policy: MemoryPolicy = DEFAULT_POLICY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(max_turns=max_turns, policy=policy, clock=clock)
        try:
            import redis
        except ImportError as exc:
            raise ConfigError(
                "Conversation memory in Redis needs the redis package.", "pip install 'insightloom[celery]'"
            ) from exc
        # A lock that another process holds past its timeout is as unavailable as a Redis that is down.
        self._errors: tuple[type[Exception], ...] = (
            redis.ConnectionError,
            redis.TimeoutError,
            redis.exceptions.LockError,
        )
        self.where = _redis_location(url)
        self.prefix = prefix
        self.client = redis.Redis.from_url(url, decode_responses=True, socket_timeout=5, socket_connect_timeout=2)

    def _key(self, user: str, session: str = "") -> str:
        # Quoting keeps a ':' in a name from reaching into another user's keys.
        user_key = f"{self.prefix}:t:{quote(user, safe='')}"
        return f"{user_key}:{quote(session, safe='')}" if session else user_key

    def _sessions_key(self, user: str) -> str:
        return f"{self.prefix}:s:{quote(user, safe='')}"

    @contextmanager
    def _reachable(self) -> Iterator[None]:
        try:
            yield
        except self._errors as exc:
            raise ServiceBusy(
                f"The conversation memory's Redis ({self.where}) cannot be reached: {exc}.",
                "Try again in a minute; operators: check that Redis runs and the memory URL points at it.",
            ) from exc

    @contextmanager
    def _open(self, user: str, session: str) -> Iterator[_Transaction]:
        key = self._key(user, session)
        with self._reachable(), self.client.lock(f"{key}:lock", timeout=30, blocking_timeout=30):
            yield _RedisTransaction(self.client, key, self._sessions_key(user), session)

    def forget(self, user: str, session: str) -> int:
        """Delete one session of one user; the number of turns deleted."""
        _check_names(user, session)
        key = self._key(user, session)
        with self._reachable(), self.client.lock(f"{key}:lock", timeout=30, blocking_timeout=30):
            count = int(self.client.hlen(key))
            self.client.delete(key, f"{key}:seq")
            self.client.srem(self._sessions_key(user), session)
        return count

    def sessions(self, user: str) -> list[str]:
        """The user's session names, sorted."""
        with self._reachable():
            names = cast(set[str], self.client.smembers(self._sessions_key(user)))
            # A session whose turns were all evicted or never stored is not listed.
            return sorted(name for name in names if self.client.exists(self._key(user, name)))


def _redis_location(url: str) -> str:
    """``host:port/db`` of a Redis URL, without its password, for messages."""
    parts = urlsplit(url)
    return f"{parts.hostname or parts.path}:{parts.port or 6379}{parts.path if parts.hostname else ''}"


def open_memory(root: Path, url: str | None = None, *, max_turns: int = DEFAULT_MAX_TURNS) -> MemoryStore:
    """The conversation store a deployment configured.

    Args:
        root: The artifacts folder; the SQLite default is ``<root>/.ask/memory.sqlite3``.
        url: ``redis://…`` (or ``rediss://``, ``unix://``) for Redis; a file path or ``sqlite:///path`` for SQLite
            elsewhere. Defaults to the SQLite file under ``root``.
        max_turns: Cap per user and session.
    """
    if not url:
        return SQLiteMemory(root / DEFAULT_PATH, max_turns=max_turns)
    scheme = urlsplit(url).scheme
    if scheme in REDIS_SCHEMES:
        return RedisMemory(url, max_turns=max_turns)
    if scheme == "sqlite":
        return SQLiteMemory(Path(url.removeprefix("sqlite://")), max_turns=max_turns)
    if scheme and len(scheme) > 1:  # one letter is a Windows drive, not a scheme
        raise ConfigError(
            f"Conversation memory URL {url!r} is neither redis:// nor sqlite:// nor a file path.",
            "Set it to redis://host:6379/0, sqlite:///path/memory.sqlite3 or a file path.",
        )
    return SQLiteMemory(Path(url).expanduser(), max_turns=max_turns)


__all__ = [
    "DEFAULT_POLICY",
    "MemoryPolicy",
    "MemoryStore",
    "RedisMemory",
    "Role",
    "SQLiteMemory",
    "Turn",
    "open_memory",
    "relevance",
    "score_importance",
    "turn_weight",
]
