"""Evidence-checked completion: a plan item is ticked only when the job files show it was done.

An agent's word is not enough for ``[x]``. What counts as evidence, per role:

- Coder: a section of ``all_results.txt`` for the item (its ``plan_item``, wording normalised) that lists a
  calculation tracked in ``calculation_metadata.json`` or a chart saved with ``save_chart`` under ``charts/``;
- Validator, Reporter, Auditor: the host tool ran in this job (``validate_calculations``, ``render_report``,
  ``audit_report`` count their successful runs in ``JobRuntime.evidence``) *and* its file is there
  (``citations.json``, ``final_report.docx``, ``audit_findings.json``). A file alone proves nothing: any script can
  write one.

An agent may instead report a Coder item as not possible, with a reason: it is marked ``[~]`` on its word, because
an honest "cannot be done" needs no files. The Validator's, Reporter's and Auditor's items are mandatory and never
not possible. Job files are read without following links a script may have planted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analysis_utils.result_notes import RESULTS_FILE, ResultSection, parse_results
from ..errors import InsightloomError
from ..fileio import is_regular_file, read_json, read_text
from ..plan import (
    DISPLAY,
    Plan,
    PlanItem,
    PlanSection,
    find_items,
    parse_plan,
    same_item,
    set_items,
    split_not_possible,
)
from ..printable import printable_name
from ..report.labels import load_labels, typed_claims
from ..runtime import EvidenceKind
from ..validation.jobfiles import load_calculations, load_citations

CODER_FIX = (
    "append_result(..., plan_item=<exact item>) with a tracked calculation or a save_chart chart, "
    "or report the item as not possible with a reason"
)
NOT_POSSIBLE_FORMAT = "'<exact item> — not possible: <reason>'"
_MAX_LISTED = 8


@dataclass
class Settlement:
    """What one ``update_plan`` call changed, and what it refused (each refusal names the fix)."""

    text: str
    ticked: list[str] = field(default_factory=list)
    not_possible: list[tuple[str, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.ticked or self.not_possible)


def _regular_file(root: Path, rel: str) -> bool:
    """Whether ``root/rel`` is a regular file inside ``root``, reached without passing through a symbolic link."""
    return is_regular_file(root / rel, beneath=root)


def _results(root: Path) -> list[ResultSection]:
    try:
        return parse_results(read_text(root / RESULTS_FILE, beneath=root))
    except FileNotFoundError:
        return []


def _tracked_ids(root: Path) -> set[str]:
    try:
        return {str(calc["id"]) for calc in load_calculations(root)}
    except InsightloomError:
        return set()


def _chart_path(chart: str) -> str:
    """A chart as listed (``charts/x.png``, ``./charts/x.png``, ``x.png``) as a path under ``charts/``."""
    rel = chart.strip().removeprefix("./")
    return rel if rel.startswith("charts/") else f"charts/{Path(rel).name}"


def _saved_chart(root: Path, chart: str) -> bool:
    """A PNG ``save_chart`` wrote: the image and its title/alt/caption sidecar both exist under ``charts/``."""
    rel = _chart_path(chart)
    return rel.endswith(".png") and _regular_file(root, rel) and _regular_file(root, rel[:-4] + ".json")


def _evidence_owners(sections: Sequence[ResultSection]) -> dict[str, str]:
    """Each listed calculation id and chart path -> the plan item of the first section (file order) listing it.

    One piece of work is evidence for one item: a script that lists one ``total`` under every item ticks only the
    first. A section without a plan item ticks nothing, so it owns nothing either.
    """
    owners: dict[str, str] = {}
    for section in sections:
        if section.plan_item.strip():
            for key in [*section.calculations, *(_chart_path(c) for c in section.charts)]:
                owners.setdefault(key, section.plan_item)
    return owners


def _reused_problem(item: str, reused: dict[str, str]) -> str:
    shown = "; ".join(
        f"{printable_name(key)} (already evidence for '{owner}')" for key, owner in list(reused.items())[:_MAX_LISTED]
    )
    return (
        f"'{item}': its all_results.txt section lists only evidence an earlier section already counts: {shown}. "
        "One calculation or chart is evidence for one item. Fix: track a calculation or save a chart for this "
        "item and list it in its own append_result(..., plan_item=<exact item>), or report the item as not "
        "possible with a reason."
    )


def coder_evidence_problem(root: Path, item: str) -> str | None:
    """None when ``all_results.txt`` shows the Coder did ``item``; otherwise what is missing and the fix.

    A tracked calculation or a saved chart counts only for the first section that lists it (see
    :func:`_evidence_owners`).
    """
    results = _results(root)
    sections = [s for s in results if same_item(s.plan_item, item)]
    if not sections:
        return f"'{item}': all_results.txt has no section with plan_item matching this item. Fix: {CODER_FIX}."
    tracked, owners = _tracked_ids(root), _evidence_owners(results)
    reused: dict[str, str] = {}
    for section in sections:
        found = [c for c in section.calculations if c in tracked]
        found += [_chart_path(c) for c in section.charts if _saved_chart(root, c)]
        if any(same_item(owners[key], item) for key in found):
            return None
        reused.update({key: owners[key] for key in found})
    if reused:
        return _reused_problem(item, reused)
    listed = [c for s in sections for c in s.calculations] + [c for s in sections for c in s.charts]
    what = f"lists {', '.join(printable_name(name) for name in listed[:_MAX_LISTED])}, but" if listed else "lists"
    return (
        f"'{item}': its all_results.txt section {what} no calculation tracked in calculation_metadata.json and no "
        f"chart saved with save_chart under charts/. Fix: {CODER_FIX}."
    )


def _file_problem(root: Path, item: str, rel: str, fix: str) -> str | None:
    return None if _regular_file(root, rel) else f"'{item}': {rel} does not exist yet. Fix: {fix}."


def _citations_problem(root: Path, item: str, fix: str) -> str | None:
    try:
        found = load_citations(root, required=False)
    except InsightloomError as exc:
        return f"'{item}': {exc.message}. Fix: {fix}."
    return None if found is not None else f"'{item}': citations.json does not exist yet. Fix: {fix}."


def _audit_problem(root: Path, item: str, fix: str) -> str | None:
    problem = _file_problem(root, item, "audit_findings.json", fix)
    if problem:
        return problem
    try:
        read_json(root / "audit_findings.json", beneath=root)
    except (OSError, ValueError, InsightloomError) as exc:
        return f"'{item}': audit_findings.json cannot be read ({exc}). Fix: {fix}."
    return None


def _report_problem(root: Path, item: str, fix: str) -> str | None:
    return _file_problem(root, item, "final_report.docx", fix)


@dataclass(frozen=True)
class _HostEvidence:
    """A mandatory role: its evidence is its host tool's run in this job (``JobRuntime.evidence[kind]``) and the
    file the tool writes; ``mandatory`` says why its items are never "not possible"."""

    kind: EvidenceKind
    tool: str
    file: str
    file_problem: Callable[[Path, str, str], str | None]
    mandatory: str


HOST_EVIDENCE = {
    "validator": _HostEvidence(
        "validated", "validate_calculations()", "citations.json", _citations_problem, "every number is re-computed"
    ),
    "reporter": _HostEvidence(
        "rendered", "render_report()", "final_report.docx", _report_problem, "the report is what the job delivers"
    ),
    "auditor": _HostEvidence(
        "audited", "audit_report()", "audit_findings.json", _audit_problem, "every report is audited"
    ),
}


def _host_problem(root: Path, role: str, item: str, evidence: Mapping[str, int]) -> str | None:
    need = HOST_EVIDENCE[role]
    fix = f"the {DISPLAY[role]} calls {need.tool} first, then lists the item as completed"
    if not evidence.get(need.kind):
        return (
            f"'{item}': {need.tool} has not run successfully in this job, so {need.file} (which any script can "
            f"write) is no evidence. Fix: {fix}."
        )
    return need.file_problem(root, item, fix)


def evidence_problem(root: Path, role: str, item: str, evidence: Mapping[str, int]) -> str | None:
    """None when this job shows ``role`` did ``item``; otherwise what is missing and the fix.

    Args:
        root: The job folder.
        role: The item's section.
        item: The item's wording.
        evidence: ``JobRuntime.evidence``: how often each host tool succeeded in this job.
    """
    if role == "coder":
        return coder_evidence_problem(root, item)
    if role in HOST_EVIDENCE:
        return _host_problem(root, role, item, evidence)
    return None


def _listing(pairs: Sequence[tuple[PlanSection, PlanItem]]) -> str:
    shown = [f"'{item.text}' ({DISPLAY[section.role]})" for section, item in pairs[:_MAX_LISTED]]
    return "; ".join(shown) + ("; …" if len(pairs) > _MAX_LISTED else "")


@dataclass
class _Unresolved:
    """Why an entry names no single open item; ``settled`` when it names one that needs nothing more."""

    message: str
    settled: bool = False

    def record(self, out: Settlement) -> None:
        (out.notes if self.settled else out.refused).append(self.message)


def _resolve(plan: Plan, wanted: str) -> tuple[PlanSection, PlanItem] | _Unresolved:
    """The one open item ``wanted`` names, or why not (not found, ambiguous, already settled)."""
    candidates = find_items(plan, wanted)
    open_ones = [(s, i) for s, i in candidates if not i.settled]
    if len(open_ones) == 1:
        return open_ones[0]
    if len(open_ones) > 1:
        return _Unresolved(
            f"'{wanted}' matches several open items: {_listing(open_ones)}. Fix: pass one item's exact wording."
        )
    if candidates:
        state = "marked not possible" if candidates[0][1].not_possible else "checked"
        return _Unresolved(f"'{wanted}' is already {state}.", settled=True)
    open_items = [(s, i) for s, i in plan.items() if not i.settled and s.role != "tracker"]
    return _Unresolved(
        f"'{wanted}': no open plan item has this wording. Fix: copy the item's exact wording from the plan"
        + (f"; open items: {_listing(open_items)}." if open_items else "; every item is settled already.")
    )


def _as_pair(entry: str | dict[str, Any]) -> tuple[str, str]:
    """An ``update_plan`` not-possible entry (text or ``{"item", "reason"}``) as ``(item, reason)``."""
    if isinstance(entry, dict):
        return str(entry.get("item", "")).strip(), str(entry.get("reason", "")).strip()
    return split_not_possible(entry) or (entry.strip(), "")


def _settle_done(
    root: Path, evidence: Mapping[str, int], plan: Plan, wanted: str, taken: list[PlanItem], out: Settlement
) -> None:
    resolved = _resolve(plan, wanted)
    if isinstance(resolved, _Unresolved):
        resolved.record(out)
        return
    section, item = resolved
    problem = evidence_problem(root, section.role, item.text, evidence)
    if problem:
        out.refused.append(problem)
        return
    item.checked = True
    taken.append(item)
    out.ticked.append(item.text)


def reason_numbers(root: Path, reason: str) -> list[str]:
    """The claim-numbers in a not-possible reason (the data's names, such as a column ``col_2``, are no claims).

    The reason is printed under the report's limitations, where no citation checks it.
    """
    return [token.text for token in typed_claims(reason, load_labels(root))]


def _settle_not_possible(
    root: Path, plan: Plan, entry: str | dict[str, Any], taken: list[PlanItem], out: Settlement
) -> None:
    wanted, reason = _as_pair(entry)
    resolved = _resolve(plan, wanted)
    if isinstance(resolved, _Unresolved):
        resolved.record(out)
        return
    section, item = resolved
    if not reason:
        out.refused.append(f"'{item.text}': a not-possible item needs a reason. Fix: pass {NOT_POSSIBLE_FORMAT}.")
        return
    numbers = reason_numbers(root, reason)
    if numbers:
        out.refused.append(
            f"'{item.text}': the reason holds the number(s) {', '.join(repr(n) for n in numbers[:_MAX_LISTED])}, "
            "which would reach the report's limitations unchecked. Fix: give the reason in words (what is "
            "missing or why it cannot be done); numbers reach the report only as cited calculations."
        )
        return
    mandatory = HOST_EVIDENCE.get(section.role)
    if mandatory is not None:
        out.refused.append(
            f"'{item.text}': the {DISPLAY[section.role]}'s items cannot be marked not possible; "
            f"{mandatory.mandatory}. Fix: call the {section.role}, which lists the item as completed once "
            f"{mandatory.tool} ran."
        )
        return
    item.not_possible, item.reason = True, " ".join(reason.split())
    taken.append(item)
    out.not_possible.append((item.text, item.reason))


def settle_items(
    root: Path,
    plan_text: str,
    items: Sequence[str],
    not_possible: Sequence[str | dict[str, Any]] = (),
    *,
    evidence: Mapping[str, int],
) -> Settlement:
    """Tick the items this job shows were done and mark the not-possible ones; refuse the rest.

    Args:
        root: The job folder, where the evidence files live.
        plan_text: The current plan.
        items: Wordings of items reported completed (normalised matching; an entry written
            ``<item> — not possible: <reason>`` is taken as a not-possible report).
        not_possible: ``"<item> — not possible: <reason>"`` entries, or ``{"item", "reason"}`` dicts.
        evidence: ``JobRuntime.evidence``: how often each host tool succeeded in this job.

    Returns:
        The new plan text and what was ticked, marked, refused (with fixes) or already settled.
    """
    plan = parse_plan(plan_text)
    out = Settlement(plan_text)
    taken: list[PlanItem] = []
    reported_impossible = [entry for entry in items if split_not_possible(entry)]
    for wanted in items:
        if wanted not in reported_impossible:
            _settle_done(root, evidence, plan, wanted, taken, out)
    for entry in [*not_possible, *reported_impossible]:
        _settle_not_possible(root, plan, entry, taken, out)
    out.text = set_items(plan_text, taken)
    return out


def not_possible_records(plan_text: str) -> list[dict[str, str]]:
    """Every not-possible item as ``{"item", "reason", "role"}``, for ``job.json``; the reason is never empty
    (a ``[~]`` line without one reads :data:`~insightloom.plan.UNSTATED_REASON`)."""
    return [
        {"item": item.text, "reason": item.reason, "role": section.role}
        for section, item in parse_plan(plan_text).items()
        if item.not_possible
    ]
