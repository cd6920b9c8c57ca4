"""Measure the script runner's overhead: warm fork server versus cold subprocesses, in the same run.

The measured script does trivial work after the heavy imports (pandas, numpy, matplotlib; a 100-row frame,
one groupby, one printed number; no drawing), so its wall time is almost all runner overhead. Runs are
interleaved warm/cold so that machine load affects both paths alike.

Usage::

    python benchmarks/runner_overhead.py [--n 15] [--concurrent-jobs 8]

Both runners use the per-job bubblewrap sandbox where it works (the product's default), so the figures include
isolation. It also prints how long a job's sandboxed server takes to start (``server_start_ms``), how long a job's
first script waits when nothing started the server earlier (``first_script_ms``), and the server's proportional
resident memory per job (``server_pss_mb``: PSS of every process in the job's sandbox, shared pages split fairly).

The last line is exactly ``warm_ms=<median> cold_ms=<median> ratio=<cold/warm>`` for the trivial script.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from insightloom.execution import ColdRunner, Limits, WarmRunner

logger = logging.getLogger(__name__)

TRIVIAL = """\
import matplotlib
import numpy as np
import pandas as pd

frame = pd.DataFrame({"group": np.arange(100) % 7, "value": np.arange(100, dtype=float)})
print(frame.groupby("group")["value"].sum().max())
"""

CHART = """\
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

frame = pd.DataFrame({"x": np.arange(100), "y": np.sin(np.arange(100) / 10)})
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(frame["x"], frame["y"])
ax.set_title("Benchmark chart")
fig.savefig("charts/bench.png", dpi=150)
plt.close(fig)
print("saved")
"""


def make_job(root: Path, name: str) -> Path:
    """A minimal job folder with the benchmark scripts in code/."""
    job = root / name
    (job / "code").mkdir(parents=True)
    (job / "charts").mkdir()
    (job / "code" / "trivial.py").write_text(TRIVIAL)
    (job / "code" / "chart.py").write_text(CHART)
    return job


def timed(runner: WarmRunner | ColdRunner, job: Path, script: str) -> float:
    """Wall milliseconds of one run as the caller sees it; fails loudly if the script failed."""
    started = time.perf_counter()
    result = runner.run(job / "code" / script, job, Limits(timeout_s=120))
    elapsed = (time.perf_counter() - started) * 1000
    if not result.ok:
        raise SystemExit(f"{runner.name} run of {script} failed: {result.summary(lines_written=0)}")
    return elapsed


def sandbox_pss_mb(pid: int | None) -> float:
    """Proportional set size of ``pid`` and all its descendants, in MiB (0 when unknown)."""
    if pid is None:
        return 0.0
    total_kb, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/smaps_rollup") as handle:
                total_kb += next(int(line.split()[1]) for line in handle if line.startswith("Pss:"))
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(x) for x in (task / "children").read_text().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total_kb / 1024


def first_script(root: Path, samples: int = 3) -> tuple[float, float, float]:
    """(first-script wait, server start, server PSS) medians over fresh jobs whose server was not started early."""
    waits, starts, pss = [], [], []
    for index in range(samples):
        runner = WarmRunner()
        job = make_job(root, f"first{index}")
        try:
            waits.append(timed(runner, job, "trivial.py"))
            starts.append(runner.server_start_ms(job) or 0.0)
            pss.append(sandbox_pss_mb(runner.server_pid))
        finally:
            runner.shutdown()
    return statistics.median(waits), statistics.median(starts), statistics.median(pss)


def concurrent_median(runner: WarmRunner, root: Path, jobs: int, per_job: int) -> float:
    """Median per-script wall time when ``jobs`` threads (one job folder each) run scripts at once."""
    times: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(jobs)

    def worker(index: int) -> None:
        job = make_job(root, f"concurrent{index}")
        barrier.wait()
        for _ in range(per_job):
            elapsed = timed(runner, job, "trivial.py")
            with lock:
                times.append(elapsed)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=15, help="scripts per path (interleaved)")
    parser.add_argument("--concurrent-jobs", type=int, default=8)
    parser.add_argument("--per-job", type=int, default=5, help="scripts per concurrent job")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="insightloom-bench-"))
    warm, cold = WarmRunner(), ColdRunner()
    try:
        job = make_job(root, "main")
        warm.start(job)
        timed(warm, job, "trivial.py")  # first run after start-up is not overhead
        print(f"isolation: {'per-job bubblewrap sandbox' if warm.sandboxed else 'shared server, no sandbox'}")
        warm_ms: list[float] = []
        cold_ms: list[float] = []
        for _ in range(args.n):
            warm_ms.append(timed(warm, job, "trivial.py"))
            cold_ms.append(timed(cold, job, "trivial.py"))
        warm_med, cold_med = statistics.median(warm_ms), statistics.median(cold_ms)
        print(f"trivial script, n={args.n} each, interleaved")
        print(f"  warm: median {warm_med:.1f} ms  (min {min(warm_ms):.1f}, max {max(warm_ms):.1f})")
        print(f"  cold: median {cold_med:.1f} ms  (min {min(cold_ms):.1f}, max {max(cold_ms):.1f})")
        conc = concurrent_median(warm, root, args.concurrent_jobs, args.per_job)
        print(f"{args.concurrent_jobs} jobs at once (warm): median {conc:.1f} ms per script")
        chart_warm = statistics.median(timed(warm, job, "chart.py") for _ in range(3))
        chart_cold = timed(cold, job, "chart.py")
        print(f"chart script (draw + save one PNG): warm {chart_warm:.1f} ms, cold {chart_cold:.1f} ms")
        wait_ms, start_ms, pss_mb = first_script(root)
        print(f"server_start_ms={start_ms:.0f} first_script_ms={wait_ms:.0f} server_pss_mb={pss_mb:.0f}")
        print(f"warm_ms={warm_med:.1f} cold_ms={cold_med:.1f} ratio={cold_med / warm_med:.1f}")
    finally:
        warm.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
