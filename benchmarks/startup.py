"""Benchmark: the wall time of the commands that answer at once (``--help``, ``jobs``, ``schema``, ``doctor``), each in
a fresh interpreter, as a user pays it, beside ``python -c pass`` (the interpreter's own start-up).

Every command and the bare interpreter run alternately, run by run, so the medians are measured side by side on
the same (shared, noisy) machine. With ``--against <checkout>/src`` the commands run from that checkout too,
interleaved the same way. One line per command, ``command=<c> runs=<n> median_s=<s> [against_s=<s>
ratio=<this/against>]``, then the last line ``help_ms=<median of --help> python_ms=<median of python -c pass>``.

Usage: python benchmarks/startup.py [--runs 7] [--against /path/to/other/src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = (["--help"], ["jobs", "--artifacts", "{tmp}"], ["schema"], ["doctor"])


def timed(args: list[str], src: str | None) -> float:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src  # ahead of the editable install: that checkout's package
    command = [sys.executable, "-c", "pass"] if args == ["python"] else [sys.executable, "-m", "insightloom", *args]
    started = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, check=False)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per command (the median is printed)")
    parser.add_argument("--against", help="another checkout's src folder, timed interleaved with this one")
    args = parser.parse_args(argv)
    medians: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for command in COMMANDS:
            cmd = [a.replace("{tmp}", tmp) for a in command]
            this: list[float] = []
            other: list[float] = []
            bare: list[float] = []
            timed(cmd, None)  # the first run warms the file cache for both
            for _ in range(args.runs):
                this.append(timed(cmd, None))
                bare.append(timed(["python"], None))
                if args.against:
                    other.append(timed(cmd, str(Path(args.against).resolve())))
            mine = statistics.median(this)
            medians[cmd[0]] = mine
            medians.setdefault("python", statistics.median(bare))
            line = f"command={cmd[0]} runs={args.runs} median_s={mine:.3f}"
            if other:
                theirs = statistics.median(other)
                line += f" against_s={theirs:.3f} ratio={mine / theirs:.3f}"
            print(line, flush=True)
    print(f"help_ms={medians['--help'] * 1000:.0f} python_ms={medians['python'] * 1000:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
