"""Everything one running job holds: its folder, settings, shared state, usage and counters.

One JobRuntime per job; tools and agents receive it explicitly, so two jobs in one process never meet.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from .config import Settings
from .jobs import JobFolder
from .state import SharedState
from .telemetry import UsageLedger

if TYPE_CHECKING:
    from strands.models import Model

    from .intake import DataProfile
    from .skills import SkillCatalog
    from .telemetry.pricing import PriceTable


#: What the host saw its own tools do in this job, counted by the tools themselves: ``validated`` (validate_calculations
#: wrote citations.json), ``rendered`` (render_report wrote final_report.docx), ``audited`` (audit_report wrote
#: audit_findings.json). Scripts can write those files, so only these counts prove the tool ran.
EvidenceKind = Literal["validated", "rendered", "audited"]
EVIDENCE_KINDS: tuple[EvidenceKind, ...] = ("validated", "rendered", "audited")


def evidence_counts(recorded: Any = None) -> dict[str, int]:
    """The evidence counters, from what job.json recorded (a resumed job) or zero; anything malformed counts 0."""
    found = recorded if isinstance(recorded, dict) else {}
    return {kind: _count(found.get(kind)) for kind in EVIDENCE_KINDS}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class ScriptRun(TypedDict):
    """One script the job ran, for the run metrics in run_info.json."""

    script: str
    seconds: float
    exit_code: int | None


@dataclass
class JobRuntime:
    """The per-job context passed to every agent and tool.

    Attributes:
        job: The job folder.
        settings: Resolved settings (no ``auto`` provider left).
        request: The user's request.
        language: ``ko`` or ``en``: the language the narrative is written in (the request's).
        state: The four-key shared state.
        ledger: Token usage by agent.
        profile: The data profile from intake.
        cwd: The folder the user ran from (for ``./skills``), never the process's changed cwd.
        handoff: Set when the Coordinator hands the request to the Planner.
        audits: How many times the audit ran.
        evidence: How many times validate_calculations, render_report and audit_report succeeded in this job
            (:data:`EVIDENCE_KINDS`); the Tracker ticks Validator, Reporter and Auditor items on these counts.
        last_audit: The SHA-256 of final_report.docx the last audit read, and its verdict; the final status trusts
            the verdict only for that very file (None, e.g. after a resume: the report is audited again).
        cancel: Set to stop the job at the next safe point.
        models: One model object per role, built on first use (offline caches and hosted clients are reused).
        prices: The price table usage is costed with, built on first use.
        skills: The skills catalog the Coder was given, discovered once per job.
        scripts: Every script run so far (name, seconds, exit code).
        status_note: Why the job needs review, stamped on every later render of the report.
        wall_started: When the job's running time started (``agents.guards.clock``), or None before the Supervisor.
        lock_held: True when the caller already holds the job's lock (a worker that checked the job's stage under
            it), so the workflow does not take it again.
    """

    job: JobFolder
    settings: Settings
    request: str
    language: str = "en"
    state: SharedState = field(default_factory=SharedState)
    ledger: UsageLedger = field(default_factory=UsageLedger)
    profile: DataProfile | None = None
    cwd: Path = field(default_factory=Path.cwd)
    handoff: str | None = None
    audits: int = 0
    evidence: dict[str, int] = field(default_factory=evidence_counts)
    last_audit: tuple[str | None, str] | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    models: dict[str, Model] = field(default_factory=dict)
    prices: PriceTable | None = None
    skills: SkillCatalog | None = None
    scripts: list[ScriptRun] = field(default_factory=list)
    status_note: str | None = None
    wall_started: float | None = None
    lock_held: bool = False

    @property
    def root(self) -> Path:
        return self.job.root

    def note_evidence(self, kind: EvidenceKind) -> None:
        """Count one successful run of a host tool (``kind`` one of :data:`EVIDENCE_KINDS`), also in job.json."""
        self.evidence[kind] = self.evidence.get(kind, 0) + 1
        self.job.update(evidence=dict(self.evidence))

    @classmethod
    def create(
        cls, job: JobFolder, settings: Settings, request: str, language: str, cwd: Path | None = None
    ) -> JobRuntime:
        return cls(
            job=job,
            settings=settings,
            request=request,
            language=language,
            state=SharedState(path=job.path("shared_state.json")),
            ledger=UsageLedger(job.path("usage.json")),
            cwd=cwd or Path.cwd(),
        )
