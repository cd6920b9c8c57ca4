"""Benchmark: follow-up questions over finished offline jobs, against the labelled set in ``tests/ask/questions.json``.

The jobs are run offline on the shared datasets in ``tests/data`` (and the demo). Then, per question:

- **abstention.** The relevance threshold is calibrated on the ``calibrate`` half (the threshold that maximises
  abstention F1, the middle of the best plateau) and reported beside the product's ``RELEVANCE_THRESHOLD``; the
  abstention precision and recall of the last line are the product's own answers (``ask``) on the ``holdout`` half.
  An abstention is the positive class: precision is the share of abstentions that were unanswerable questions, recall
  the share of unanswerable questions that abstained.
- **citations.** Every delivered answer (not an abstention) must cite at least one fragment and only fragments that
  were sent.
- **numbers.** Every number a delivered answer prints (as the audit reads claims) must be a value of a *verified*
  calculation of the asked jobs, as the report prints it. This is checked here from ``citations.json``, not with the
  product's own check. The scripted answers of the set type numbers, right and wrong; each goes through
  ``check_answer`` and, when it passes, counts as delivered, so a wrong number the check lets through shows up here.
- **p50** is the median wall time of ``ask`` (retrieval to answer), over the questions that need no ``--analyze``.
- **analyze.** Questions of kind ``analyze`` run with ``analyze=True`` on a copy of their job: they pass when a new
  verified calculation is merged, the answer cites it, and no existing calculation changed.

Ends with exactly
``questions=<n> abstain_precision=<p> abstain_recall=<r> citation_valid=<v> numbers_verified=<v> p50_ms=<t>``.
The exit code is 1 when a target is missed.

Usage: python benchmarks/ask_eval.py [--jobs DIR] [--only ID,ID...] [--no-analyze] [--questions FILE]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import logging
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
if importlib.util.find_spec("insightloom") is None:  # run from a checkout without installing
    sys.path.insert(0, str(_HERE.parent / "src"))

from insightloom.calc_refs import CALC_REF_RE  # noqa: E402
from insightloom.config import Settings  # noqa: E402
from insightloom.models.offline import OfflineModel  # noqa: E402
from insightloom.report.calcinfo import load_calc_info  # noqa: E402
from insightloom.report.numbers import MINUS_SIGNS, find_numbers  # noqa: E402

logger = logging.getLogger(__name__)
QUESTIONS = _HERE.parent / "tests" / "ask" / "questions.json"
DATA = _HERE.parent / "tests" / "data"
TARGETS = {"abstain_precision": 0.95, "abstain_recall": 0.95, "citation_valid": 1.0, "numbers_verified": 1.0}
MAX_P50_MS = 300.0
CITATION_RE = re.compile(r"\[(F\d+)\]")
CITE_SLOT_RE = re.compile(r"\{\{cite:([^}]+)\}\}")
FRAGMENT_ID_RE = re.compile(r'<fragment id="(F\d+)"')
_MINUS = str.maketrans({sign: "-" for sign in MINUS_SIGNS})
LAST_LINE_RE = re.compile(
    r"^questions=(?P<questions>\d+) abstain_precision=(?P<abstain_precision>[\d.]+) "
    r"abstain_recall=(?P<abstain_recall>[\d.]+) citation_valid=(?P<citation_valid>[\d.]+) "
    r"numbers_verified=(?P<numbers_verified>[\d.]+) p50_ms=(?P<p50_ms>[\d.]+)$"
)
# Where the product may keep its relevance threshold (the answer module owns it; the others are fallbacks).
THRESHOLD_HOMES = ("insightloom.ask.answer", "insightloom.ask.select", "insightloom.ask.retrieval")


# ---- the labelled set ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scripted:
    """An answer that types numbers, with the truth about each one and what ``check_answer`` should say."""

    text: str
    right: tuple[str, ...]
    wrong: tuple[str, ...]
    expect: str  # accept | reject


@dataclass(frozen=True)
class Question:
    """One labelled question."""

    id: str
    jobs: tuple[str, ...]
    lang: str
    kind: str  # answerable | unanswerable | analyze
    question: str
    split: str  # calibrate | holdout
    expect_calc_ids: tuple[str, ...] = ()
    expect_facts: tuple[str, ...] = ()
    scripted: tuple[Scripted, ...] = ()


@dataclass
class QuestionSet:
    """The labelled set: how to build each job, and the questions."""

    request: str
    jobs: dict[str, dict[str, Any]]
    questions: list[Question]


def load_questions(path: Path = QUESTIONS, only: Iterable[str] | None = None) -> QuestionSet:
    """The labelled set at ``path``, restricted to the ids in ``only`` when given."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    wanted = set(only) if only else None
    questions = [
        Question(
            id=row["id"],
            jobs=tuple(row["jobs"]),
            lang=row["lang"],
            kind=row["kind"],
            question=row["question"],
            split=row["split"],
            expect_calc_ids=tuple(row.get("expect_calc_ids", ())),
            expect_facts=tuple(row.get("expect_facts", ())),
            scripted=tuple(
                Scripted(s["text"], tuple(s["right"]), tuple(s["wrong"]), s["expect"]) for s in row.get("scripted", ())
            ),
        )
        for row in raw["questions"]
        if wanted is None or row["id"] in wanted
    ]
    if wanted is not None and len(questions) != len(wanted):
        missing = wanted - {q.id for q in questions}
        raise SystemExit(f"unknown question ids: {', '.join(sorted(missing))}")
    return QuestionSet(request=raw["request"], jobs=raw["jobs"], questions=questions)


