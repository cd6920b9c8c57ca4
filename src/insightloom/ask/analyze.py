"""Verified new numbers for a follow-up question (``insightloom ask --analyze``): a bounded follow-up analysis.

When an answer needs a number no fragment holds, the Coder runs once more, as a tool agent, on a SCRATCH copy of the
job (``data/``, ``cache/``, ``code/``, ``calculation_metadata.json``; regular files copied, never linked, into a
fresh ``mkdtemp`` folder outside the job, removed afterwards), so its scripts never see the real job folder and cannot
rewrite its calculation_metadata.json. A link anywhere in what is copied refuses the follow-up (it could point into
another job), and the job's id comes from its folder, never from job.json alone (:meth:`JobFolder.open`).
Then:

- the new calculation ids (ids the job does not have) are re-computed by the Validator's DuckDB checks against the
  REAL job's Parquet cache, which no follow-up script could touch (a script could rewrite the scratch copy's cache);
- under the job's lock, only the new ids whose check matched are appended to the job's calculation_metadata.json and
  citations.json (``verified``, method ``check``); an id the job already has is refused, so no existing value ever
  changes;
- the job's knowledge is re-indexed (:func:`insightloom.ask.fragments.index_job`) so the answer can cite them;
- ``ask/analyses/<n>.json`` records the question, the plan item, the scripts run, what was merged or refused and why,
  the seconds and the cost.

The follow-up is bounded by the job's usual ceilings (model calls, tokens, running seconds) and by a per-question
cost cap. The Coder's plan section holds one item: the catalog wording (:mod:`insightloom.analysis.catalog`) when the
question maps onto a standard analysis, which the offline Coder understands, else the question itself, which an LLM
Coder can answer with its own tracked script and the offline Coder reports as not possible. A question that filters
rows by one category value it names ("the West region") and/or the data's last day, week, month or year ("the last
month") maps onto the catalog's filtered KPI (a total, or an average when it asks for one).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analysis import choices
from ..analysis.catalog import AnalysisSpec
from ..analysis_utils.module import write_utils_module
from ..config import Settings
from ..errors import BadInputError, BudgetExceeded, InsightloomError, UnsafePathError
from ..fileio import copy_regular_tree, list_regular_files, read_json, read_text, write_json
from ..fonts import has_cjk
from ..joblock import JobLock
from ..jobs import JobFolder
from ..runtime import JobRuntime
from ..state import SharedState
from ..statistics.parse import UNEXPRESSED, Refusal, parse_question
from ..statistics.request import StatRequest
from ..statistics.request import item_text as stat_item
from ..telemetry import UsageLedger
from ..validation import VERIFIED, values_match
from ..validation.checks import run_checks
from ..validation.claim_checks import CLAIM_NEEDS_STAT, is_claim_without_test, is_stat_check, verify_claims
from ..validation.compare import json_safe
from ..validation.jobfiles import CITATIONS_FILE, METADATA_FILE, load_calculations, load_citations, load_views
from ..workflow.pipeline import our_error

logger = logging.getLogger(__name__)

#: The per-question cost cap when none is configured (proposed setting: ``Settings.ask_max_cost_usd``).
DEFAULT_CAP_USD = 1.0
#: Job statuses a follow-up may run on: the job's own work is over, its numbers validated.
FINISHED = ("completed", "needs_review")
#: What the scratch copy holds: what scripts read (data, the Parquet cache, the helpers in code/) and the tracked
#: calculations, so the Coder's helpers see which ids exist.
COPIED_DIRS = ("data", "cache", "code")
COPIED_FILES = (METADATA_FILE, "job.json")
RECORDS_DIR = ("ask", "analyses")
#: The recipe op of a statistics-catalog part without a SQL check (``analysis_utils.statistics``).
STAT_RECIPE = "statistic"

# "the last month", "previous week", "latest quarter"; "in March"; "2024-12": a period filter.
_PERIOD_FILTER = re.compile(
    r"\b(?:last|latest|previous|past|final|first|this)\s+(?:day|week|month|quarter|year)\b|"
    r"\bin\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b\d{4}-\d{2}\b|지난\s*달|최근\s*\S+|\d+월",
    re.IGNORECASE,
)
# The period filters the filtered KPI expresses: the data's last day, week, month or year ("지난 달": last month).
_LAST_PERIOD = re.compile(
    r"\b(?:last|latest|final|most\s+recent)\s+(day|week|month|year)\b|(?:지난|마지막|최근)\s*(?:한\s*)?(날|주|달|해)",
    re.IGNORECASE,
)
_KO_PERIODS = {"날": "day", "주": "week", "달": "month", "해": "year"}
# Particles a Korean question attaches to a name ("네이바의" names 네이바), longest first.
_KO_PARTICLES = "에서|에게|으로|의|은|는|이|가|을|를|에|로|와|과|도|만"
_PERIOD_WORDS = {
    "day": ("daily", "per day", "일별"),
    "week": ("weekly", "per week", "주별"),
    "month": ("monthly", "per month", "월별"),
    "year": ("yearly", "per year", "annual", "연도별"),
}
_KIND_WORDS = {
    "correlation": ("correlat", "relationship", "상관"),
    "distribution": ("distribution", "median", "percentile", "outlier", "분포", "이상치"),
    "trend": ("trend", "over time", "추이", *(w for words in _PERIOD_WORDS.values() for w in words)),
    "mean": ("average", "mean", "avg", "평균"),
}


@dataclass(frozen=True)
class FollowupTask:
    """The Coder's one plan item for a question.

    Attributes:
        item: The plan item: a catalog wording, or the question itself when no standard analysis expresses it.
        spec: The standard analysis the item names, or None.
        missing: What the catalog lacks to express the question (empty when ``spec`` or ``request`` is set).
        request: The statistics request the item carries (``insightloom.statistics``), or None.
        refusal: Why the question is no request the catalog can compute (an operation or a column it lacks).
    """

    item: str
    spec: AnalysisSpec | None
    missing: str = ""
    request: StatRequest | None = None
    refusal: Refusal | None = None


@dataclass
class FollowupResult:
    """What a follow-up analysis did.

    Attributes:
        question: The user's question.
        item: The plan item the Coder was given.
        new_ids: Calculation ids merged into the job (verified by DuckDB), in tracking order.
        refused: Id -> why it was not merged (existing id, no check, check failed ...).
        missing: What the offline catalog lacks to express the question (empty when it could).
        stopped: Why the Coder stopped early (a ceiling or the cost cap), else empty.
        seconds: Wall time of the whole follow-up.
        cost_usd: Estimated cost of its model calls.
        tokens: Every token its model calls processed.
        model_calls: Its model calls.
        record: The record file, relative to the job folder.
    """

    question: str
    item: str
    new_ids: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    missing: str = ""
    stopped: str = ""
    seconds: float = 0.0
    cost_usd: float = 0.0
    tokens: int = 0
    model_calls: int = 0
    record: str = ""
    request: dict[str, Any] | None = None


# ---------------------------------------------------------------------------------------------------------------
# The question as a plan item


def _named(name: str, question: str) -> bool:
    """Whether the question names ``name`` as a word (case-insensitive; ``_`` read as a space), a Korean particle
    allowed after it ("네이바의", "전환수는")."""
    words = re.escape(name.replace("_", " ").casefold()).replace(r"\ ", r"[\s_]+")
    end = rf"(?:{_KO_PARTICLES})?(?!\w)"
    return len(name) >= 2 and re.search(rf"(?<!\w){words}{end}", question.casefold()) is not None


def _named_values(table: dict[str, Any], question: str) -> list[tuple[str, str]]:
    """``(column, value)`` for each category value the question names ("the West region"). A value several columns
    hold ('yes' of every yes/no column) counts only for the columns the question names too."""
    found = []
    for col in table.get("columns", []):
        if col.get("role") == "category" and choices.usable(col):
            found += [
                (col["name"], str(v["value"])) for v in col.get("top_values") or [] if _named(str(v["value"]), question)
            ]
    shared = {v for _c, v in found if sum(1 for _o, w in found if w == v) > 1}
    return [(c, v) for c, v in found if v not in shared or _named(c, question)]


def _has(question: str, words: tuple[str, ...]) -> bool:
    text = question.casefold()
    return any(word in text for word in words)


def _period(question: str, table: dict[str, Any]) -> str:
    return next((p for p, words in _PERIOD_WORDS.items() if _has(question, words)), choices.period_for(
        choices.column(table, choices.date_column(table))))  # fmt: skip


def _spec(question: str, table: dict[str, Any], measures: list[str], cats: list[str]) -> AnalysisSpec | None:
    """The standard analysis the question asks for, from its words and the columns it names."""
    view = None  # the first table: the ``data`` alias
    measure = measures[0] if measures else None
    if _has(question, _KIND_WORDS["correlation"]) and len(measures) >= 2:
        return AnalysisSpec("correlation", view, measures=tuple(measures[:2]))
    if _has(question, _KIND_WORDS["distribution"]) and measure:
        return AnalysisSpec("distribution", view, measure=measure)
    date = choices.date_column(table)
    if _has(question, _KIND_WORDS["trend"]) and date:
        agg = "mean" if _has(question, _KIND_WORDS["mean"]) and measure else ("sum" if measure else "count")
        return AnalysisSpec("trend", view, measure=measure, by=date, agg=agg, period=_period(question, table))
    if cats:
        agg = "mean" if _has(question, _KIND_WORDS["mean"]) and measure else ("sum" if measure else "count")
        return AnalysisSpec("breakdown", view, measure=measure, by=cats[0], agg=agg)
    if measures:
        return AnalysisSpec("kpi", view, measures=tuple(measures))
    return None


def plan_task(question: str, profile: Mapping[str, Any], language: str = "en") -> FollowupTask:
    """The Coder's plan item for ``question`` over the job's first table.

    A question the catalog can express becomes that item's exact wording; one that filters (a category value such as
    "West", a period such as "the last month") cannot be, as no catalog item filters rows: the question itself is
    the item then, and ``missing`` says what the catalog would need.
    """
    tables = choices.tables(dict(profile))
    if not tables:
        return FollowupTask(question, None, "the job has no data profile (cache/profile.json lists no table)")
    asked = parse_question(question, profile)
    if isinstance(asked, StatRequest):
        return FollowupTask(stat_item(asked), None, request=asked)
    if isinstance(asked, Refusal) and asked.kind != UNEXPRESSED:
        return FollowupTask(question, None, asked.reason, refusal=asked)
    table = choices.annotated(tables[0])
    measures = [m for m in choices.measures(table, question) if _named(m, question)]
    cats = [c for c in choices.categories(table, question) if _named(c, question)]
    rows = _Filters(
        where=list(dict.fromkeys(_named_values(table, question))),
        last=list(dict.fromkeys(_last_period(m) for m in _LAST_PERIOD.finditer(question))),
        other=[m.group(0) for m in _PERIOD_FILTER.finditer(_LAST_PERIOD.sub(" ", question))],
    )
    if rows:
        found = _filtered_spec(question, table, measures, cats, rows)
        if isinstance(found, str):
            return FollowupTask(question, None, f"a filtered analysis the catalog cannot express: {found}")
        return FollowupTask(found.item_text(language), found)
    spec = _spec(question, table, measures, cats)
    if spec is None:
        return FollowupTask(question, None, "no catalog item matches the question (it names no measure or category)")
    return FollowupTask(spec.item_text(language), spec)


def _q(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


@dataclass(frozen=True)
class _Filters:
    """The row filters a question names: (column, value) pairs, last periods, and periods the catalog lacks."""

    where: list[tuple[str, str]]
    last: list[str]
    other: list[str]

    def __bool__(self) -> bool:
        return bool(self.where or self.last or self.other)


def _last_period(match: re.Match[str]) -> str:
    return match.group(1).lower() if match.group(1) else _KO_PERIODS[match.group(2)]


def _filtered_spec(
    question: str, table: dict[str, Any], measures: list[str], cats: list[str], rows: _Filters
) -> AnalysisSpec | str:
    """The filtered KPI the question asks for, or why the catalog cannot express it (a sentence fragment)."""
    if rows.other:
        return f"a period filter ({', '.join(rows.other)}) other than the data's last day, week, month or year"
    columns = [c for c, _v in rows.where]
    if len(set(columns)) < len(columns) or len(rows.last) > 1:
        named = [f"`{c}` = {v}" for c, v in rows.where if columns.count(c) > 1]
        named += [f"the last {p}" for p in rows.last] if len(rows.last) > 1 else []
        return f"two values of one filter ({', '.join(named)}); a filtered KPI keeps one value per column, one period"
    date = choices.date_column(table)
    if rows.last and date is None:
        return f"the last {rows.last[0]}, but the table has no date column"
    base = _spec(question, table, measures, [c for c in cats if c not in columns])
    if base is None or not measures:
        return "the question names no measure to total or average"
    if base.kind != "kpi":
        return f"a filtered {base.kind}: only a total or an average is filtered"
    measure = measures[0]
    agg = "mean" if _has(question, _KIND_WORDS["mean"]) else "sum"
    allowed = (choices.column(table, measure) or {}).get("aggregation")
    if allowed == "none" or (agg == "sum" and allowed != "sum"):  # the tracker would refuse it
        hint = "; ask for its average" if allowed == "mean" else ""
        what = "a total" if agg == "sum" else "an average"
        return f"{what} of `{measure}`, which its profile forbids (aggregation: {allowed}){hint}"
    return AnalysisSpec(
        "kpi",
        None,
        measure,
        date if rows.last else None,
        agg=agg,
        where=tuple(rows.where),
        last_period=rows.last[0] if rows.last else None,
    )


def coder_plan(question: str, item: str) -> str:
    """A one-section plan whose Coder section holds the follow-up's single open item."""
    thought = " ".join(question.split())
    return (
        f"# Plan\n## thought\nFollow-up question on a finished job: {thought}\n## title\nFollow-up analysis\n"
        f"## steps\n### 1. Coder: Follow-up analysis\n- [ ] {item}\n"
    )


