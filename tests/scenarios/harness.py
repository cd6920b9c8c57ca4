"""Run one whole offline job with LLM-like deviations in chosen roles, and judge its outcome.

The outcome classes are the issue's: a job ends ``completed`` with every printed number verified and cited (checked
by the e2e tests' independent checker, not by the product's audit alone), or it ends ``needs_review`` or ``failed``
with a reason that names the cause. Nothing in between, and nothing may crash.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from llm_like import Deviation, LlmLike

from insightloom.agents import factory
from insightloom.config import Settings
from insightloom.models.bedrock import make_bedrock
from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import ToolExchange
from insightloom.testing.bedrock_endpoint import BedrockEndpoint, ModelBrain, RoleRouter
from insightloom.workflow import AutoApprove, JobOptions, run_job
from insightloom.workflow.pipeline import JobOutcome
from small_sales import write_small_sales_csv

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from jobcheck import body_text, check_job  # the e2e tests' independent checker

REQUEST = "Analyze this sales data and write a report"


@dataclass
class ScenarioRun:
    outcome: JobOutcome
    job_dir: Path
    models: dict[str, LlmLike]

    def results(self, role: str, tool: str | None = None) -> list[ToolExchange]:
        """Every tool exchange the role's model saw in its last conversation of each invocation."""
        seen: dict[str, ToolExchange] = {}
        for conv in self.models[role].seen:
            for index, exchange in enumerate(conv.exchanges()):
                if tool is None or exchange.name == tool:
                    seen[f"{conv.messages[0]!r}:{index}"] = exchange
        return list(seen.values())

    def errors(self, role: str, tool: str | None = None) -> list[str]:
        return [e.result for e in self.results(role, tool) if e.status == "error"]

    def job(self) -> dict[str, Any]:
        return json.loads((self.job_dir / "job.json").read_text(encoding="utf-8"))


def run_scenario(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    deviations: dict[str, Deviation],
    *,
    csv: Path | None = None,
    request: str = REQUEST,
    endpoint: BedrockEndpoint | None = None,
    **settings: Any,
) -> ScenarioRun:
    """One job on a small sales table; ``deviations`` maps a role to its deviation, other roles behave.

    With ``endpoint`` (the strict Bedrock lane) each role's LLM-like model answers behind the strict endpoint, and the
    job calls it through the product's own ``BedrockModel``: every request is checked against Bedrock's rules.
    """
    models: dict[str, LlmLike] = {}
    router = RoleRouter({"summarization": ModelBrain(OfflineModel(role="coordinator"))}) if endpoint else None

    def make_model(spec, role, model_settings):
        deviation = deviations.get(role, lambda n, conv, brain: None)
        # The strict lane's brain writes at a hosted model's length: requests of a real job's size and shape.
        size = "real" if endpoint is not None else "compact"
        models[role] = LlmLike(role, deviation, spec.max_tokens, spec.cache, reply_size=size)
        if router is None:
            return models[role]
        router.brains[role] = ModelBrain(models[role])
        return make_bedrock(spec, model_settings)

    monkeypatch.setattr(factory, "make_model", make_model)
    data = csv or write_small_sales_csv(tmp_path / "sales.csv", rows=90, seed=3)
    provider = "offline"
    if endpoint is not None and router is not None:
        endpoint.brain, provider = router, "bedrock"
        for key, value in {**endpoint.env(), **_no_shared_aws_files(tmp_path)}.items():
            monkeypatch.setenv(key, value)
    resolved = Settings(provider=provider, model_max_attempts=1, **settings).with_provider(provider)
    job_dir = tmp_path / "job"
    opts = JobOptions(inputs=[data], request=request, settings=resolved, job_dir=job_dir, cwd=tmp_path)
    outcome = run_job(opts, AutoApprove())
    if endpoint is not None:  # a broken Bedrock rule fails the scenario, whatever its outcome, naming the rule
        assert not endpoint.violations, "; ".join(str(v) for v in endpoint.violations[:3])
    return ScenarioRun(outcome, job_dir, models)


def _no_shared_aws_files(tmp_path: Path) -> dict[str, str]:
    return {"AWS_CONFIG_FILE": str(tmp_path / "aws-config"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "aws-creds")}