# ---- the jobs --------------------------------------------------------------------------------------------------


def offline_settings(root: Path) -> Settings:
    """Offline settings whose artifacts (and the ask memory under them) stay in ``root``."""
    settings = Settings().with_provider("offline")
    settings.artifacts = root / "artifacts"
    return settings


def build_job(name: str, spec: Mapping[str, Any], request: str, root: Path) -> Path:
    """The finished offline job ``name`` under ``root/jobs``, run now unless it is already there."""
    from insightloom.workflow import AutoApprove, JobOptions, run_job

    job_dir = root / "jobs" / name
    if (job_dir / "job.json").is_file() and json.loads((job_dir / "job.json").read_text()).get("status") in (
        "completed",
        "needs_review",
    ):
        return job_dir
    if job_dir.exists():
        shutil.rmtree(job_dir)
    inputs_dir = root / "inputs" / name
    inputs_dir.mkdir(parents=True, exist_ok=True)
    if spec.get("demo"):
        from insightloom.demo_data import generate_demo_csv, write_column_definitions

        data = generate_demo_csv(inputs_dir / "bakery_sales.csv")
        columns: Path | None = write_column_definitions(inputs_dir / "column_definitions.json")
    else:
        data = DATA / spec["data"]
        columns = DATA / spec["columns"] if spec.get("columns") else None
    opts = JobOptions(
        inputs=[data],
        request=request,
        settings=offline_settings(root),
        job_dir=job_dir,
        columns_file=columns,
        cwd=root,
    )
    outcome = run_job(opts, AutoApprove())
    if outcome.status not in ("completed", "needs_review"):
        raise RuntimeError(f"job {name} ended {outcome.status}: {outcome.error}")
    return job_dir


def build_jobs(qs: QuestionSet, root: Path) -> dict[str, Path]:
    """Every job a question of ``qs`` asks about, by name."""
    names = sorted({name for q in qs.questions for name in q.jobs})
    return {name: build_job(name, qs.jobs[name], qs.request, root) for name in names}


# ---- independent truth: the printed values of verified calculations -------------------------------------------


def printed_numbers(text: str) -> list[str]:
    """The numbers ``text`` claims, as printed (signed, minus signs unified), by the audit's reading of claims."""
    return [token.text.translate(_MINUS) for token in find_numbers(text)]


def verified_values(job_dirs: Iterable[Path]) -> dict[str, str]:
    """Calculation id -> printed value, for every verified calculation of the jobs."""
    values: dict[str, str] = {}
    for job_dir in job_dirs:
        values |= {cid: info.formatted() for cid, info in load_calc_info(job_dir).items() if info.status == "verified"}
    return values


def truth_numbers(values: Mapping[str, str]) -> set[str]:
    """Every number the verified values print."""
    return {number for text in values.values() for number in printed_numbers(text)}


