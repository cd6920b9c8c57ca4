"""Validate a job's tracked calculations and write citations.json.

The Validator's deterministic half: every calculation with a SQL ``check`` is re-computed by DuckDB (an engine
independent of the pandas code that produced the value) and marked ``verified`` or ``needs_review``; one without a
check stays ``unverified`` unless the Validator agent later verifies it with its own script
(:func:`record_llm_verification`). A claim (``check: "stat:<test>"``) is re-computed with SciPy from its
``test.sql`` instead (:mod:`insightloom.validation.claim_checks`). Values are never changed, and
calculation_metadata.json is never written.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from insightloom.claims.records import params_of
from insightloom.errors import ValidationError
from insightloom.fileio import write_json, write_text_atomic
from insightloom.timeutil import utc_now
from insightloom.validation.checks import ConnectionFactory, run_checks
from insightloom.validation.claim_checks import CLAIM_NEEDS_STAT, is_claim_without_test, is_stat_check, verify_claims
from insightloom.validation.compare import json_safe, values_match
from insightloom.validation.jobfiles import (
    CITATIONS_FILE,
    METADATA_FILE,
    PROFILE_FILE,
    REPORT_FILE,
    CachedTable,
    load_calculations,
    load_citations,
    load_views,
    read_json,
    table_of_file,
)
from insightloom.validation.joins import join_problems
from insightloom.validation.memo import HOST_MEMO
from insightloom.validation.tiers import has_check, select_for_llm, tier_rule

logger = logging.getLogger(__name__)

VERIFIED, NEEDS_REVIEW, UNVERIFIED = "verified", "needs_review", "unverified"
_LIST_LIMIT = 10
_DETAIL_LIMIT = 25


@dataclass
class ValidationSummary:
    """What validation found, short enough to hand to a model.

    Attributes:
        total: Number of tracked calculations.
        verified: Ids whose re-computation matched.
        needs_review: Ids whose check failed, errored or returned the wrong shape.
        unverified: Ids with no check and no LLM verification yet.
        llm_candidates: Unchecked ids the tiers select for LLM verification.
        candidate_details: What the Validator needs to re-compute each candidate (table, columns, formula, recipe).
        reasons: Id -> why it needs review.
        rejected: Id -> why an LLM verification result was not recorded.
        queries: DuckDB check queries run (setup excluded).
        seconds: Wall time of the check run.
        checks_run: False when this summary only recorded script verifications (checks kept their statuses).
    """

    total: int
    verified: list[str] = field(default_factory=list)
    needs_review: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)
    llm_candidates: list[str] = field(default_factory=list)
    candidate_details: dict[str, dict[str, Any]] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    queries: int = 0
    seconds: float = 0.0
    checks_run: bool = True

    @property
    def ok(self) -> bool:
        """True when nothing needs review (the CLI's ``verify`` exit code 0)."""
        return not self.needs_review

    @property
    def pending(self) -> list[str]:
        """Selected candidates still waiting for the Validator's own script."""
        return [c for c in self.llm_candidates if c in self.unverified]

    def to_text(self) -> str:
        """A few lines for the Validator agent or the terminal, ending with the script-verification task if any."""
        lines = [
            f"{self.total} calculations: {len(self.verified)} verified, {len(self.needs_review)} needs_review, "
            f"{len(self.unverified)} unverified."
        ]
        for calc_id in self.needs_review[:_LIST_LIMIT]:
            lines.append(f"- needs_review {calc_id}: {self.reasons.get(calc_id, '')}")
        if len(self.needs_review) > _LIST_LIMIT:
            lines.append(f"- ... and {len(self.needs_review) - _LIST_LIMIT} more (see {REPORT_FILE})")
        for calc_id, why in self.rejected.items():
            lines.append(f"- not recorded {calc_id}: {why}")
        lines += self._task_lines()
        return "\n".join(lines)

    def _task_lines(self) -> list[str]:
        pending = self.pending
        if not pending:
            return []
        lines = [
            f"Script verification needed for {len(pending)} unchecked calculation(s) selected by the tiers "
            f"({tier_rule(self.total)}). In ONE script, re-compute each value independently with pandas from "
            "load_df(<table>) (do not copy the tracked value or the Coder's code), then call "
            'record_verification({"<id>": <value>, ...}) from coder_analysis_utils and print what it returns:'
        ]
        for calc_id in pending[:_DETAIL_LIMIT]:
            lines.append(describe_candidate(calc_id, self.candidate_details.get(calc_id, {})))
        if len(pending) > _DETAIL_LIMIT:
            lines.append(f"- ... and {len(pending) - _DETAIL_LIMIT} more (see {REPORT_FILE} and {METADATA_FILE})")
        others = [c for c in self.unverified if c not in set(pending)]
        if others:
            shown = ", ".join(others[:_LIST_LIMIT]) + (" ..." if len(others) > _LIST_LIMIT else "")
            lines.append(f"Not selected (they stay unverified and cannot be cited): {shown}")
        return lines


def describe_candidate(calc_id: str, detail: Mapping[str, Any]) -> str:
    """One line naming what a candidate needs: importance, table, columns, formula, description and recipe."""

    def flat(value: object) -> str:
        return " ".join(str(value or "").split())  # one line per candidate, whatever the Coder wrote

    line = (
        f"- {calc_id} [{detail.get('importance', '?')}] table={flat(detail.get('table')) or '?'} "
        f"columns={json.dumps(detail.get('source_columns') or [], ensure_ascii=False)} "
        f"formula: {flat(detail.get('formula'))} -- {flat(detail.get('description'))}"
    )
    if detail.get("recipe"):
        line += f"; recipe={json.dumps(detail['recipe'], ensure_ascii=False, sort_keys=True)}"
    return line


def _entry(calc: Mapping[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    # A claim's kind, evidence and params travel with it: the Reporter orders the summary by them
    # (claims.lead.lead_order), and the renderer prints only the sentence the Validator saw (report.calcinfo).
    claim = {k: calc[k] for k in ("kind", "claim_kind", "evidence") if k in calc} if calc.get("kind") == "claim" else {}
    if claim:
        claim["params"] = dict(params_of(calc))
    return claim | {
        "citation_id": (previous or {}).get("citation_id"),
        "calculation_id": str(calc["id"]),
        "value": calc["value"],
        "description": calc["description"],
        "formula": calc["formula"],
        "source_file": calc["source_file"],
        "verification_status": UNVERIFIED,
        "importance": calc.get("importance"),
        "unit": calc.get("unit"),
        "decimals": calc.get("decimals"),
        "verification_method": None,
        "check_value": None,
        "reason": "no check" if not has_check(calc) else "",
    }


def _kept_llm_result(calc: Mapping[str, Any], previous: Mapping[str, Any]) -> bool:
    # An earlier LLM verification of the same, still unchecked value survives a re-run of validation.
    return bool(
        previous.get("verification_method") == "llm" and not has_check(calc) and previous.get("value") == calc["value"]
    )


def _carry_status(entry: dict[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    # Statuses from the last run stay valid only while the tracked value is the one they were computed for.
    if previous and previous.get("value") == entry["value"]:
        for key in ("verification_status", "verification_method", "check_value", "reason"):
            if key in previous:
                entry[key] = previous[key]
    return entry


def _previous_entries(job_dir: Path) -> dict[str, dict[str, Any]]:
    try:
        data = load_citations(job_dir, required=False)
    except ValidationError as exc:
        logger.warning("ignoring unreadable previous %s: %s", CITATIONS_FILE, exc)
        return {}
    if not data:
        return {}
    return {str(c.get("calculation_id")): c for c in data["citations"] if isinstance(c, dict)}


def _details(job_dir: Path, calcs: list[dict[str, Any]], ids: list[str]) -> dict[str, dict[str, Any]]:
    wanted = set(ids)
    tables = table_of_file(job_dir) if wanted else {}
    out: dict[str, dict[str, Any]] = {}
    for calc in calcs:
        calc_id = str(calc["id"])
        if calc_id not in wanted:
            continue
        recipe = calc.get("recipe") if isinstance(calc.get("recipe"), dict) else None
        table = (recipe or {}).get("view") or tables.get(str(calc.get("source_file")))
        out[calc_id] = {key: calc.get(key) for key in ("importance", "source_columns", "formula", "description")}
        out[calc_id].update(table=table, recipe=recipe)
    return out


def _summarise(job_dir: Path, entries: list[dict[str, Any]], calcs: list[dict[str, Any]]) -> ValidationSummary:
    candidates = select_for_llm(calcs)
    summary = ValidationSummary(total=len(entries), llm_candidates=candidates)
    for entry in entries:
        status, calc_id = entry["verification_status"], entry["calculation_id"]
        getattr(summary, status).append(calc_id)
        if status == NEEDS_REVIEW:
            summary.reasons[calc_id] = entry.get("reason") or ""
    summary.candidate_details = _details(job_dir, calcs, summary.pending)
    return summary


def _write_outputs(job_dir: Path, entries: list[dict[str, Any]], summary: ValidationSummary) -> None:
    cited = sum(1 for e in entries if e.get("citation_id"))
    generated_at = utc_now()
    metadata = {"generated_at": generated_at, "total_calculations": len(entries), "cited_calculations": cited}
    write_json(job_dir / CITATIONS_FILE, {"metadata": metadata, "citations": entries}, beneath=job_dir)
    write_text_atomic(job_dir / REPORT_FILE, report_text(entries, summary, generated_at), beneath=job_dir)


def report_text(entries: list[dict[str, Any]], summary: ValidationSummary, generated_at: str) -> str:
    """The human-readable validation_report.txt: totals, then every calculation grouped by status."""
    lines = [
        f"Validation report ({generated_at})",
        f"Calculations: {summary.total}  verified: {len(summary.verified)}  "
        f"needs_review: {len(summary.needs_review)}  unverified: {len(summary.unverified)}",
        f"Check queries: {summary.queries}" if summary.checks_run else "Checks: not re-run (script results recorded)",
        "Rule: numbers match when |difference| < 0.01 in the stored unit; strings must match exactly.",
    ]
    titles = {
        NEEDS_REVIEW: "NEEDS REVIEW (cannot be cited)",
        VERIFIED: "VERIFIED",
        UNVERIFIED: "UNVERIFIED (no check; cannot be cited)",
    }
    candidates = set(summary.llm_candidates)
    for status in (NEEDS_REVIEW, VERIFIED, UNVERIFIED):
        group = [e for e in entries if e["verification_status"] == status]
        lines += ["", f"{titles[status]}: {len(group)}"]
        for e in group:
            line = f"- {e['calculation_id']}: value={e['value']!r}"
            if e.get("check_value") is not None:
                line += f" re-computed={e['check_value']!r} ({e.get('verification_method')})"
            if status == NEEDS_REVIEW:
                line += f" -- {e.get('reason', '')}"
            if status == UNVERIFIED and e["calculation_id"] in candidates:
                line += f" [{e.get('importance')}; selected for script verification]"
                detail = summary.candidate_details.get(e["calculation_id"])
                if detail:
                    line += "\n  " + describe_candidate(e["calculation_id"], detail)[2:]
            lines.append(line)
    return "\n".join(lines) + "\n"


def _guard_joins(
    job_dir: Path,
    calcs: list[dict[str, Any]],
    entries: list[dict[str, Any]],
    views: Mapping[str, CachedTable],
    factory: ConnectionFactory | None,
) -> None:
    """Mark ``needs_review`` each calculation across a join that no longer keeps every row once (see
    :mod:`insightloom.validation.joins`); jobs without joined views read nothing more."""
    if not any(isinstance(calc.get("join"), dict) for calc in calcs):
        return
    profile = read_json(job_dir / PROFILE_FILE, PROFILE_FILE, "re-run intake", beneath=job_dir)
    for index, reason in join_problems(calcs, views or load_views(job_dir), profile,
                                       connection_factory=factory).items():  # fmt: skip
        entries[index].update(verification_status=NEEDS_REVIEW, reason=reason)


def validate_job(job_dir: Path, *, connection_factory: ConnectionFactory | None = None) -> ValidationSummary:
    """Re-compute every checked calculation in DuckDB and write citations.json and validation_report.txt.

    Args:
        job_dir: The job folder (reads calculation_metadata.json, cache/profile.json and the Parquet files it records).
        connection_factory: Makes the DuckDB connection; tests pass a wrapper that counts executes.

    Returns:
        The :class:`ValidationSummary`.

    Raises:
        ValidationError: calculation_metadata.json is missing or malformed.
    """
    job_dir = Path(job_dir)
    calcs = load_calculations(job_dir)
    previous = _previous_entries(job_dir)
    entries = [_entry(calc, previous.get(str(calc["id"]))) for calc in calcs]
    claimed = [i for i, calc in enumerate(calcs) if is_stat_check(calc)]
    untested = [i for i, calc in enumerate(calcs) if is_claim_without_test(calc)]
    checked = [i for i, calc in enumerate(calcs) if has_check(calc) and not is_stat_check(calc) and i not in untested]
    for index in untested:
        entries[index].update(verification_status=NEEDS_REVIEW, reason=CLAIM_NEEDS_STAT)
    started = time.perf_counter()
    views = load_views(job_dir) if checked or claimed else {}
    checks = [calcs[i]["check"] for i in checked]
    memo = HOST_MEMO if connection_factory is None else None  # a test's counting factory sees every query
    outcomes, queries = run_checks(checks, views, connection_factory=connection_factory, memo=memo)
    if claimed:
        claims = verify_claims([calcs[i] for i in claimed], views, connection_factory=connection_factory, memo=memo)
        for index, claim in zip(claimed, claims, strict=True):
            entries[index].update(
                verification_method="stat",
                check_value=claim.verdict,
                verification_status=VERIFIED if claim.verified else NEEDS_REVIEW,
                reason=claim.reason,
            )
    for index, outcome in zip(checked, outcomes, strict=True):
        entry = entries[index]
        entry["verification_method"] = "check"
        if outcome.error:
            entry.update(verification_status=NEEDS_REVIEW, reason=outcome.error)
            continue
        comparison = values_match(calcs[index]["value"], outcome.value)
        entry.update(
            check_value=json_safe(outcome.value),
            verification_status=VERIFIED if comparison.match else NEEDS_REVIEW,
            reason=comparison.reason,
        )
    for calc, entry in zip(calcs, entries, strict=True):
        old = previous.get(entry["calculation_id"])
        if old is not None and _kept_llm_result(calc, old):
            for key in ("verification_status", "verification_method", "check_value", "reason"):
                entry[key] = old.get(key)
    _guard_joins(job_dir, calcs, entries, views, connection_factory)
    summary = _summarise(job_dir, entries, calcs)
    summary.queries, summary.seconds = queries, time.perf_counter() - started
    _write_outputs(job_dir, entries, summary)
    logger.info("validated %s: %s", job_dir.name, summary.to_text().splitlines()[0])
    return summary


def record_llm_verification(job_dir: Path, results: Mapping[str, object]) -> ValidationSummary:
    """Record the Validator's own re-computations for calculations without a check.

    Each result is compared with the tracked value by the same rule as checks. Only calculations the tiers selected
    are recorded: the others stay ``unverified`` by design, and a calculation with a check keeps its deterministic
    status. Every id not recorded is named in ``summary.rejected`` with the reason.

    Args:
        job_dir: The job folder.
        results: Calculation id -> re-computed value (or ``{"value": ...}``).

    Returns:
        The updated :class:`ValidationSummary`.
    """
    job_dir = Path(job_dir)
    calcs = load_calculations(job_dir)
    if load_citations(job_dir, required=False) is None:
        validate_job(job_dir)
    data = load_citations(job_dir)
    by_id = {str(c["id"]): c for c in calcs}
    selected = set(select_for_llm(calcs))
    old = {str(e.get("calculation_id")): e for e in data["citations"]}
    entries = [_carry_status(_entry(calc, old.get(str(calc["id"]))), old.get(str(calc["id"]))) for calc in calcs]
    index = {e["calculation_id"]: e for e in entries}
    rejected: dict[str, str] = {}
    for calc_id, raw in results.items():
        calc = by_id.get(str(calc_id))
        if calc is None:
            rejected[str(calc_id)] = "no tracked calculation has this id"
        elif calc.get("kind") == "claim":
            rejected[str(calc_id)] = CLAIM_NEEDS_STAT
        elif has_check(calc):
            rejected[str(calc_id)] = "it has a SQL check; the check result stands"
        elif str(calc_id) not in selected:
            rejected[str(calc_id)] = "the tiers did not select it; it stays unverified"
        else:
            value = raw.get("value") if isinstance(raw, Mapping) else raw
            comparison = values_match(calc["value"], value)
            index[str(calc_id)].update(
                verification_status=VERIFIED if comparison.match else NEEDS_REVIEW,
                verification_method="llm",
                check_value=json_safe(value),
                reason=comparison.reason,
            )
    for calc_id, why in rejected.items():
        logger.warning("LLM verification of %r not recorded: %s", calc_id, why)
    _guard_joins(job_dir, calcs, entries, {}, None)
    summary = _summarise(job_dir, entries, calcs)
    summary.rejected, summary.checks_run = rejected, False
    _write_outputs(job_dir, entries, summary)
    return summary
