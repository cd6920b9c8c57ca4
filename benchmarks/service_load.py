"""Measure the service under load: N jobs submitted at once over HTTP, run to completion on the offline model.

A live server (uvicorn on a loopback port) gets all jobs at the same moment from N client threads, alternating two
datasets; each job auto-approves its plan. The clock runs from the first submission to the last terminal event read
over SSE. Afterwards every job is checked to be completed with its own artifacts, and a second user is checked to
see none of them.

``--backend thread`` (default) runs the jobs in the server's own pool. ``--backend celery`` starts a real
``redis-server`` on loopback and ``--workers`` Celery worker processes (``python -m insightloom.service.celery_queue
worker``), and the server queues to them. ``--chaos`` then breaks two jobs mid-supervise: it kills one
worker's pool child (``kill -9``; Celery redelivers the item at once), then a whole worker, main process and child
(the other worker's sweeper picks its job up), and restarts that worker 3 s later, as a container restart policy
would.

Usage::

    python benchmarks/service_load.py [--jobs 8] [--workers 8] [--keep ARTIFACTS_DIR]
    python benchmarks/service_load.py --backend celery --workers 2 --jobs 8 [--chaos]

The last line is exactly ``jobs=<n> workers=<w> wall_s=<total> mean_job_s=<mean per job>`` (thread), or
``jobs=<n> completed=<n> workers=<n> wall_s=<t> redelivered=<n> duplicate_stages=<n>`` (celery), where
``duplicate_stages`` counts stages that had already completed (a later stage had started, per ``events.jsonl``) and
started again — re-entering the interrupted stage does not count — and ``redelivered`` counts messages the workers
logged as delivered more than once (Celery's ``redelivered`` flag, or the same task id and retry seen twice).
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "deploy"))  # the lane's process helpers

from insightloom.config import Settings
from insightloom.service import ServiceConfig, ThreadedServer, create_app
from insightloom.service.client import ServiceClient

logger = logging.getLogger(__name__)

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
DATASETS = (DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv", DATA / "yummy-food" / "yummy-food-market.csv")
TOKENS = {"bench-token-ana": "ana", "bench-token-ben": "ben"}
TERMINAL = ("completed", "needs_review", "failed", "cancelled")


def run_job(url: str, data: Path, results: dict[int, dict], index: int, start: threading.Event) -> None:
    """Submit one job when ``start`` fires and follow it over SSE to its end."""
    with ServiceClient(url, "bench-token-ana") as api:
        start.wait()
        began = time.perf_counter()
        job_id = api.submit([data], "Analyze this data and write a DOCX report", provider="offline", auto_approve=True)
        end = api.wait_for(job_id, TERMINAL, timeout=1800)[-1]
        results[index] = {"id": job_id, "data": data.name, "end": end["kind"], "seconds": time.perf_counter() - began}


def check(root: Path, url: str, results: dict[int, dict]) -> list[str]:
    """Problems found: a job not completed, artifacts naming another job's data, or a user seeing another's jobs."""
    problems = []
    for result in results.values():
        job = root / result["id"]
        if result["end"] != "completed":
            problems.append(f"{result['id']} ended {result['end']}")
            continue
        calcs = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]
        if {c["source_file"] for c in calcs} != {result["data"]}:
            problems.append(f"{result['id']}: calculations cite {sorted({c['source_file'] for c in calcs})}")
        if not (job / "final_report.docx").is_file():
            problems.append(f"{result['id']}: no final_report.docx")
    if len({r["id"] for r in results.values()}) != len(results):
        problems.append("two submissions got the same job id")
    with ServiceClient(url, "bench-token-ben") as other:
        if other.jobs():
            problems.append("the second user sees jobs of the first")
    return problems


def submit_all(app: Any, root: Path, jobs: int) -> tuple[dict[int, dict], float, list[str]]:
    """Serve ``app``, submit ``jobs`` jobs at once and follow each to its end; results, wall seconds, problems."""
    results: dict[int, dict] = {}
    start = threading.Event()
    with ThreadedServer(app) as server:
        threads = [
            threading.Thread(target=run_job, args=(server.url, DATASETS[i % 2], results, i, start)) for i in range(jobs)
        ]
        for thread in threads:
            thread.start()
        began = time.perf_counter()
        start.set()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
        problems = check(root, server.url, results)
    return results, wall, problems


def duplicate_stages(events: list[dict]) -> int:
    """Stages that had completed (a later one had started) and started again; re-entering the last one is allowed.

    ``plan`` and ``review`` are counted per plan revision: a ``plan`` straight after a ``review`` is the reviewer's
    feedback being applied, which opens the next revision.
    """
    seen: set[tuple[str, int]] = set()
    last: tuple[str, int] | None = None
    revision = duplicates = 0
    for event in events:
        if event["kind"] != "stage":
            continue
        name = event["data"]["name"]
        if name == "plan" and last is not None and last[0] == "review":
            revision += 1
        key = (name, revision if name in ("plan", "review") else 0)
        if key in seen and key != last:
            duplicates += 1
        seen.add(key)
        last = key
    return duplicates


def redeliveries(logs: list[str]) -> int:
    """Messages logged as delivered more than once: the redelivered flag, or one task id and retry seen twice."""
    pattern = re.compile(r"delivery task=(\S+) key=\S+ job=\S+ redelivered=(True|False) retries=(\d+)")
    seen: dict[tuple[str, str], int] = {}
    flagged: set[tuple[str, str]] = set()
    for text in logs:
        for task, flag, retries in pattern.findall(text):
            seen[(task, retries)] = seen.get((task, retries), 0) + 1
            if flag == "True":
                flagged.add((task, retries))
    return len(flagged | {key for key, count in seen.items() if count > 1})


def _runner(workers: list[Any], job_id: str) -> Any:
    """The worker whose log holds the latest delivery of the job, or None."""
    marks = [(w.log().rfind(f"job={job_id} "), w) for w in workers]
    position, worker = max(marks, key=lambda mark: mark[0])
    return worker if position >= 0 else None


def _in_supervise(root: Path, skip: set[str]) -> str | None:
    for events in sorted(root.glob("*/events.jsonl")):
        text = events.read_text(encoding="utf-8")
        if events.parent.name not in skip and '"name": "supervise"' in text and '"name": "done"' not in text:
            return events.parent.name
    return None


def chaos(root: Path, workers: list[Any], done: threading.Event, killed: list[str]) -> None:
    """Two failures mid-supervise: kill -9 one worker's pool child (Celery redelivers its item at once), then kill -9
    a whole worker, main process and child, as when its container dies (the other worker's sweeper recovers the
    job), and restart it 3 s later as a restart policy would."""
    hit: set[str] = set()
    for whole in (False, True):
        while not done.wait(0.05):
            job_id = _in_supervise(root, hit)
            runner = _runner(workers, job_id) if job_id else None
            if job_id is None or runner is None or (whole is False and not runner.children()):
                continue
            hit.add(job_id)
            if whole:
                runner.kill()
                killed.append(f"the whole worker {runner.name} mid-supervise of {job_id}, restarted 3 s later")
                time.sleep(3)
                runner.start()
            else:
                runner.kill_child()
                killed.append(f"the pool child of {runner.name} mid-supervise of {job_id}")
            break


def run_celery(args: argparse.Namespace, tmp: Path) -> int:
    from celery_lane import CeleryWorker, RedisServer, worker_env

    from insightloom.service.celery_queue import CeleryJobQueue

    root = args.keep or tmp / "artifacts"
    root.mkdir(parents=True, exist_ok=True)
    redis = RedisServer(tmp / "redis").start()
    workers = [
        CeleryWorker(f"w{n}", worker_env(redis.url, str(root), tmp, PYTHONWARNINGS="ignore"), tmp)
        for n in range(1, args.workers + 1)
    ]
    done, killed = threading.Event(), list[str]()
    try:
        for worker in workers:
            worker.start()
        settings = Settings(artifacts=root).with_provider("offline")
        app = create_app(settings, ServiceConfig(tokens=TOKENS, poll_s=0.2), queue=CeleryJobQueue(redis.url), cwd=tmp)
        monkey = threading.Thread(target=chaos, args=(root, workers, done, killed), daemon=True)
        if args.chaos:
            monkey.start()
        results, wall, problems = submit_all(app, root, args.jobs)
    finally:
        done.set()
        for worker in workers:
            worker.kill()
        redis.stop()
    for line in killed:
        print(f"chaos: killed {line}")
    for index in sorted(results):
        r = results[index]
        print(f"{r['id']}  {r['data']:<40} {r['end']:<10} {r['seconds']:6.1f}s")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    duplicates = sum(duplicate_stages(read_events(root / r["id"])) for r in results.values())
    completed = sum(r["end"] == "completed" for r in results.values())
    redelivered = redeliveries([w.log() for w in workers])
    print(
        f"jobs={args.jobs} completed={completed} workers={args.workers} wall_s={wall:.1f} "
        f"redelivered={redelivered} duplicate_stages={duplicates}"
    )
    return 1 if problems or completed != args.jobs or duplicates else 0


def read_events(job: Path) -> list[dict]:
    lines = (job / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--backend", choices=["thread", "celery"], default="thread")
    parser.add_argument("--chaos", action="store_true", help="celery: kill -9 one worker mid-run, then restart it")
    parser.add_argument("--keep", type=Path, default=None, help="Artifacts root to keep (default: a temp folder).")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    with tempfile.TemporaryDirectory(prefix="insightloom-load-") as tmp:
        if args.backend == "celery":
            return run_celery(args, Path(tmp))
        root = args.keep or Path(tmp) / "artifacts"
        settings = Settings(artifacts=root).with_provider("offline")
        app = create_app(settings, ServiceConfig(tokens=TOKENS, workers=args.workers), cwd=Path(tmp))
        results, wall, problems = submit_all(app, root, args.jobs)
    for index in sorted(results):
        r = results[index]
        print(f"{r['id']}  {r['data']:<40} {r['end']:<10} {r['seconds']:6.1f}s")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    if len(results) != args.jobs:
        print(f"PROBLEM: only {len(results)} of {args.jobs} jobs reported back")
        return 1
    mean = statistics.mean(r["seconds"] for r in results.values())
    print(f"jobs={args.jobs} workers={args.workers} wall_s={wall:.1f} mean_job_s={mean:.1f}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
