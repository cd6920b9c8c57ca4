"""Write the insightloom demo dataset (a thin wrapper around ``insightloom.demo_data``).

Usage: python scripts/make_demo_data.py OUT.csv [--seed 7] [--columns column_definitions.json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from insightloom.demo_data import generate_demo_csv, write_column_definitions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate the insightloom demo dataset.")
    parser.add_argument("path", type=Path, help="CSV file to write")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--columns", type=Path, default=None, help="also write column definitions JSON here")
    args = parser.parse_args(argv)
    out = generate_demo_csv(args.path, seed=args.seed)
    print(out)
    if args.columns is not None:
        print(write_column_definitions(args.columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