def unverified_numbers(answer: str, values: Mapping[str, str]) -> tuple[int, list[str]]:
    """How many numbers ``answer`` prints, and those that no verified calculation prints.

    A ``{{calc:ID}}`` left in the answer stands for its value: verified when ID is a verified calculation.
    """
    refs = CALC_REF_RE.findall(answer)
    bad = [f"{{{{calc:{cid}}}}}" for cid in refs if cid not in values]
    text = CITATION_RE.sub(" ", CALC_REF_RE.sub(" ", answer))
    numbers = printed_numbers(text)
    truth = truth_numbers(values)
    return len(numbers) + len(refs), bad + [n for n in numbers if n not in truth]


# ---- the product -----------------------------------------------------------------------------------------------


def product_threshold() -> tuple[float | None, str]:
    """The product's ``RELEVANCE_THRESHOLD`` and the module that holds it (None when no module has one yet)."""
    for name in THRESHOLD_HOMES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "RELEVANCE_THRESHOLD"):
            return float(module.RELEVANCE_THRESHOLD), name
    return None, ""


class Knowledge:
    """The knowledge base and retriever of each set of jobs, built once."""

    def __init__(self, job_dirs: Mapping[str, Path]) -> None:
        self.job_dirs = dict(job_dirs)
        self._retrievers: dict[tuple[str, ...], Any] = {}

    def retriever(self, jobs: Sequence[str]) -> Any:
        from insightloom.ask.fragments import load_knowledge
        from insightloom.ask.retrieval import Retriever

        key = tuple(jobs)
        if key not in self._retrievers:
            fragments = [f for name in key for f in load_knowledge(self.job_dirs[name])]
            self._retrievers[key] = Retriever(fragments)
        return self._retrievers[key]

    def relevance(self, q: Question) -> float:
        """The top hit's score for the question: the score the relevance threshold is compared with."""
        hits = self.retriever(q.jobs).search(q.question, k=1)
        return hits[0].score if hits else 0.0

    def calc_ids(self, jobs: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Fragment id -> the calculation ids it carries (a single job's ids are the prompt's ids)."""
        return {f.id: tuple(f.calc_ids) for f in self.retriever(jobs).fragments}


# ---- calibration -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Abstention:
    """Abstention as a classifier: an abstention on an unanswerable question is a true positive."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def abstention(outcomes: Iterable[tuple[bool, bool]]) -> Abstention:
    """Counts over (unanswerable, abstained) pairs."""
    pairs = list(outcomes)
    return Abstention(
        tp=sum(1 for u, a in pairs if u and a),
        fp=sum(1 for u, a in pairs if not u and a),
        fn=sum(1 for u, a in pairs if u and not a),
    )


def calibrate(scored: Sequence[tuple[bool, float]]) -> tuple[float, Abstention]:
    """The threshold (abstain when the top score is below it) that maximises abstention F1 over (unanswerable,
    top score) pairs: the middle candidate of the best plateau, so it sits away from both classes' edges."""
    scores = sorted({s for _, s in scored})
    candidates = [scores[0] / 2 if scores else 0.5]
    candidates += [(a + b) / 2 for a, b in zip(scores, scores[1:], strict=False)]
    candidates += [(scores[-1] + 1.0) / 2 if scores else 1.0]
    results = [(t, abstention((u, s < t) for u, s in scored)) for t in candidates]
    best = max(r.f1 for _, r in results)
    plateau = [(t, r) for t, r in results if r.f1 == best]
    return plateau[len(plateau) // 2]


# ---- running the questions -------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What became of one question."""

    question: Question
    relevance: float = 0.0
    abstained: bool = False
    ms: float = 0.0
    answer: str = ""
    model_calls: int = 0
    cited_ok: bool = True
    numbers: int = 0
    bad_numbers: list[str] = field(default_factory=list)
    hit: bool | None = None  # answerable: cited an expected calculation or stated an expected fact
    analyze_ok: bool | None = None
    note: str = ""


@dataclass
class ScriptedOutcome:
    """One scripted answer through ``check_answer``."""

    question: Question
    scripted: Scripted
    accepted: bool = False
    skipped: str = ""  # why the answer could not be built (the fragment it cites was not retrieved)
    cited_ok: bool = True
    numbers: int = 0
    bad_numbers: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def citations_ok(answer: str, sent_ids: set[str]) -> bool:
    """At least one citation, and every one of them a fragment that was sent."""
    cited = set(CITATION_RE.findall(answer))
    return bool(cited) and cited <= sent_ids


def _citation_ids(citations: Sequence[Mapping[str, Any]]) -> set[str]:
    return {str(c.get("id") or c.get("fragment_id") or "") for c in citations}


def _cited_calcs(citations: Sequence[Mapping[str, Any]]) -> set[str]:
    return {str(cid) for c in citations for cid in (c.get("calc_ids") or ())}


def judge_answer(out: Outcome, result: Any, values: Mapping[str, str]) -> None:
    """Fill ``out`` from an ``AskResult``: citations, numbers and whether it found what was expected."""
    out.abstained = bool(result.abstained)
    out.answer = result.answer
    out.model_calls = int(result.model_calls)
    if out.abstained:
        return
    out.cited_ok = citations_ok(result.answer, _citation_ids(result.citations))
    out.numbers, out.bad_numbers = unverified_numbers(result.answer, values)
    q = out.question
    if q.kind == "answerable":
        out.hit = bool(set(q.expect_calc_ids) & _cited_calcs(result.citations)) or any(
            fact in result.answer for fact in q.expect_facts
        )


def ask_one(
    q: Question, job_dirs: Sequence[Path], settings: Settings, threshold: float, *, analyze: bool = False
) -> tuple[Any, float]:
    """The product's answer to ``q`` and its wall time in milliseconds."""
    from insightloom.ask.answer import ask

    started = time.perf_counter()
    result = ask(list(job_dirs), q.question, settings=settings, analyze=analyze, threshold=threshold)
    return result, (time.perf_counter() - started) * 1000


def run_analyze(q: Question, jobs: Mapping[str, Path], root: Path, settings: Settings, threshold: float) -> Outcome:
    """``q`` with ``analyze=True`` on copies of its jobs: a new verified calculation, cited, nothing else changed."""
    copies = []
    for name in q.jobs:
        copy = root / "analyze" / q.id / name
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(jobs[name], copy)
        copies.append(copy)
    before = {c: _calculations(c) for c in copies}
    out = Outcome(question=q)
    result, out.ms = ask_one(q, copies, settings, threshold, analyze=True)
    values = verified_values(copies)
    judge_answer(out, result, values)
    new_ids = list(result.new_calc_ids)
    unchanged = all(_calculations(c).items() >= before[c].items() for c in copies)
    cited_new = bool(set(new_ids) & _cited_calcs(result.citations)) or any(
        values.get(i, "\0") in out.answer for i in new_ids
    )
    out.analyze_ok = bool(result.analyzed) and bool(new_ids) and all(i in values for i in new_ids) and cited_new
    out.analyze_ok = out.analyze_ok and unchanged and not out.abstained
    out.note = f"new={','.join(new_ids) or '-'} unchanged={unchanged}"
    return out


def _calculations(job_dir: Path) -> dict[str, str]:
    """Calculation id -> its stored entry as JSON text, to compare before and after a follow-up analysis."""
    raw = json.loads((job_dir / "calculation_metadata.json").read_text(encoding="utf-8"))
    return {str(c["id"]): json.dumps(c, sort_keys=True) for c in raw["calculations"]}


class ScriptedAnswerer(OfflineModel):
    """A model that answers ``script`` whatever it is asked (again when asked to retry), each ``{{cite:ID}}`` filled
    with the prompt's fragment that carries calculation ID: the answer goes through the product's whole check."""

    def __init__(self, script: str, calc_ids: Mapping[str, tuple[str, ...]]) -> None:
        super().__init__(role="answerer")
        self.script = script
        self.calc_ids = calc_ids
        self.filled: str | None = None  # None: a cited calculation was in no fragment of the prompt

    def fill(self, prompt: str) -> str:
        sent = FRAGMENT_ID_RE.findall(prompt)
        missing = False

        def cite(match: re.Match[str]) -> str:
            nonlocal missing
            holder = next((fid for fid in sent if match.group(1) in self.calc_ids.get(fid, ())), None)
            missing = missing or holder is None
            return f"[{holder}]" if holder else ""

        text = CITE_SLOT_RE.sub(cite, self.script)
        self.filled = None if missing else text
        return text

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):  # type: ignore[no-untyped-def]
        first = "".join(block.get("text", "") for block in messages[0]["content"])
        text = self.fill(first)
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": text}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        yield {
            "metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 0}}
        }