def coder_task(question: str, item: str, existing: list[str]) -> str:
    """The Supervisor-style task: the item, the rules that keep the follow-up safe, and the ids already taken."""
    taken = ", ".join(existing[:60]) + (" ..." if len(existing) > 60 else "")
    return (
        f"Follow-up question from the user: {' '.join(question.split())}\n"
        f"Do this plan item: {item}\n"
        "Track every number you compute with a DuckDB check (track_calculation(..., check=...) or the trackers); a "
        "number without a check cannot be cited. Use NEW calculation ids only: these ids already exist and are "
        f"never changed: {taken}"
    )


# ---------------------------------------------------------------------------------------------------------------
# The scratch copy and its runtime


def copy_scratch(job_dir: Path, scratch: Path, *, max_bytes: int | None = None) -> None:
    """Copy what the follow-up's scripts may read into ``scratch``: regular files only, never through a link.

    A script of the job may have replaced ``data/`` or ``code/`` (or a file inside) with a link to another job's
    folder; copying through it would hand that job's files to the follow-up's scripts, so any link refuses the
    follow-up, named, instead of being copied or skipped.

    Raises:
        UnsafePathError: A copied folder or file is, or holds, a symbolic link; or the copy passes ``max_bytes``.
    """
    left = max_bytes
    try:
        for name in (*COPIED_DIRS, *COPIED_FILES):
            try:
                copied = copy_regular_tree(job_dir / name, scratch / name, beneath=job_dir, max_bytes=left)
            except FileNotFoundError:
                continue
            left = None if left is None else left - copied
    except UnsafePathError as exc:
        raise UnsafePathError(f"The follow-up analysis was refused: {exc.message}", exc.fix) from None
    for name in (*COPIED_DIRS, "charts", "transcripts"):
        (scratch / name).mkdir(exist_ok=True)
    write_utils_module(scratch / "code")  # this release's helpers, whatever release made the job