def assert_verified(run: ScenarioRun) -> None:
    """``completed``, and every printed number is a verified, correctly printed, cited calculation."""
    assert run.outcome.status == "completed", run.outcome.error
    facts = check_job(run.job_dir, min_charts=1, min_markers=3)
    audit = json.loads((run.job_dir / "audit_findings.json").read_text(encoding="utf-8"))
    assert audit["stats"]["type_a"] == 0, [f for f in audit["findings"] if f["type"] == "A"][:3]
    text, _, _ = body_text(run.job_dir / "final_report.docx")
    assert not re.search(r"\{+\s*(?:calc|claim)\s*:", text, re.I), "a reference was printed raw"
    assert audit["stats"].get("type_e", 0) == 0, [f for f in audit["findings"] if f["type"] == "E"][:3]
    assert facts["markers"]
    assert not uncited_digits(run.job_dir), uncited_digits(run.job_dir)[:3]


def assert_outcome(run: ScenarioRun, expected: str, *, reason: str | None = None) -> None:
    """The job ended in ``expected``; a completed job is fully verified, any other names ``reason``."""
    if run.outcome.status == "completed":
        assert_verified(run)  # whatever was expected, a completed job must hold every number
    assert run.outcome.status == expected, (run.outcome.status, run.outcome.error)
    assert run.job()["status"] == expected
    if expected != "completed":
        assert reason is not None and run.outcome.error and reason in run.outcome.error, run.outcome.error


_ALLOWED_RES = [
    re.compile(r"\b(?:19|20)\d\d-\d\d(?:-\d\d)?\b"),  # dates and months printed as labels
    re.compile(r"\b(?:19|20)\d\d\b"),  # years
    re.compile(r"(?:Figure|그림|Table|표)\s+\d+"),  # figure and table numbers
    re.compile(r"^\s*\d+[.)]\s", re.M),  # list numbering
    re.compile(r"(?:Top|top|상위|하위)\s+\d\b"),  # "top 5" as a label, never with a unit
]


def uncited_digits(job_dir: Path) -> list[str]:
    """Digits in the report body that are not exactly a cited calculation's printed value and its marker.

    Independent of the product's own label rules: only the printed spans "<value> [N]" of verified citations (a
    claim's "<sentence> [N]"), the bare value of a verified count the report cites with no marker (the number of
    rows, columns or groups), years, dates, figure numbers, list numbering, "top N", and table label cells (header
    row and first column) may hold digits. Returns the offending passages.
    """
    from docx import Document

    from insightloom.claims.wording import claim_text
    from insightloom.report.formatting import format_value

    citations = json.loads((job_dir / "citations.json").read_text(encoding="utf-8"))["citations"]
    meta = json.loads((job_dir / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]
    claims = {c["id"]: c for c in meta if c.get("kind") == "claim"}
    printed: list[tuple[str, str]] = []
    bare = {
        format_value(c["value"], "count", None)
        for c in citations
        if not c["citation_id"] and c["verification_status"] == "verified" and c.get("unit") == "count"
    }
    for c in citations:
        if not c["citation_id"] or c["verification_status"] != "verified":
            continue
        record = claims.get(c["calculation_id"])
        values = [claim_text(record, lang) for lang in ("en", "ko")] if record else []
        values = values or [format_value(c["value"], c.get("unit"), c.get("decimals"))]
        printed += [(c["citation_id"], value) for value in values]
    doc = Document(str(job_dir / "final_report.docx"))
    texts: list[str] = []
    for paragraph in doc.paragraphs:
        if paragraph.text.strip() in ("References", "참고 문헌"):
            break
        texts.append(paragraph.text)
    for table in doc.tables:
        for r, row in enumerate(table.rows):
            texts += [cell.text for c, cell in enumerate(row.cells) if r > 0 and c > 0]
    offending = []
    for text in texts:
        rest = text
        for marker, value in sorted(printed, key=lambda kv: -len(kv[1])):
            rest = rest.replace(f"{value} {marker}", " ")
        for value in bare:
            rest = re.sub(rf"(?<![\d.,]){re.escape(value)}(?![\d.,%]|\s*\[)", " ", rest)
        for pattern in _ALLOWED_RES:
            rest = pattern.sub(" ", rest)
        if re.search(r"\d", rest):
            offending.append(text[:160])
    return offending
