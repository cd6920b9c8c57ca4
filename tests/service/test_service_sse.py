"""The SSE stream over events.jsonl: frames, replay after Last-Event-ID, live tail, keepalive and its end."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from insightloom.events import EventLog
from insightloom.service.sse import KEEPALIVE, EventHub, event_stream

STEP_S = 10.0  # upper bound for any single frame to arrive


def reader(path: Path) -> Callable[[int], bytes]:
    """The stream's reader over a plain file: its bytes after an offset (none while it does not exist)."""

    def read(offset: int) -> bytes:
        try:
            with path.open("rb") as fh:
                fh.seek(offset)
                return fh.read()
        except FileNotFoundError:
            return b""

    return read


def parse(chunk: bytes) -> dict[str, str]:
    fields = {}
    for line in chunk.decode().strip().splitlines():
        name, _, value = line.partition(": ")
        fields[name] = value
    return fields


async def collect(stream: AsyncIterator[bytes]) -> list[bytes]:
    return [chunk async for chunk in stream]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, STEP_S * 3))


def finished_log(tmp_path: Path) -> EventLog:
    log = EventLog(tmp_path / "events.jsonl", "job-1")
    log.emit("stage", name="plan")
    log.emit("plan_review_request", plan="# Plan 한국어", revision=0, max_revisions=3)
    log.emit("stage", name="supervise")
    log.emit("completed", report="final_report.docx")
    return log


def test_frames_replay_everything_then_end_at_the_terminal_event(tmp_path: Path) -> None:
    log = finished_log(tmp_path)

    async def main() -> list[bytes]:
        return await collect(event_stream(reader(log.path), asyncio.Event(), keepalive_s=60, poll_s=60))

    chunks = run(main())
    assert chunks[0] == b"retry: 2000\n\n"
    frames = [parse(c) for c in chunks[1:]]
    lines = log.path.read_text(encoding="utf-8").splitlines()
    assert [f["id"] for f in frames] == ["1", "2", "3", "4"]
    assert [f["event"] for f in frames] == ["stage", "plan_review_request", "stage", "completed"]
    assert [f["data"] for f in frames] == lines  # data is the whole event object, one JSON line
    assert json.loads(frames[1]["data"])["data"]["plan"] == "# Plan 한국어"


def test_last_event_id_replays_only_what_was_missed(tmp_path: Path) -> None:
    log = finished_log(tmp_path)

    async def main(after: int) -> list[bytes]:
        return await collect(event_stream(reader(log.path), asyncio.Event(), after_id=after, keepalive_s=60, poll_s=60))

    assert [parse(c)["id"] for c in run(main(2))[1:]] == ["3", "4"]
    assert run(main(4)) == [b"retry: 2000\n\n"]  # a finished job: nothing missed, the stream ends at once


def test_live_events_wake_the_stream_and_silence_brings_keepalives(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", "job-1")
    log.emit("plan_review_request", plan="# Plan", revision=0, max_revisions=3)
    hub = EventHub()
    hub.attach(log)

    async def main() -> list[bytes]:
        with hub.waiter("job-1") as wake:
            stream = event_stream(reader(log.path), wake, keepalive_s=0.05, poll_s=30)
            seen = [await asyncio.wait_for(anext(stream), STEP_S) for _ in range(3)]
            assert seen[2] == KEEPALIVE  # awaiting review is not terminal: the stream stays open
            writer = threading.Thread(target=log.emit, args=("cancelled",))
            writer.start()  # another thread appends; the hub wakes the stream long before poll_s
            rest = await asyncio.wait_for(collect(stream), STEP_S)
            writer.join()
            return seen + rest

    chunks = run(main())
    kinds = [parse(c).get("event") for c in chunks if c != KEEPALIVE]
    assert kinds == [None, "plan_review_request", "cancelled"]


def test_a_half_written_line_waits_for_its_end(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    line = json.dumps({"id": 1, "ts": "t", "job_id": "j", "kind": "failed", "data": {"error": "x"}})
    path.write_text(line[:20], encoding="utf-8")

    async def main() -> list[bytes]:
        stream = event_stream(reader(path), asyncio.Event(), keepalive_s=0.05, poll_s=0.01)
        first = [await anext(stream), await anext(stream)]
        assert first[1] == KEEPALIVE  # nothing complete yet
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line[20:] + "\n")
        return first + await collect(stream)

    chunks = run(main())
    assert parse(chunks[-1])["event"] == "failed" and parse(chunks[-1])["data"] == line


def test_the_stream_ends_when_the_server_stops(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl", "job-1")
    log.emit("stage", name="supervise")
    stop = threading.Event()

    async def main() -> list[bytes]:
        wake = asyncio.Event()
        stream = event_stream(reader(log.path), wake, keepalive_s=30, poll_s=30, stopping=stop.is_set)
        first = [await anext(stream), await anext(stream)]
        stop.set()
        wake.set()
        return first + await collect(stream)

    assert len(run(main())) == 2
