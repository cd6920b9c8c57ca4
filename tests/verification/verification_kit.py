"""Helpers for the verification tests: run a whole offline job with one role scripted, and read what it left."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from docx import Document
from scripted import ScriptedModel

from insightloom.agents import factory
from insightloom.config import Settings
from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import Conversation, Reply
from insightloom.models.offline.roles.role_helpers import plan_items, standard_response
from insightloom.workflow import AutoApprove, JobOptions, JobOutcome, run_job

REQUEST = "Analyze this sales data and write a report"


def sales_csv(path: Path, *, seed: int = 3, rows: int = 90) -> Path:
    """Write a small sales table: daily dates, region and channel, units and revenue."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "date": pd.date_range("2025-01-01", periods=rows, freq="D").strftime("%Y-%m-%d"),
            "region": rng.choice(["North", "South", "East"], rows),
            "channel": rng.choice(["Web", "Store"], rows),
            "units": rng.integers(1, 20, rows),
            "revenue": rng.integers(100, 2000, rows),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def run_scripted(
    monkeypatch: pytest.MonkeyPatch,
    job_dir: Path,
    inputs: list[Path],
    role: str | None = None,
    script: list | None = None,
) -> tuple[JobOutcome, ScriptedModel | None]:
    """Run one job on the offline model, with ``role`` playing ``script`` first (None: no scripted role)."""
    scripted = ScriptedModel(role, script or []) if role else None

    def fake_make_model(spec: Any, agent_role: str, settings: Any) -> OfflineModel:
        if scripted is not None and agent_role == role:
            return scripted
        return OfflineModel(role=agent_role, max_tokens=spec.max_tokens)

    monkeypatch.setattr(factory, "make_model", fake_make_model)
    settings = Settings(provider="offline").with_provider("offline")
    opts = JobOptions(inputs=inputs, request=REQUEST, settings=settings, job_dir=job_dir, cwd=job_dir.parent)
    return run_job(opts, AutoApprove()), scripted


def read(job_dir: Path, name: str) -> Any:
    return json.loads((job_dir / name).read_text(encoding="utf-8"))


def citations(job_dir: Path) -> dict[str, dict[str, Any]]:
    return {c["calculation_id"]: c for c in read(job_dir, "citations.json")["citations"]}


def docx_text(job_dir: Path) -> str:
    """Every paragraph and table cell of the final report, in order."""
    doc = Document(str(job_dir / "final_report.docx"))
    parts = [p.text for p in doc.paragraphs]
    parts += [cell.text for table in doc.tables for row in table.rows for cell in row.cells]
    return "\n".join(parts)


def invocations(job_dir: Path, role: str) -> int:
    return len(read(job_dir, f"transcripts/{role}.json")["invocations"])


def first_verified(job_dir: Path, unit: str = "count", *, marked: bool = False) -> dict[str, Any]:
    """The first verified calculation of a unit (a number the scripted Reporter can cite); ``marked``: one the report
    prints with a marker (not a trivial count such as the number of rows, printed bare)."""
    from insightloom.report.appendix import is_trivial

    return next(
        c
        for c in citations(job_dir).values()
        if c["verification_status"] == "verified" and c["unit"] == unit and not (marked and is_trivial(c))
    )


def draft_with_b_defect(job_dir: Path) -> Callable[[Conversation], Reply]:
    """A scripted Reporter step: a draft citing one number properly and typing a marker with no value before it.

    (A typed value before the marker, "1000 [1]", never renders: the renderer refuses the typed number.)
    """

    def step(conv: Conversation) -> Reply:
        calc = first_verified(job_dir, marked=True)
        markdown = (
            "# Sales report\n\n## Summary\n\n"
            f"The data has {{{{calc:{calc['calculation_id']}}}}} rows.\n\n"
            "## Details\n\n"
            "Counted again, the rows are [1]. This sentence stays.\n\n"
            "## Closing\n\nEvery figure is cited.\n"
        )
        return Reply.call("render_report", markdown=markdown)

    return step


def done(conv: Conversation) -> Reply:
    """A scripted tool agent's final answer, completing its plan items."""
    return Reply(text=standard_response("SUCCESS", plan_items(conv), ["Rendered the report."], ["final_report.docx"]))


def marker_count(text: str) -> int:
    return len(set(re.findall(r"\[(\d+)\]", text)))