def run_scripted(
    q: Question, job_dirs: Sequence[Path], knowledge: Knowledge, settings: Settings, threshold: float
) -> list[ScriptedOutcome]:
    """Each scripted answer of ``q`` as the model's answer in ``ask``: checked, retried once, else abstained."""
    from insightloom.ask.answer import ask

    values = verified_values(job_dirs)
    outcomes = []
    for script in q.scripted:
        out = ScriptedOutcome(question=q, scripted=script)
        model = ScriptedAnswerer(script.text, knowledge.calc_ids(q.jobs))
        result = ask(list(job_dirs), q.question, settings=settings, threshold=threshold, model=model)
        if result.model_calls == 0:
            out.skipped = "nothing relevant was retrieved: the model was not called"
        elif model.filled is None:
            out.skipped = "a fragment it cites was not sent"
        else:
            out.accepted = not result.abstained
            out.problems = list(result.problems)
            if out.accepted:
                out.cited_ok = citations_ok(result.answer, _citation_ids(result.citations))
                out.numbers, out.bad_numbers = unverified_numbers(result.answer, values)
        outcomes.append(out)
    return outcomes


def _printed_by(label: str, truth: set[str]) -> bool:
    numbers = printed_numbers(label)
    return bool(numbers) and all(n in truth for n in numbers)