def scratch_runtime(
    job: JobFolder, scratch: Path, settings: Settings, question: str, item: str, cap_usd: float
) -> JobRuntime:
    """A JobRuntime over the scratch copy: the job's request and profile, a one-item Coder plan, a fresh ledger (so
    the ceilings and the cost cap count the follow-up alone) and the cap as its cost ceiling."""
    from ..intake import DataProfile

    request = read_json(job.path("request.json"), beneath=job.root)
    bounded = dataclasses.replace(settings, max_cost_usd=min(settings.max_cost_usd, cap_usd))
    language = "ko" if has_cjk(question) else "en"
    rt = JobRuntime(
        job=JobFolder(scratch, job.id),
        settings=bounded,
        request=str(request.get("request", "")),
        language=language,
        state=SharedState(path=scratch / "shared_state.json"),
        ledger=UsageLedger(scratch / "usage.json"),
        cwd=Path(request.get("cwd") or Path.cwd()),
    )
    rt.state.full_plan = coder_plan(question, item)
    profile = scratch / "cache" / "profile.json"
    if profile.is_file():
        rt.profile = DataProfile.load(profile)
    return rt


def run_coder(rt: JobRuntime, task: str) -> str:
    """Run the Coder on the scratch runtime; a ceiling or the cost cap stops it, and the reason is returned.

    The scratch copy's own script server is stopped afterwards, as a job's is when it ends: a service answering
    follow-ups would otherwise keep one sandboxed server (about 90 MB) alive per question.
    """
    from ..agents import run_tool_agent
    from ..execution import get_runner

    try:
        run_tool_agent("coder", rt, task)
    except Exception as exc:  # only a ceiling is expected; anything else is re-raised
        found = our_error(exc)
        if isinstance(found, BudgetExceeded):
            return found.message
        raise
    finally:
        get_runner(rt.settings.runner).release(rt.root)
    return ""


