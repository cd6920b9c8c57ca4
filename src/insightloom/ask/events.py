"""Follow-up telemetry: ``ask_events.jsonl`` beside the job, and the ``ask`` section of ``usage.json``.

The job's own ``events.jsonl`` and its closed set of kinds stay as they are (the job already ended), so the stages of
each question go to their own file, one JSON object a line (``contracts/ask_event.schema.json``). Both files are
written beside the job and never through a link planted in the job folder.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..fileio import append_text, read_json, read_text, write_json
from ..telemetry.usage import AgentUsage
from ..timeutil import utc_now

ASK_EVENTS_FILE = "ask_events.jsonl"
USAGE_FILE = "usage.json"
#: The stages of one question, in the order they can happen.
ASK_EVENT_KINDS: tuple[str, ...] = ("retrieved", "reranked", "abstained", "answered", "analyzed", "requested")
_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock(path: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(path.resolve(), threading.Lock())


def ask_event(job_id: str, ask_id: str, seq: int, kind: str, **data: Any) -> dict[str, Any]:
    """One line of ``ask_events.jsonl``.

    Args:
        job_id: The job the question was asked about.
        ask_id: The question's id, shared by its stages (and by every job a cross-job question read).
        seq: The stage's number within the question, from 1.
        kind: One of ``ASK_EVENT_KINDS``.
        data: The stage's details.

    Raises:
        ValueError: ``kind`` is not one of ``ASK_EVENT_KINDS``.
    """
    if kind not in ASK_EVENT_KINDS:
        raise ValueError(f"unknown ask event kind {kind!r}; use one of {', '.join(ASK_EVENT_KINDS)}")
    return {"ts": utc_now(), "job_id": job_id, "ask_id": ask_id, "seq": seq, "kind": kind, "data": data}


def append_ask_events(job_dir: Path, events: list[dict[str, Any]]) -> None:
    """Append ``events`` to the job's ``ask_events.jsonl`` in one write (a question's stages stay together)."""
    if not events:
        return
    text = "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in events)
    path = job_dir / ASK_EVENTS_FILE
    with _lock(path):
        append_text(path, text, beneath=job_dir)


def read_ask_events(job_dir: Path) -> list[dict[str, Any]]:
    """Every event in the job's ``ask_events.jsonl`` (empty when no question was asked)."""
    path = job_dir / ASK_EVENTS_FILE
    if not path.is_file():
        return []

    return [json.loads(line) for line in read_text(path, beneath=job_dir).splitlines() if line.strip()]


def record_ask_usage(job_dir: Path, usage: AgentUsage, *, retrieval: str, abstained: bool) -> dict[str, Any]:
    """Add one question's model usage to the ``ask`` section of the job's ``usage.json``; the section as written.

    The section has the same token and cost keys as every agent's, plus ``questions``, ``abstained`` and the
    retrieval mode of the last question (``bm25`` offline, ``hybrid`` with embeddings). The job's own ``agents`` and
    ``total`` are left as they are: they account for the job's run.
    """
    path = job_dir / USAGE_FILE
    with _lock(path):
        data: dict[str, Any] = read_json(path, beneath=job_dir) if path.is_file() else {}
        section = dict(data.get("ask") or {})
        totals = AgentUsage(**{key: section.get(key, 0) for key in asdict(AgentUsage())})
        totals.add(usage)
        section.update(asdict(totals))
        section["cost_usd"] = round(totals.cost_usd, 6)
        section["questions"] = int(section.get("questions", 0)) + 1
        section["abstained"] = int(section.get("abstained", 0)) + int(abstained)
        section["retrieval"] = retrieval
        data["ask"] = section
        write_json(path, data, beneath=job_dir)
    return section