def check_labels(qs: QuestionSet, jobs: Mapping[str, Path]) -> list[str]:
    """Where the set's labels disagree with the jobs: expected calculations that are not verified, scripted numbers
    labelled right that no verified value prints, or labelled wrong that one does."""
    problems = []
    for q in qs.questions:
        values = verified_values(jobs[name] for name in q.jobs)
        truth = truth_numbers(values)
        problems += [f"{q.id}: {cid} is not a verified calculation" for cid in q.expect_calc_ids if cid not in values]
        for script in q.scripted:
            problems += [
                f"{q.id}: {n} is labelled right but no verified value prints it"
                for n in script.right
                if not _printed_by(n, truth)
            ]
            problems += [
                f"{q.id}: {n} is labelled wrong but a verified value prints it"
                for n in script.wrong
                if _printed_by(n, truth)
            ]
    return problems


# ---- the report ------------------------------------------------------------------------------------------------


@dataclass
class Summary:
    """The measured numbers of a run."""

    questions: int
    calibrated: float
    calibration: Abstention
    product_threshold: float | None
    holdout: Abstention
    holdout_at_calibrated: Abstention
    citation_valid: float
    numbers_verified: float
    p50_ms: float
    answer_hit: float
    scripted_agree: float
    scripted_skipped: int
    analyze_ok: float | None
    zero_hit_model_calls: int

    def last_line(self) -> str:
        return (
            f"questions={self.questions} abstain_precision={self.holdout.precision:.3f} "
            f"abstain_recall={self.holdout.recall:.3f} citation_valid={self.citation_valid:.3f} "
            f"numbers_verified={self.numbers_verified:.3f} p50_ms={self.p50_ms:.1f}"
        )

    def missed(self) -> list[str]:
        got = {
            "abstain_precision": self.holdout.precision,
            "abstain_recall": self.holdout.recall,
            "citation_valid": self.citation_valid,
            "numbers_verified": self.numbers_verified,
        }
        missed = [f"{name} {got[name]:.3f} < {target}" for name, target in TARGETS.items() if got[name] < target]
        if self.p50_ms >= MAX_P50_MS:
            missed.append(f"p50_ms {self.p50_ms:.1f} >= {MAX_P50_MS}")
        return missed


