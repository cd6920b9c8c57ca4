"""Issue 11, item 2: a near-miss reference (``{calc:x}``, the f-string slip) is never printed raw. The renderer
refuses it with the exact correction, and the audit reports one left in a DOCX as an undefined marker (C)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from docx import Document

from insightloom.calc_refs import find_near_misses
from insightloom.errors import RenderRefused
from insightloom.report.audit import audit_report
from insightloom.report.render import render_report

NEAR_MISSES = ["{calc:total_revenue}", "{{calc:total_revenue}", "{calc:total_revenue}}", "{{Calc:total_revenue}}"]


@pytest.mark.parametrize("written", [*NEAR_MISSES, "{{{calc:total_revenue}}}"])
def test_the_renderer_refuses_a_near_miss_with_the_exact_fix(job: Path, written: str) -> None:
    markdown = f"# Sales\n\n## Summary\nRevenue was {written} in total.\n"
    with pytest.raises(RenderRefused) as info:
        render_report(markdown, job)
    misses = [p for p in info.value.problems if p.get("kind") == "near_miss"]  # type: ignore[attr-defined]
    assert [(p["written"], p["section"]) for p in misses] == [(written, "Summary")]
    text = str(info.value)
    assert f"write {{{{calc:total_revenue}}}} instead of {written}" in text
    assert 'in an f-string that is f"{{{{calc:{cid}}}}}"' in text
    assert not (job / "final_report.docx").exists()


def test_every_near_miss_is_listed_at_once(job: Path) -> None:
    markdown = (
        "# Sales\n\n## Summary\nRevenue {calc:total_revenue}.\n\n## Detail\n| K | V |\n|---|---|\n| A | {calc:roas} |\n"
    )
    with pytest.raises(RenderRefused) as info:
        render_report(markdown, job)
    found = [(p["written"], p["section"]) for p in info.value.problems if p.get("kind") == "near_miss"]  # type: ignore[attr-defined]
    assert found == [("{calc:total_revenue}", "Summary"), ("{calc:roas}", "Detail")]


def test_inner_spaces_are_a_reference(job: Path) -> None:
    result = render_report("# Sales\n\n## Summary\nRevenue was {{ calc : total_revenue }}.\n", job)
    assert result.markers == {"total_revenue": "[1]"}


def test_an_unknown_id_names_the_closest_tracked_ones(job: Path) -> None:
    with pytest.raises(RenderRefused, match=r"closest tracked ids: total_revenue"):
        render_report("# Sales\n\n## Summary\nRevenue was {{calc:total_revenu}}.\n", job)


@pytest.mark.parametrize("written", [*NEAR_MISSES, "{{calc:total_revenue}}"])
def test_a_reference_left_in_the_docx_is_an_undefined_marker(job: Path, schema, written: str) -> None:
    docx = render_report("# Sales\n\n## Summary\nRevenue was {{calc:total_revenue}}.\n", job).docx_path
    doc = Document(str(docx))
    doc.paragraphs[2].insert_paragraph_before(f"Average revenue was {written} per row.")
    doc.save(str(docx))
    result = audit_report(job)
    c = [f for f in result.findings if f["type"] == "C"]
    assert [(f["marker"], f["severity"]) for f in c] == [(written, "block")]
    assert "{{calc:total_revenue}}" in c[0]["suggested_fix"]
    assert result.verdict == "retry"
    schema("audit_findings", json.loads((job / "audit_findings.json").read_text(encoding="utf-8")))


LEFTOVERS = [
    ("{{calc: total revenue}}", "write {{calc:total_revenue}} instead of {{calc: total revenue}}"),
    ("{{ calc.total_revenue }}", "write {{calc:total_revenue}} instead of {{ calc.total_revenue }}"),
    ("{{total_revenue}}", "write {{calc:total_revenue}} instead of {{total_revenue}}"),
    ("{{calc:}}", "names no calculation"),
    ("{{ revenue }}", "names no calculation"),
]


@pytest.mark.parametrize(("written", "advice"), LEFTOVERS)
def test_any_leftover_braces_are_refused_with_the_fix(job: Path, written: str, advice: str) -> None:
    with pytest.raises(RenderRefused) as info:
        render_report(f"# Sales\n\n## Summary\nRevenue was {written} in total.\n", job)
    misses = [p for p in info.value.problems if p.get("kind") == "near_miss"]  # type: ignore[attr-defined]
    assert [p["written"] for p in misses] == [written]
    assert advice in str(info.value)


@pytest.mark.parametrize(("written", "advice"), LEFTOVERS)
def test_leftover_braces_in_the_docx_are_an_undefined_marker(job: Path, written: str, advice: str) -> None:
    docx = render_report("# Sales\n\n## Summary\nRevenue was {{calc:total_revenue}}.\n", job).docx_path
    doc = Document(str(docx))
    doc.paragraphs[2].insert_paragraph_before(f"Average revenue was {written} per row.")
    doc.save(str(docx))
    result = audit_report(job)
    assert [f["marker"] for f in result.findings if f["type"] == "C"] == [written]
    assert result.verdict == "retry"


def test_single_braces_without_calc_are_prose(job: Path) -> None:
    render_report("# Sales\n\n## Summary\nThe set {North, South} had {{calc:total_revenue}}.\n", job)
    assert audit_report(job).verdict == "pass"


def test_the_correction_names_the_tracked_id_whatever_the_case(job: Path) -> None:
    with pytest.raises(RenderRefused) as info:
        render_report("# Sales\n\n## Summary\nRevenue was {{Calc:TOTAL_REVENUE}}.\n", job)
    assert "write {{calc:total_revenue}} instead of {{Calc:TOTAL_REVENUE}}" in str(info.value)


def test_finding_near_misses_is_linear_in_runs_of_braces() -> None:
    started = time.perf_counter()
    for text in ("{" * 40_000, "{" * 40_000 + "calc:x", "}" * 40_000, "{calc:" * 10_000):
        find_near_misses(text)
    assert time.perf_counter() - started < 1.0  # a quadratic search took 3.5 s for 20,000 braces
