"""Benchmark: the wall time of the commands that answer at once (``--help``, ``jobs``, ``schema``, ``doctor``), each in
a fresh interpreter, as a user pays it.

With ``--against <checkout>/src`` the same commands run from that checkout too, interleaved run by run with this
one, so the two medians are measured side by side on the same (shared, noisy) machine and their ratio means
something. One line per command: ``command=<c> runs=<n> median_s=<s> [against_s=<s> ratio=<this/against>]``.

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
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "insightloom", *args], env=env, capture_output=True, check=False)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per command (the median is printed)")
    parser.add_argument("--against", help="another checkout's src folder, timed interleaved with this one")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for command in COMMANDS:
            cmd = [a.replace("{tmp}", tmp) for a in command]
            this: list[float] = []
            other: list[float] = []
            timed(cmd, None)  # the first run warms the file cache for both
            for _ in range(args.runs):
                this.append(timed(cmd, None))
                if args.against:
                    other.append(timed(cmd, str(Path(args.against).resolve())))
            mine = statistics.median(this)
            line = f"command={cmd[0]} runs={args.runs} median_s={mine:.3f}"
            if other:
                theirs = statistics.median(other)
                line += f" against_s={theirs:.3f} ratio={mine / theirs:.3f}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