def parse_last_line(line: str) -> dict[str, float]:
    """The metrics of the benchmark's last line (``ValueError`` when it is not exactly that line)."""
    match = LAST_LINE_RE.match(line.strip())
    if match is None:
        raise ValueError(f"not the ask_eval last line: {line!r}")
    return {key: float(value) for key, value in match.groupdict().items()}


def _share(flags: Iterable[bool]) -> float:
    values = list(flags)
    return sum(values) / len(values) if values else 1.0


def summarize(outcomes: list[Outcome], scripted: list[ScriptedOutcome], threshold: float) -> Summary:
    """The run's metrics from each question's and scripted answer's outcome, asked at ``threshold``."""
    plain = [o for o in outcomes if o.question.kind != "analyze"]
    _, calibration = calibrate(_calibration_scores(plain))
    held = [o for o in plain if o.question.split == "holdout"]
    delivered_cites = [o.cited_ok for o in outcomes if not o.abstained] + [s.cited_ok for s in scripted if s.accepted]
    numbers = sum(o.numbers for o in outcomes if not o.abstained) + sum(s.numbers for s in scripted if s.accepted)
    bad = sum(len(o.bad_numbers) for o in outcomes if not o.abstained)
    bad += sum(len(s.bad_numbers) for s in scripted if s.accepted)
    built = [s for s in scripted if not s.skipped]
    analyzed = [o.analyze_ok for o in outcomes if o.analyze_ok is not None]
    return Summary(
        questions=len(outcomes),
        calibrated=threshold,
        calibration=calibration,
        product_threshold=product_threshold()[0],
        holdout=abstention((o.question.kind == "unanswerable", o.abstained) for o in held),
        holdout_at_calibrated=abstention((o.question.kind == "unanswerable", o.relevance < threshold) for o in held),
        citation_valid=_share(delivered_cites),
        numbers_verified=(numbers - bad) / numbers if numbers else 1.0,
        p50_ms=statistics.median([o.ms for o in plain]) if plain else 0.0,
        answer_hit=_share(bool(o.hit) for o in plain if o.question.kind == "answerable"),
        scripted_agree=_share(s.accepted == (s.scripted.expect == "accept") for s in built),
        scripted_skipped=len(scripted) - len(built),
        analyze_ok=_share(analyzed) if analyzed else None,
        zero_hit_model_calls=sum(o.model_calls for o in plain if o.relevance == 0.0),
    )


def _calibration_scores(outcomes: Iterable[Outcome]) -> list[tuple[bool, float]]:
    return [(o.question.kind == "unanswerable", o.relevance) for o in outcomes if o.question.split == "calibrate"]


def _outcome_word(o: Outcome) -> str:
    if o.question.kind == "analyze":
        return "analyzed" if o.analyze_ok else "ANALYZE-FAIL"
    if o.abstained:
        return "abstained" if o.question.kind == "unanswerable" else "ABSTAINED"
    if o.question.kind == "unanswerable":
        return "ANSWERED"
    return "answered" if o.hit else "answered-miss"


