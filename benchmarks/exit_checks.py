"""Measure what running the tracked checks at script end costs, through the real warm runner.

Two scripts do the same demo-like work on the demo dataset (load it, compute ten numbers, track them); one passes a
DuckDB ``check`` with each number, the other tracks the same numbers without one, so the difference between the two
is exactly the exit checks (DuckDB connect, the Parquet view, one batched query). Runs are interleaved so that
machine load affects both alike.

Usage::

    python benchmarks/exit_checks.py [--n 15]

The last line is exactly ``with_checks_ms=<median> without_ms=<median> extra_ms=<median of paired differences>``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from insightloom.analysis_utils import write_utils_module
from insightloom.demo_data import generate_demo_frame
from insightloom.execution import Limits, WarmRunner

VIEW = "bakery_sales"

# (id, pandas expression, DuckDB check, unit): ten numbers like the offline Coder's KPI and breakdown scripts track.
NUMBERS = (
    ("total_revenue", 'df["Revenue"].sum()', 'SELECT SUM("Revenue") FROM data', "USD"),
    ("total_units", 'df["Units"].sum()', 'SELECT SUM("Units") FROM data', "count"),
    ("avg_revenue", 'df["Revenue"].mean()', 'SELECT AVG("Revenue") FROM data', "USD"),
    ("max_revenue", 'df["Revenue"].max()', 'SELECT MAX("Revenue") FROM data', "USD"),
    ("row_count", "len(df)", "SELECT COUNT(*) FROM data", "count"),
    ("regions", 'df["Region"].nunique()', 'SELECT COUNT(DISTINCT "Region") FROM data', "count"),
    (
        "catering_share",
        '100.0 * df.loc[df["Channel"] == "Catering", "Revenue"].sum() / df["Revenue"].sum()',
        'SELECT 100.0 * SUM("Revenue") FILTER (WHERE "Channel" = \'Catering\') / SUM("Revenue") FROM data',
        "%",
    ),
    ("median_units", 'df["Units"].median()', 'SELECT median("Units") FROM data', "count"),
    ("std_revenue", 'df["Revenue"].std()', 'SELECT stddev_samp("Revenue") FROM data', "USD"),
    ("corr_units_revenue", 'df["Units"].corr(df["Revenue"])', 'SELECT corr("Units", "Revenue") FROM data', "ratio"),
)


def script(with_checks: bool) -> str:
    """The benchmark script, tracking the ten numbers with or without their checks."""
    lines = [
        "from coder_analysis_utils import load_df, to_python_type, track_calculation",
        "",
        "df = load_df()",
    ]
    for calc_id, expression, check, unit in NUMBERS:
        extra = f", check={check!r}" if with_checks else ""
        lines.append(
            f"track_calculation({calc_id!r}, to_python_type({expression}), {calc_id!r}, {expression!r}, "
            f"'bakery_sales.csv', [], 'high', unit={unit!r}{extra})"
        )
    lines.append("print('tracked', len(df))")
    return "\n".join(lines) + "\n"


def make_job(root: Path) -> Path:
    """A job folder like intake leaves it: the demo table as Parquet, its profile, the helpers and both scripts."""
    job = root / "job"
    (job / "cache").mkdir(parents=True)
    generate_demo_frame().to_parquet(job / "cache" / f"{VIEW}.parquet", index=False)
    profile = {
        "tables": [{"view": VIEW, "file": f"{VIEW}.csv", "parquet": f"cache/{VIEW}.parquet"}],
        "aliases": {"data": VIEW},
    }
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    write_utils_module(job / "code")
    (job / "code" / "with_checks.py").write_text(script(True), encoding="utf-8")
    (job / "code" / "without_checks.py").write_text(script(False), encoding="utf-8")
    return job


def timed(runner: WarmRunner, job: Path, name: str) -> float:
    """Wall milliseconds of one run; fails loudly if the script (or one of its checks) failed."""
    started = time.perf_counter()
    result = runner.run(job / "code" / name, job, Limits(timeout_s=120))
    elapsed = (time.perf_counter() - started) * 1000
    if not result.ok:
        raise SystemExit(f"{name} failed: {result.summary(lines_written=0)}")
    if name == "with_checks.py" and f"checks: {len(NUMBERS)} verified" not in result.stdout:
        raise SystemExit(f"{name}: the exit checks did not run: {result.stdout!r}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=15, help="runs of each script (interleaved)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="insightloom-bench-"))
    runner = WarmRunner()
    try:
        job = make_job(root)
        runner.start(job)
        timed(runner, job, "with_checks.py")  # the first run after start-up is not what a script pays
        timed(runner, job, "without_checks.py")
        with_ms: list[float] = []
        without_ms: list[float] = []
        for index in range(args.n):
            order = (
                ("with_checks.py", "without_checks.py") if index % 2 == 0 else ("without_checks.py", "with_checks.py")
            )
            for name in order:
                (with_ms if name == "with_checks.py" else without_ms).append(timed(runner, job, name))
        extra = statistics.median(a - b for a, b in zip(with_ms, without_ms, strict=True))
        print(f"isolation: {'per-job bubblewrap sandbox' if runner.sandboxed else 'shared server, no sandbox'}")
        print(f"{len(NUMBERS)} tracked numbers, n={args.n} runs each, interleaved")
        print(f"  with checks:    median {statistics.median(with_ms):.1f} ms (min {min(with_ms):.1f})")
        print(f"  without checks: median {statistics.median(without_ms):.1f} ms (min {min(without_ms):.1f})")
        print(
            f"with_checks_ms={statistics.median(with_ms):.1f} without_ms={statistics.median(without_ms):.1f} "
            f"extra_ms={extra:.1f}"
        )
    finally:
        runner.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
