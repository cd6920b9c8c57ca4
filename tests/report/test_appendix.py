"""The references appendix: trivial counts printed bare, entries grouped by section, one line per formula, and the
DOCX layout that keeps tables, figures and headings together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docx import Document
from docx.enum.section import WD_SECTION
from docx.oxml.ns import qn
from report_fixtures import build_job

from insightloom.report import docx_build as build
from insightloom.report.appendix import (
    Entry,
    appendix_groups,
    bare_spans,
    bare_values,
    entry_line,
    first_sections,
    is_appendix_line,
    is_tautological,
    is_trivial,
)
from insightloom.report.audit import audit_report
from insightloom.report.calcinfo import CalcInfo, load_calc_info
from insightloom.report.render import render_report
from insightloom.report.summary_table import summary_table
from insightloom.validation import validate_job

# --- the rules -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("formula", "unit", "trivial"),
    [
        ("len(df)", "count", True),
        ("df.shape[1]", "count", True),
        ("number of Region groups", "count", True),
        ("number of Region groups with a Revenue value", "count", True),
        ("number of month periods", "count", True),
        ("number of rows", "count", True),
        ("number of periods at the highest value", "count", False),  # a finding, not the table's shape
        ("number of analysed columns with the most missing cells", "count", False),
        ("SELECT COUNT(*) FROM data", "count", False),
        ("len(df)", "%", False),
        ("df['Revenue'].sum()", "count", False),
        ("first period", None, True),  # a time axis's end, read off the axis: "from 2000 to 2017" needs no marker
        ("last period", None, True),
        ("period with the highest value (ties: earliest)", None, False),  # a finding
    ],
)
def test_a_trivial_count_is_the_tables_shape_or_its_groups(formula: str, unit: str | None, trivial: bool) -> None:
    record = {"id": "x", "kind": "number", "unit": unit, "formula": formula}
    assert is_trivial(record) is trivial
    info = CalcInfo("x", 3, unit, None, "Number of things", formula, "verified", None)
    assert is_trivial(info) is trivial


def test_a_claim_is_never_a_trivial_count() -> None:
    assert not is_trivial({"kind": "claim", "unit": "count", "formula": "len(df)"})
    claim = CalcInfo("c", "rising", "count", None, "Trend", "len(df)", "verified", None, kind="claim")
    assert not is_trivial(claim)


def test_a_formula_that_repeats_its_description_is_left_out() -> None:
    assert is_tautological("Number of Region groups", "number of Region groups")
    assert is_tautological("First month period", "first period")
    assert not is_tautological("Total for Region = West", "sum for West")
    assert not is_tautological("Sum of Revenue over all rows", "df['Revenue'].sum()")
    assert entry_line([Entry("[6]", "Number of Region groups", "number of Region groups")]) == (
        "[6] Number of Region groups"
    )
    assert entry_line([Entry("[1]", "Sum of Revenue", "df['Revenue'].sum()")]) == (
        "[1] Sum of Revenue \u2014 df['Revenue'].sum()"
    )


def _info(calc_id: str, formula: str, unit: str | None = "USD") -> CalcInfo:
    return CalcInfo(calc_id, 1, unit, None, calc_id.replace("_", " ").capitalize(), formula, "verified", None)


def test_entries_group_by_first_section_and_share_one_formula_line() -> None:
    calcs = {
        "rows": _info("rows", "len(df)", "count"),
        "total": _info("total", "df['Revenue'].sum()"),
        "top_region": _info("top_region", "largest group(s)", None),
        "top_channel": _info("top_channel", "largest group(s)", None),
        "north": _info("north", "sum for North"),
    }
    texts = [
        ("Summary", "{{calc:rows}} rows, revenue {{calc:total}}"),
        ("Regions", "{{calc:top_region}} leads; North {{calc:north}}; again {{calc:total}}"),
        ("Channels", "{{calc:top_channel}} leads"),
    ]
    sections = first_sections(texts)
    assert sections == {
        "rows": "Summary",
        "total": "Summary",
        "top_region": "Regions",
        "north": "Regions",
        "top_channel": "Channels",
    }
    markers = {"rows": "", "total": "[1]", "top_region": "[2]", "north": "[3]", "top_channel": "[4]"}
    assert appendix_groups(sections, markers, calcs) == [
        ("Summary", ["[1] Total \u2014 df['Revenue'].sum()"]),
        # The channel's entry shares the region's formula: listed with it, under the first one's section.
        ("Regions", ["[2] Top region; [4] Top channel \u2014 largest group(s)", "[3] North \u2014 sum for North"]),
    ]


def test_the_audit_reads_back_exactly_the_lines_the_appendix_prints() -> None:
    top_region, top_channel = _info("top_region", "largest group(s)", None), _info("top_channel", "largest group(s)")
    markers = {"[2]": top_region, "[4]": top_channel, "[3]": _info("north", "sum for North")}
    headings = {"Regions"}
    assert is_appendix_line("Regions", markers, headings)
    assert is_appendix_line("[2] Top region; [4] Top channel \u2014 largest group(s)", markers, headings)
    assert is_appendix_line("[3] North \u2014 sum for North", markers, headings)
    assert not is_appendix_line("[3] North \u2014 sum for North, up 12.5%", markers, headings)  # edited: prose
    assert not is_appendix_line("[2] Top region; [3] North \u2014 largest group(s)", markers, headings)
    assert not is_appendix_line("[9] Unknown \u2014 sum for North", markers, headings)
    assert not is_appendix_line("Revenue grew 12.5%.", markers, headings)


def test_bare_spans_are_exactly_the_trivial_values() -> None:
    text = "The data has 1,595 rows and 9 columns; 19 are empty and 11,595 is not."
    spans = bare_spans(text, {"1,595": frozenset({"rows"}), "9": frozenset({"columns"})})
    assert [text[a:b] for a, b in spans] == ["1,595", "9"]
    assert bare_spans(text, {}) == []


def test_a_bare_count_is_cited_only_beside_what_it_counts() -> None:
    values = {"12": frozenset({"region", "groups"}), "57": None}
    assert bare_spans("Revenue rose by 12 units.", values) == []  # 12 groups, but this 12 is no group count
    text = "Region has 12 groups; label 57 stands anywhere."
    assert [text[a:b] for a, b in bare_spans(text, values)] == ["12", "57"]
    assert bare_spans("12", values, context="Groups Region") == [(0, 2)]  # a table cell, by its row's label
    assert bare_spans("지역 그룹은 12개입니다", {"12": frozenset({"그룹"})}) == [(7, 9)]


def test_bare_values_carry_the_words_of_what_each_count_counts() -> None:
    calcs = {
        "rows": CalcInfo("rows", 1595, "count", None, "Number of rows", "len(df)", "verified", None),
        "first": CalcInfo("first", "2020", None, None, "First period of sales", "first period", "verified", None),
        "odd": CalcInfo("odd", 7, "count", None, "Number of", "len(df)", "verified", None),
        "draft": CalcInfo("draft", 9, "count", None, "Number of rows", "len(df)", "unverified", None),
    }
    assert bare_values(calcs) == {"1,595": frozenset({"rows"}), "2020": None, "7": None}


# --- a rendered job ---------------------------------------------------------------------------------------------------

MARKDOWN = """# Sales Report

