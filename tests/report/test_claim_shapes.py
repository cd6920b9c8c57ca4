"""Issue 11 follow-up, item 1: typed numbers in every shape a model writes are refused at render and flagged A in a
finished DOCX (Korean counters, unit suffixes, "top 40%", quoted claims, short category values, a number next to a
text value's marker), while label shapes stay exempt on both sides. Item 8: the excerpt quotes the number itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docx import Document

from insightloom.errors import RenderRefused
from insightloom.report.audit import audit_report
from insightloom.report.numbers import find_numbers
from insightloom.report.render import render_report
from insightloom.report.repair import repair_refused
from insightloom.validation import validate_job


def _typed(err: RenderRefused) -> list[str]:
    return [p["number"] for p in err.problems if p["kind"] == "typed_number"]  # type: ignore[attr-defined]


def _refused(job: Path, sentence: str) -> list[str]:
    with pytest.raises(RenderRefused) as info:
        render_report(f"# Sales\n\n## Summary\n{sentence} Total {{{{calc:total_revenue}}}}.\n", job)
    assert not (job / "final_report.docx").exists()
    return _typed(info.value)


TYPED_SHAPES = [
    ("총 주문은 34건이며 매출은 1,234만원으로 5배 증가했습니다.", ["34", "1,234", "5"]),
    ("고객 12명이 3회 방문했고 2억 원, 7천 개가 팔렸습니다.", ["12", "3", "2", "7"]),
    ("Revenue rose to 12k with 3x growth, 1.2M visits and 2bn impressions.", ["12", "3", "1.2", "2"]),
    ("The top 40% of customers and the bottom 10.5 bring most revenue.", ["40", "10.5"]),
    ('Managers said revenue "grew 12.5% in 34 stores".', ["12.5", "34"]),
    ("Revenue 'rose 12 percent' in \u201c3 regions\u201d and \u201834건\u2019.", ["12", "3", "34"]),
    ("Revenue rose by USD1200.", ["1200"]),
    ("T1M grew 3.2pp in Q3.", ["3.2"]),
]


@pytest.mark.parametrize(("sentence", "numbers"), TYPED_SHAPES)
def test_typed_numbers_in_any_shape_are_refused(job: Path, sentence: str, numbers: list[str]) -> None:
    assert _refused(job, sentence) == numbers


@pytest.mark.parametrize("sentence", [sentence for sentence, _ in TYPED_SHAPES])
def test_the_repair_drops_every_refused_shape_so_the_draft_renders(job: Path, sentence: str) -> None:
    """A refusal the repair cannot act on leaves the Reporter nothing to do but fail: both read numbers alike."""
    markdown = f"# Sales\n\n## Summary\n{sentence}\n\nTotal {{{{calc:total_revenue}}}}.\n"
    with pytest.raises(RenderRefused) as info:
        render_report(markdown, job)
    repaired = repair_refused(markdown, str(info.value))
    assert sentence not in repaired and "{{calc:total_revenue}}" in repaired
    render_report(repaired, job)
    assert (job / "final_report.docx").is_file()


LABEL_SHAPES = (
    "The 1st and 2nd weeks in Q3 2024; FRUITPROMO5 and `SKU 1042`; customers in their 30s and 50대 고객; "
    '`500ml` bottles on 3월 15일; the Top 5 regions, rank 3, 상위 5개 지역; the tier "Gold 7".'
)


def test_label_shapes_render_and_pass_the_audit(job: Path) -> None:
    render_report(f"# Sales\n\n## Summary\n{LABEL_SHAPES} Total {{{{calc:total_revenue}}}}.\n", job)
    result = audit_report(job)
    assert result.stats["type_a"] == 0 and result.verdict == "pass"


def _profile_categories(job: Path, values: list[object]) -> None:
    profile = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))
    top = [{"value": value, "count": 1} for value in values]
    profile["tables"][0]["columns"] = [{"name": "rating", "role": "category", "top_values": top, "samples": []}]
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")


def test_short_category_values_are_not_labels_in_prose_but_long_ones_are(job: Path) -> None:
    _profile_categories(job, [1, 2, 3, 4, 5, 10001, "2024"])
    assert _refused(job, "Revenue grew 5% and 3 regions were added.") == ["5", "3"]
    markdown = (
        "# Sales\n\n## Summary\nZIP 10001 leads; total {{calc:total_revenue}}.\n\n"
        "| Rating | Orders |\n|---|---|\n| 5 | {{calc:order_count}} |\n"  # a short value in a label cell is fine
    )
    render_report(markdown, job)
    assert audit_report(job).stats["type_a"] == 0


def _track_text_value(job: Path) -> None:
    meta = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))
    meta["calculations"].append(
        {
            "id": "top_region",
            "value": "North",
            "description": "Top region",
            "formula": "mode",
            "source_file": "sales.csv",
            "source_columns": ["region"],
            "importance": "high",
            "check": "SELECT MIN(region) FROM data",
        }
    )
    (job / "calculation_metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    (job / "citations.json").unlink()
    validate_job(job)


def test_a_number_next_to_a_text_values_marker_is_typed(job: Path) -> None:
    _track_text_value(job)
    assert _refused(job, "Sales rose 12.5% led by {{calc:top_region}}.") == ["12.5"]


def test_in_the_docx_only_the_exact_printed_span_is_cited(job: Path) -> None:
    _track_text_value(job)
    docx = render_report("# Sales\n\n## Summary\nThe top region is {{calc:top_region}}.\n", job).docx_path
    doc = Document(str(docx))
    doc.paragraphs[2].insert_paragraph_before("Orders grew 34건 and 5배 over 12k visits.")
    doc.paragraphs[2].insert_paragraph_before("Sales rose 12.5% led by North [1].")
    doc.save(str(docx))
    result = audit_report(job)
    assert [f["body_value"] for f in result.findings if f["type"] == "A"] == ["12.5", "34", "5", "12"]
    assert result.verdict == "retry"


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("Revenue was 16,420,045 KRW [1] and the share 45.2% [3].", []),
        ("In 2025, on 2025-09-01 and 3월 15일, the 3rd week of Q3.", []),
        ("상위 5개 지역, Top 5, #1, No. 5", []),
        ("상위 10%, top 40%, 2024%", ["10", "40", "2024"]),
        ("34건, 1,234만원, 5배, 12k, 3x, 2bn, 3개월", ["34", "1,234", "5", "12", "3", "2", "3"]),
        ("제3회 행사, 30s, 1st, 1990s, 3분기, 2024년에", []),
        ("500ml, 12kg, 3x3 grid", ["500", "12", "3"]),  # a unit outside a name is a measure
    ],
)
def test_claim_shapes_directly(text: str, claims: list[str]) -> None:
    assert [t.text for t in find_numbers(text) if not t.cited] == claims


def test_the_excerpt_quotes_the_number_itself_not_an_earlier_match(job: Path) -> None:
    filler = " ".join(["the bakery has grown steadily since then"] * 4)
    with pytest.raises(RenderRefused) as info:
        render_report(f"# Sales\n\n## Summary\nFounded in 2012, {filler}; today we have 12 stores.\n", job)
    (problem,) = info.value.problems  # type: ignore[attr-defined]
    assert problem["number"] == "12" and "12 stores" in problem["excerpt"]


def test_a_typed_value_before_a_typed_marker_never_renders(job: Path) -> None:
    assert _refused(job, "Counted again, the revenue is 16,420,045 KRW [1].") == ["16,420,045"]