# ---------------------------------------------------------------------------------------------------------------
# Recompute and merge


def new_calculations(scratch: Path, existing: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The scratch copy's calculations the job does not have, and the ids refused (a changed existing value)."""
    refused: dict[str, str] = {}
    new: list[dict[str, Any]] = []
    for calc in load_calculations(scratch):
        calc_id = str(calc["id"])
        if calc_id not in existing:
            new.append(calc)
        elif existing[calc_id] != calc["value"]:
            refused[calc_id] = "the job already has this id; existing values never change"
    return new, refused


def recompute(job_dir: Path, calcs: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Re-compute each calculation's DuckDB check against the REAL job's cache.

    Returns:
        Id -> its citations.json entry, for the checks that matched; and id -> why the others were refused.
    """
    refused: dict[str, str] = {}
    claims = [c for c in calcs if is_stat_check(c)]
    checked: list[dict[str, Any]] = []
    unchecked: list[dict[str, Any]] = []
    for c in calcs:
        if is_claim_without_test(c):
            refused[str(c["id"])] = CLAIM_NEEDS_STAT
        elif not is_stat_check(c):
            has_sql = isinstance(c.get("check"), str) and bool(c["check"].strip())
            (checked if has_sql else unchecked).append(c)
    recipes = [c for c in unchecked if (c.get("recipe") or {}).get("op") == STAT_RECIPE]
    refused.update({str(c["id"]): "no DuckDB check, so it cannot be verified" for c in unchecked if c not in recipes})
    if not checked and not claims and not recipes:
        return {}, refused
    views = load_views(job_dir)
    verified: dict[str, dict[str, Any]] = _recompute_recipes(recipes, views, refused)
    for claim, result in zip(claims, verify_claims(claims, views) if claims else [], strict=True):
        if result.verified:
            verified[str(claim["id"])] = citation_entry(claim, result.verdict, method="stat")
        else:
            refused[str(claim["id"])] = result.reason
    if not checked:
        return verified, refused
    outcomes, _ = run_checks([c["check"] for c in checked], views)
    for calc, outcome in zip(checked, outcomes, strict=True):
        comparison = values_match(calc["value"], outcome.value) if not outcome.error else None
        if comparison is None or not comparison.match:
            refused[str(calc["id"])] = (
                outcome.error or f"the check disagrees: {comparison.reason if comparison else ''}"
            )
            continue
        verified[str(calc["id"])] = citation_entry(calc, outcome.value)
    return verified, refused


def _recompute_recipes(
    calcs: list[dict[str, Any]], views: Mapping[str, Any], refused: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """Re-derive each ``statistic`` recipe from the REAL job's views (DuckDB reads the rows, SciPy computes)."""
    from ..analysis_utils.statistics import recompute_with
    from ..validation.checks import open_connection

    verified: dict[str, dict[str, Any]] = {}
    if not calcs:
        return verified
    con = open_connection(views, None, [])
    try:
        for calc in calcs:
            try:
                value = recompute_with(calc["recipe"], con)
            except Exception as exc:  # a recipe that cannot run is refused, named, never a crash
                refused[str(calc["id"])] = f"its recipe cannot be re-computed: {exc}"
                continue
            comparison = values_match(calc["value"], value)
            if comparison.match:
                verified[str(calc["id"])] = citation_entry(calc, value, method="recipe")
            else:
                refused[str(calc["id"])] = f"the re-computation disagrees: {comparison.reason}"
    finally:
        con.close()
    return verified


def citation_entry(calc: Mapping[str, Any], check_value: Any, *, method: str = "check") -> dict[str, Any]:
    """The citations.json entry of a calculation whose check matched (not yet cited: the report never used it)."""
    keys: tuple[str, ...] = ("value", "description", "formula", "source_file", "importance", "unit", "decimals")
    if "basis" in calc:
        keys += ("basis",)
    entry: dict[str, Any] = {"citation_id": None, "calculation_id": str(calc["id"])}
    entry.update({key: calc[key] for key in ("kind", "claim_kind", "evidence") if key in calc})
    entry.update({key: calc.get(key) for key in keys})
    entry.update(verification_status=VERIFIED, verification_method=method, check_value=json_safe(check_value))
    entry["reason"] = ""
    return entry


def merge(
    job_dir: Path,
    calcs: list[dict[str, Any]],
    verified: Mapping[str, dict[str, Any]],
    lock: AbstractContextManager[Any] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """Append the verified new calculations to the job under its lock; an id the job has by now is refused."""
    refused: dict[str, str] = {}
    with lock if lock is not None else JobLock(job_dir):
        metadata = read_json(job_dir / METADATA_FILE, beneath=job_dir)
        citations = load_citations(job_dir, required=False) or {"metadata": {}, "citations": []}
        have = {str(c.get("id")) for c in metadata["calculations"]}
        merged: list[str] = []
        for calc in calcs:
            calc_id = str(calc["id"])
            if calc_id not in verified:
                continue
            if calc_id in have:
                refused[calc_id] = "the job got this id meanwhile; existing values never change"
                continue
            metadata["calculations"].append(dict(calc))
            citations["citations"].append(dict(verified[calc_id]))
            have.add(calc_id)
            merged.append(calc_id)
        if merged:
            citations["metadata"]["total_calculations"] = len(citations["citations"])
            write_json(job_dir / METADATA_FILE, metadata, beneath=job_dir)
            write_json(job_dir / CITATIONS_FILE, citations, beneath=job_dir)
    return merged, refused


def reindex(job_dir: Path) -> None:
    """Re-index the job's knowledge so answers can cite the new numbers (when the ask package has an index)."""
    try:
        from .fragments import index_job
    except ImportError:
        logger.info("insightloom.ask.fragments is not available; %s not re-indexed", job_dir.name)
        return
    index_job(job_dir)


# ---------------------------------------------------------------------------------------------------------------
# The follow-up


def _check_finished(job: JobFolder) -> None:
    status = job.status().get("status")
    if status not in FINISHED:
        raise BadInputError(
            f"Job {job.id} is {status}, so it cannot be analysed further.",
            "ask --analyze only on a finished job (completed or needs_review).",
        )


def _scripts(scratch: Path, job_dir: Path) -> dict[str, str]:
    """The scripts the follow-up wrote or changed in its code/ (name -> source)."""
    out: dict[str, str] = {}
    try:
        names = list_regular_files(scratch / "code", beneath=scratch)  # never through a link a script left
    except (OSError, InsightloomError):
        logger.warning("follow-up: its code/ is no real folder any more; its scripts are not recorded")
        return out
    for name in (n for n in names if n.endswith(".py")):
        text = _text_or_none(scratch / "code" / name, scratch)
        if text is not None and _text_or_none(job_dir / "code" / name, job_dir) != text:
            out[name] = text
    return out


def _text_or_none(path: Path, beneath: Path) -> str | None:
    try:
        return read_text(path, beneath=beneath)
    except (OSError, UnicodeDecodeError, InsightloomError):
        return None


def _write_record(job_dir: Path, result: FollowupResult, scripts: dict[str, str]) -> str:
    folder = job_dir.joinpath(*RECORDS_DIR)
    try:
        names = list_regular_files(folder, beneath=job_dir)  # a link on the way refuses, as the write would
    except FileNotFoundError:
        names = []  # the write makes the folder
    stems = (name.removesuffix(".json") for name in names if name.endswith(".json"))
    number = 1 + max((int(stem) for stem in stems if stem.isdigit()), default=0)
    path = folder / f"{number}.json"
    data = dataclasses.asdict(result) | {"record": str(path.relative_to(job_dir)), "scripts": scripts}
    write_json(path, data, beneath=job_dir)
    return data["record"]


def _remove_scratch(tmp: Path) -> None:
    """Remove the scratch folder (``rmtree`` removes a link a script left, never what it points to)."""
    try:
        shutil.rmtree(tmp)
    except OSError as exc:
        logger.warning("could not remove the follow-up's scratch folder %s: %s", tmp, exc)


def run_followup(
    job_dir: Path,
    question: str,
    *,
    settings: Settings,
    cap_usd: float = DEFAULT_CAP_USD,
    lock: AbstractContextManager[Any] | None = None,
) -> FollowupResult:
    """Run a bounded follow-up analysis for ``question`` and merge its verified new numbers into the job.

    Args:
        job_dir: A finished job folder.
        question: The user's question.
        settings: Resolved settings (the Coder's model spec and the job ceilings).
        cap_usd: The most the follow-up's model calls may cost (estimated from ``settings.pricing``).
        lock: The job's lock as a context manager (the artifact store's lock in a service); default ``JobLock``.

    Raises:
        BadInputError: The folder is no job, its job.json's id disagrees with its folder, or the job is not
            finished.
        UnsafePathError: What the scratch copy takes holds a symbolic link (named, with the fix).
        JobLocked: Another process holds the job's lock at merge time.
    """
    started = time.perf_counter()
    job = JobFolder.open(job_dir)
    _check_finished(job)
    existing = {str(c["id"]): c["value"] for c in load_calculations(job.root)}
    language = "ko" if has_cjk(question) else "en"
    task = plan_task(question, read_json(job.path("cache", "profile.json"), beneath=job.root), language)
    result = FollowupResult(question=question, item=task.item, missing=task.missing,
                            request=task.request.to_json() if task.request else None)  # fmt: skip
    if task.refusal is not None:  # nothing the catalog can compute: no model call, no scratch copy
        result.seconds = round(time.perf_counter() - started, 3)
        result.record = _write_record(job.root, result, {})
        return result
    tmp = Path(tempfile.mkdtemp(prefix="insightloom-followup-"))  # never a path made of anything job.json says
    try:
        scratch = tmp / "job"
        scratch.mkdir()
        copy_scratch(job.root, scratch, max_bytes=int(settings.max_job_mb * 1024 * 1024))
        rt = scratch_runtime(job, scratch, settings, question, task.item, cap_usd)
        result.stopped = run_coder(rt, coder_task(question, task.item, list(existing)))
        calcs, result.refused = new_calculations(scratch, existing)
        verified, refused = recompute(job.root, calcs)
        result.refused.update(refused)
        result.new_ids, refused = merge(job.root, calcs, verified, lock)
        result.refused.update(refused)
        total = rt.ledger.total()
        result.cost_usd, result.tokens, result.model_calls = total.cost_usd, total.all_tokens, total.calls
        scripts = _scripts(scratch, job.root)
    finally:
        _remove_scratch(tmp)
    if result.new_ids:
        reindex(job.root)
    result.seconds = round(time.perf_counter() - started, 3)
    result.record = _write_record(job.root, result, scripts)
    logger.info("follow-up on %s: %d new verified id(s) in %.1fs", job.id, len(result.new_ids), result.seconds)
    return result


def analyze_followup(
    job_dir: Path, question: str, *, settings: Settings, cap_usd: float = DEFAULT_CAP_USD
) -> list[str]:
    """The new verified calculation ids a follow-up analysis merged into the job (see :func:`run_followup`)."""
    return run_followup(job_dir, question, settings=settings, cap_usd=cap_usd).new_ids