## Summary
The data has {{calc:rows}} rows in {{calc:region_groups}} region groups. Total revenue was {{calc:total_revenue}}.

![Revenue by region bar chart](charts/revenue.png)

## Regions
North took {{calc:north_total}} and South {{calc:south_total}}; North's share was {{calc:top_share}}.

| Region | Total |
|---|---|
| North | {{calc:north_total}} |
| South | {{calc:south_total}} |
| All | {{calc:total_revenue}} |
"""


def _add_calcs(job: Path) -> Path:
    """The fixture job plus two trivial counts and two totals that share a formula, validated again."""
    path = job / "calculation_metadata.json"
    data = json.loads(path.read_text(encoding="utf-8"))

    def calc(calc_id: str, value: int, description: str, formula: str, sql: str, unit: str) -> dict:
        return {
            "id": calc_id,
            "value": value,
            "description": description,
            "formula": formula,
            "check": sql,
            "source_file": "sales.csv",
            "source_columns": ["region", "amount"],
            "importance": "high",
            "unit": unit,
        }

    north = sum(1_642_000 + i for i in range(0, 10, 2))
    data["calculations"] += [
        calc("rows", 10, "Number of rows", "len(df)", "SELECT COUNT(*) FROM data", "count"),
        calc(
            "region_groups",
            2,
            "Number of region groups",
            "number of region groups",
            "SELECT COUNT(DISTINCT region) FROM data",
            "count",
        ),
        calc(
            "north_total",
            north,
            "Total for North",
            "sum of amount in the group",
            "SELECT SUM(amount) FROM data WHERE region = 'North'",
            "KRW",
        ),
        calc(
            "south_total",
            sum(1_642_000 + i for i in range(1, 10, 2)),
            "Total for South",
            "sum of amount in the group",
            "SELECT SUM(amount) FROM data WHERE region = 'South'",
            "KRW",
        ),
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    validate_job(job)
    return job


@pytest.fixture
def trivial_job(tmp_path: Path) -> Path:
    return _add_calcs(build_job(tmp_path / "job"))


def _paragraphs(docx: Path) -> list[str]:
    return [p.text for p in Document(str(docx)).paragraphs]


def test_trivial_counts_print_bare_and_stay_out_of_the_appendix(trivial_job: Path) -> None:
    result = render_report(MARKDOWN, trivial_job)
    texts = _paragraphs(result.docx_path)
    assert "The data has 10 rows in 2 region groups. Total revenue was 16,420,045 KRW [1]." in texts
    assert result.markers == {"total_revenue": "[1]", "north_total": "[2]", "south_total": "[3]", "top_share": "[4]"}
    refs = texts[texts.index("References") + 1 :]
    assert [r for r in refs if r] == [
        "Summary",
        "[1] Total revenue \u2014 SQL: SELECT SUM(amount) FROM data",
        "Regions",
        "[2] Total for North; [3] Total for South \u2014 sum of amount in the group",
        f"[4] Top share \u2014 {_formula(trivial_job, 'top_share')}",
    ]
    citations = json.loads((trivial_job / "citations.json").read_text(encoding="utf-8"))
    ids = {c["calculation_id"]: c["citation_id"] for c in citations["citations"]}
    assert ids["rows"] is None and ids["region_groups"] is None and ids["total_revenue"] == "[1]"


def _formula(job: Path, calc_id: str) -> str:
    return load_calc_info(job)[calc_id].formula


def test_the_audit_passes_the_bare_counts_and_the_compact_appendix(trivial_job: Path) -> None:
    render_report(MARKDOWN, trivial_job)
    result = audit_report(trivial_job)
    assert result.passed, result.to_text()
    assert result.stats["type_a"] == 0 and result.stats["type_c"] == 0
    uncited = {f["cited_calculation_id"] for f in result.findings if f["type"] == "D"}
    assert not uncited & {"rows", "region_groups"}  # printed bare: not "never cited"


def test_a_number_edited_into_the_appendix_is_still_audited(trivial_job: Path) -> None:
    docx = render_report(MARKDOWN, trivial_job).docx_path
    doc = Document(str(docx))
    line = next(p for p in doc.paragraphs if p.text.startswith("[2] Total for North"))
    line.runs[-1].text += " (up 12.5%)"
    doc.save(str(docx))
    result = audit_report(trivial_job)
    assert any(f["type"] == "A" and f["body_value"] == "12.5" for f in result.findings), result.to_text()


def test_a_typed_count_equal_to_a_trivial_one_is_still_refused(trivial_job: Path) -> None:
    from insightloom.errors import RenderRefused

    with pytest.raises(RenderRefused, match="10"):
        render_report("# R\n\n## Summary\nThe data has 10 rows. Total {{calc:total_revenue}}.\n", trivial_job)


def test_summary_table_ranks_trivial_counts_last_and_prints_them_bare(trivial_job: Path) -> None:
    table = summary_table(trivial_job, limit=20)
    lines = table.splitlines()
    labels = [line.split("|")[1].strip() for line in lines[2:]]
    assert labels[-2:] == ["Number of rows", "Number of region groups"]
    render_report(f"# R\n\n## Summary\nKey figures:\n\n{table}\n", trivial_job)
    assert audit_report(trivial_job).passed


# --- layout ----------------------------------------------------------------------------------------------------------


def test_tables_figures_and_headings_are_kept_together(trivial_job: Path) -> None:
    doc = Document(str(render_report(MARKDOWN, trivial_job).docx_path))
    table = doc.tables[0]
    for r, row in enumerate(table.rows):
        assert row._tr.trPr.find(qn("w:cantSplit")) is not None
        keep = {p.paragraph_format.keep_with_next for cell in row.cells for p in cell.paragraphs}
        assert keep == ({True} if r < len(table.rows) - 1 else {None})  # the last row ends the chain
    picture = next(p for p in doc.paragraphs if p._p.xpath(".//w:drawing"))
    assert picture.paragraph_format.keep_with_next is True
    for paragraph in doc.paragraphs:
        if paragraph.style is not None and paragraph.style.name.startswith("Heading"):
            assert paragraph.paragraph_format.keep_with_next is True, paragraph.text


def test_the_appendix_is_small_type_in_two_columns(trivial_job: Path) -> None:
    doc = Document(str(render_report(MARKDOWN, trivial_job).docx_path))
    body, appendix = doc.sections[0], doc.sections[-1]
    assert len(doc.sections) == 2 and appendix.start_type == WD_SECTION.CONTINUOUS
    assert appendix._sectPr.find(qn("w:cols")).get(qn("w:num")) == str(build.REFERENCE_COLUMNS)
    assert body._sectPr.find(qn("w:cols")).get(qn("w:num")) in (None, "1")
    at = [p.text for p in doc.paragraphs].index("References")
    mark = doc.paragraphs[at - 1]  # the body's section ends just before the heading, so it keeps with its text
    assert mark.text == "" and mark._p.pPr.find(qn("w:sectPr")) is not None
    line = next(p for p in doc.paragraphs if p.text.startswith("[1] "))
    assert {run.font.size.pt for run in line.runs} == {build.REFERENCE_PT}


def test_a_group_count_names_its_groups_not_the_measure_they_hold() -> None:
    groups = CalcInfo("g", 12, "count", None, "Number of Region groups", "number of Region groups with a Sales value",
                      "verified", None)  # fmt: skip
    values = bare_values({"g": groups})
    assert values == {"12": frozenset({"region", "groups"})}
    assert bare_spans("Sales rose by 12 units.", values) == []
    assert bare_spans("12 countries", {"12": frozenset({"count"})}) == []  # whole words only
