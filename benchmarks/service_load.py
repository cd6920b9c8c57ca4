"""Measure the service under load: N jobs submitted at once over HTTP, run to completion on the offline model.

A live server (uvicorn on a loopback port, in-process worker pool) gets all jobs at the same moment from N client
threads, alternating two datasets; each job auto-approves its plan. The clock runs from the first submission to the
last ``completed`` event read over SSE. Afterwards every job is checked to be completed with its own artifacts, and a
second user is checked to see none of them.

Usage::

    python benchmarks/service_load.py [--jobs 8] [--workers 8] [--keep ARTIFACTS_DIR]

The last line is exactly ``jobs=<n> workers=<w> wall_s=<total> mean_job_s=<mean per job>``.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--keep", type=Path, default=None, help="Artifacts root to keep (default: a temp folder).")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    with tempfile.TemporaryDirectory(prefix="insightloom-load-") as tmp:
        root = args.keep or Path(tmp) / "artifacts"
        settings = Settings(artifacts=root).with_provider("offline")
        app = create_app(settings, ServiceConfig(tokens=TOKENS, workers=args.workers), cwd=Path(tmp))
        results: dict[int, dict] = {}
        start = threading.Event()
        with ThreadedServer(app) as server:
            threads = [
                threading.Thread(target=run_job, args=(server.url, DATASETS[i % 2], results, i, start))
                for i in range(args.jobs)
            ]
            for thread in threads:
                thread.start()
            began = time.perf_counter()
            start.set()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - began
            problems = check(root, server.url, results)
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
