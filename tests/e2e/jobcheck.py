"""Assertions shared by the end-to-end tests: the job folder honours every contract and the report is cited."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
from docx import Document

from insightloom.claims.wording import claim_text
from insightloom.report.formatting import format_value
from repo_paths import load_contract

ROLES = ("coordinator", "planner", "supervisor", "coder", "validator", "reporter", "tracker", "auditor")
REFERENCE_HEADINGS = ("References", "참고 문헌")


def body_text(docx: Path) -> tuple[str, int, int]:
    """Body text (paragraphs and table cells, references excluded), embedded picture count, table count."""
    doc = Document(str(docx))
    parts: list[str] = []
    for paragraph in doc.paragraphs:
        if paragraph.text.strip() in REFERENCE_HEADINGS:
            break
        parts.append(paragraph.text)
    for table in doc.tables:
        for row in table.rows:
            parts.extend(cell.text for cell in row.cells)
    return "\n".join(parts), len(doc.inline_shapes), len(doc.tables)


def check_job(job_dir: Path, *, min_charts: int, min_markers: int) -> dict:
    """Assert the finished job is complete, valid and fully cited; return facts for further checks."""
    files = ("job", "request", "shared_state", "calculation_metadata", "citations", "audit_findings", "usage")
    validate = {name: load_contract(name) for name in (*files, "event")}
    for name in files:
        jsonschema.validate(json.loads((job_dir / f"{name}.json").read_text(encoding="utf-8")), validate[name])
    events = [json.loads(line) for line in (job_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    for event in events:
        jsonschema.validate(event, validate["event"])
    assert [e["id"] for e in events] == sorted(e["id"] for e in events)
    job = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
    assert job["status"] == "completed" and job["stage"] == "done", job
    run_info = json.loads((job_dir / "run_info.json").read_text(encoding="utf-8"))
    assert run_info["isolation_level"] in ("bwrap+cgroup", "bwrap", "landlock+ns", "landlock", "none")
    expected = os.environ.get("INSIGHTLOOM_EXPECT_ISOLATION")
    assert not expected or run_info["isolation_level"] == expected
    audit = json.loads((job_dir / "audit_findings.json").read_text(encoding="utf-8"))
    assert audit["verdict"] == "pass", audit["findings"][:5]
    assert audit["stats"]["type_b"] == 0 and audit["stats"]["type_c"] == 0
    for role in ROLES:
        transcript = json.loads((job_dir / "transcripts" / f"{role}.json").read_text(encoding="utf-8"))
        assert transcript["invocations"], role
    usage = json.loads((job_dir / "usage.json").read_text(encoding="utf-8"))
    assert all(usage["agents"][role]["calls"] > 0 for role in ROLES)
    assert usage["total"]["input_tokens"] > 0
    text, charts, tables = body_text(job_dir / "final_report.docx")
    markers = set(re.findall(r"\[(\d+)\]", text))
    assert charts >= min_charts and tables >= 1, (charts, tables)
    assert len(markers) >= min_markers, markers
    citations = json.loads((job_dir / "citations.json").read_text(encoding="utf-8"))["citations"]
    calcs = {c["id"]: c for c in json.loads((job_dir / "calculation_metadata.json").read_text())["calculations"]}
    by_marker = {c["citation_id"]: c for c in citations if c["citation_id"]}
    for number in markers:
        cited = by_marker[f"[{number}]"]
        assert cited["verification_status"] == "verified"
        calc = calcs[cited["calculation_id"]]
        if calc.get("kind") == "claim":  # a claim prints its sentence, in the report's language
            printed_claims = [claim_text(calc, language) for language in ("en", "ko")]
            assert any(f"{p} [{number}]" in text for p in printed_claims), (printed_claims, number)
            continue
        printed = format_value(calc["value"], calc.get("unit"), calc.get("decimals"))
        assert f"{printed} [{number}]" in text, (printed, number)
    return {"text": text, "markers": markers, "charts": charts, "events": events}