def print_table(outcomes: list[Outcome], scripted: list[ScriptedOutcome], summary: Summary) -> None:
    """Per question, per scripted answer, then the summary with its targets."""
    print(f"{'question':<14} {'split':<9} {'kind':<12} {'lang':<4} {'top':>5} {'ms':>7} {'outcome':<13} notes")
    for o in outcomes:
        notes = []
        if not o.abstained and not o.cited_ok:
            notes.append("bad-citation")
        if o.bad_numbers:
            notes.append("unverified:" + ",".join(o.bad_numbers))
        if o.note:
            notes.append(o.note)
        q = o.question
        print(
            f"{q.id:<14} {q.split:<9} {q.kind:<12} {q.lang:<4} {o.relevance:>5.2f} {o.ms:>7.1f} "
            f"{_outcome_word(o):<13} {' '.join(notes)}"
        )
    print()
    print(f"{'scripted':<14} {'expect':<7} {'got':<8} typed numbers / problems")
    for s in scripted:
        got = "skipped" if s.skipped else ("accept" if s.accepted else "reject")
        flag = "" if s.skipped or got == s.scripted.expect else "  <-- DISAGREES"
        detail = s.skipped or "; ".join(s.problems)[:110] or ",".join(s.scripted.right + s.scripted.wrong)
        print(f"{s.question.id:<14} {s.scripted.expect:<7} {got:<8} {detail}{flag}")
    print()
    th = "none" if summary.product_threshold is None else f"{summary.product_threshold:.3f}"
    rows = [
        ("relevance threshold (calibrated)", f"{summary.calibrated:.3f}", f"product {th}"),
        (
            "calibration F1 / P / R",
            f"{summary.calibration.f1:.3f}",
            f"{summary.calibration.precision:.3f} / {summary.calibration.recall:.3f}",
        ),
        ("holdout abstain precision", f"{summary.holdout.precision:.3f}", f">= {TARGETS['abstain_precision']}"),
        ("holdout abstain recall", f"{summary.holdout.recall:.3f}", f">= {TARGETS['abstain_recall']}"),
        (
            "holdout P / R at calibrated",
            f"{summary.holdout_at_calibrated.precision:.3f} / {summary.holdout_at_calibrated.recall:.3f}",
            "retrieval alone",
        ),
        ("citation_valid", f"{summary.citation_valid:.3f}", "= 1.0"),
        ("numbers_verified", f"{summary.numbers_verified:.3f}", "= 1.0"),
        ("p50 ms (retrieval to answer)", f"{summary.p50_ms:.1f}", f"< {MAX_P50_MS:.0f}"),
        ("answerable hit", f"{summary.answer_hit:.3f}", "cited or stated what was expected"),
        ("scripted agree with labels", f"{summary.scripted_agree:.3f}", f"skipped {summary.scripted_skipped}"),
        ("analyze ok", "n/a" if summary.analyze_ok is None else f"{summary.analyze_ok:.3f}", "new verified, cited"),
        ("model calls with zero hits", str(summary.zero_hit_model_calls), "= 0"),
    ]
    for name, value, target in rows:
        print(f"{name:<34} {value:>15}  {target}")


def evaluate(
    qs: QuestionSet, root: Path, *, analyze: bool = True
) -> tuple[list[Outcome], list[ScriptedOutcome], float]:
    """Build the jobs, calibrate the threshold on the calibrate half, then ask every question at that threshold and
    run every scripted answer. Returns the outcomes and the threshold."""
    jobs = build_jobs(qs, root)
    labels = check_labels(qs, jobs)
    if labels:
        raise SystemExit("the labelled set disagrees with the jobs:\n" + "\n".join(labels))
    settings = offline_settings(root)
    knowledge = Knowledge(jobs)  # also builds every knowledge base before anything is timed
    outcomes = [Outcome(question=q, relevance=knowledge.relevance(q)) for q in qs.questions if q.kind != "analyze"]
    threshold, _ = calibrate(_calibration_scores(outcomes))
    scripted: list[ScriptedOutcome] = []
    for out in outcomes:
        job_dirs = [jobs[name] for name in out.question.jobs]
        result, out.ms = ask_one(out.question, job_dirs, settings, threshold)
        judge_answer(out, result, verified_values(job_dirs))
        scripted += run_scripted(out.question, job_dirs, knowledge, settings, threshold)
    if analyze:
        outcomes += [run_analyze(q, jobs, root, settings, threshold) for q in qs.questions if q.kind == "analyze"]
    return outcomes, scripted, threshold


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS, help="The labelled set (JSON).")
    parser.add_argument("--jobs", type=Path, help="Keep the jobs here and reuse finished ones (default: a temp dir).")
    parser.add_argument("--only", help="Comma-separated question ids (a subset).")
    parser.add_argument("--no-analyze", action="store_true", help="Skip the questions that need --analyze.")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    qs = load_questions(args.questions, args.only.split(",") if args.only else None)
    with tempfile.TemporaryDirectory(prefix="ask-eval-") as tmp:
        root = args.jobs.resolve() if args.jobs else Path(tmp)
        outcomes, scripted, threshold = evaluate(qs, root, analyze=not args.no_analyze)
        summary = summarize(outcomes, scripted, threshold)
        print_table(outcomes, scripted, summary)
    missed = summary.missed()
    if missed:
        print("missed: " + "; ".join(missed))
    print(summary.last_line())
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
