"""The Reporter's report at a real length, sent section by section.

A hosted Reporter explains each finding: how every figure was computed, from which columns, and how it was checked;
how to read the chart and the table; what the figures do not say. The notes here are built from ``citations.json``
(each figure's description, formula, source file and check), never typed: every value stays a ``{{calc:ID}}`` or
``{{claim:ID}}`` reference, and a sentence that would read as a typed number or an unbacked claim word is left out
by the product's own detectors (``report.numbers``, ``claims.phrases``), so the render refuses nothing it added.

The report goes out as a real model sends a long one: a few ``render_section`` calls per reply, then
``render_report()`` to render the stored sections. A refused section falls back to one ``render_report`` of the
plain draft, so the product's repair path (``patch_report``) takes over as it does for the compact Reporter.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ....claims.phrases import find_claim_phrases
from ....report.appendix import is_trivial
from ....report.numbers import find_numbers
from ....report.render import report_language
from ....report.sections import Section, split_sections
from ..conversation import Conversation, ToolCall

#: Sections per reply: a report of demo size goes out in one reply of several tool calls, a longer one over
#: several turns.
SECTIONS_PER_REPLY = 6
_MARKER_RE = re.compile(r"\{\{\s*(calc|claim)\s*:\s*([^{}\s]+?)\s*\}\}")

_WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "how": "**How these figures were computed.**",
        "table": "The table gives, for each {first}, its {rest}, each cell a verified figure with its citation.",
        "calc": "{description}: {ref}. The script computed it as `{formula}` over `{source}`{unit}.",
        "calc_plain": "{description}: {ref}. The script computed it from `{source}` by the formula that its "
        "citation records{unit}.",
        "claim": "{description}: {ref}. The verdict rests on {formula}, computed over `{source}`.",
        "unit": ", and the report gives it in {unit}",
        "check": " Before the report could cite it, {method}; its importance for this report is {importance}.",
        "check_sql": "the Validator re-ran the recorded DuckDB query against the cached table, independently of the "
        "script that produced the value, and found the same value",
        "check_stat": "the Validator re-derived it with SciPy from the same rows and reached the same result",
        "check_other": "the Validator re-checked it against the table and found it consistent",
        "method_heading": "Method and checks",
        "method": (
            "Every figure in this report was computed by a script from the table as intake read it, recorded with "
            "its formula and source columns, and then re-computed independently by the Validator before the report "
            "could cite it; a figure whose check failed is not printed. Each figure carries a citation that leads "
            "to its formula and its check, and the appendix of the document lists them all.\n\n"
            "Statements about direction, concentration or association are verdicts of a named statistical check "
            "run on the same rows, and each such sentence cites the check that backs it. Where a check could not "
            "decide, the report says so instead of choosing a side.\n\n"
            "Columns that identify a person or a record are left out of every analysis, and a column the plan "
            "does not break down by is named with the reason it was not used.\n\n"
            "Values are printed as the renderer formats them from the recorded calculation: the unit comes from the "
            "column's definition, and the rounding from the calculation itself, so the same figure reads the same "
            "wherever it appears in the document.\n\n"
            "Charts are drawn from the same recorded figures as the text. Each chart's caption says what it shows "
            "and which columns it uses, so a chart and the paragraph beside it cannot disagree, and a chart whose "
            "labels would hide part of the data is redrawn rather than printed."
        ),
        "limits_heading": "Limitations",
        "limits": (
            "The figures describe the rows of this table and nothing beyond them: they are not a sample of a wider "
            "population unless the data were collected as one, and no figure here should be read as a forecast.\n\n"
            "Groups and periods are compared by their totals and averages as recorded. Differences between them "
            "can reflect how the records were collected (a new store, a missing week, a change of category names) "
            "as much as a change in the business, so a difference worth acting on deserves a look at the rows "
            "behind it.\n\n"
            "Each verdict in the report names the check behind it. A verdict that says the data cannot decide is a "
            "result in its own right: it means the recorded rows do not separate the possibilities, and more data "
            "or a narrower question is needed before drawing a conclusion.\n\n"
            "Rows with a missing value in a column are left out of that column's figures and kept in every other "
            "one, so two figures built on different columns may cover slightly different rows; the data overview "
            "gives the missing cells per column for that reason."
        ),
        "glossary_heading": "Terms used",
        "glossary": {
            "driver": (
                "**Epsilon squared** is the share of the row-to-row variation of a measure that a breakdown "
                "explains, adjusted for the number of groups so that a column with many small groups does not look "
                "stronger than it is; the breakdown with the largest value is the one compared against the others."
            ),
            "concentration": (
                "**HHI** (the Herfindahl-Hirschman index) sums the squared shares of the groups in the total: it is "
                "small when the total is spread over many groups and large when a few groups hold most of it."
            ),
            "trend": (
                "**Kendall's tau** measures whether later periods tend to sit above or below earlier ones, using "
                "every pair of periods rather than the first and last alone; the **Theil-Sen slope** is the median "
                "change per period over all those pairs, which one unusual period cannot swing."
            ),
            "correlation": (
                "**Pearson's r** measures how closely two columns follow a straight line together, and "
                "**Spearman's rho** the same for their ranks, which unusual values affect less; **Cook's distance** "
                "finds the rows that move the line most, and the coefficient is measured again without them."
            ),
            "outlier": (
                "The **IQR fences** lie one and a half interquartile ranges below the first quartile and above the "
                "third; a value beyond them is counted as unusual for this table."
            ),
        },
        "reading": {
            "kpi": (
                "A total adds the values of every row, and an average divides that total by the rows that hold a "
                "value; read together, they say whether a large total comes from many rows or from large ones."
            ),
            "breakdown": (
                "The table lists every group with its total and its share of the whole, and the chart draws the same "
                "totals as bars. A total sums every row of a group, so a group with many small orders and a group "
                "with a few large ones can end close together; the averages per row among the headline figures "
                "help to tell the two apart."
            ),
            "trend": (
                "The series gives one total per period, in calendar order, and the chart draws it as a line. A "
                "period with fewer days or fewer records than its neighbours pulls its total down for reasons that "
                "have nothing to do with demand, so the first and last periods deserve a second look before they "
                "are compared."
            ),
            "correlation": (
                "The coefficients measure how closely the two columns move together row by row; they say nothing "
                "about which one drives the other. The scatter chart shows every row, so a handful of unusual rows "
                "can be seen directly rather than inferred from the coefficient."
            ),
            "distribution": (
                "The histogram shows how the values spread across their range; the fences are set from the quartiles "
                "of the data, so a value outside them is unusual for this table, not necessarily an error."
            ),
            "overview": (
                "Missing cells are counted per analysed column; an analysis of a column with missing cells uses the "
                "rows where it is present, so its totals cover fewer rows than the table holds."
            ),
        },
    },
    "ko": {
        "how": "**수치 산출 방법.**",
        "table": "표는 {first}마다 {rest}을 보여 주며, 각 칸은 인용이 달린 검증된 수치입니다.",
        "calc": "{description}: {ref}. 스크립트가 `{source}`에서 `{formula}`로 계산했습니다{unit}.",
        "calc_plain": "{description}: {ref}. 스크립트가 `{source}`에서 인용에 기록된 공식으로 계산했습니다{unit}.",
        "claim": "{description}: {ref}. 이 판정은 `{source}`에서 계산한 {formula}에 근거합니다.",
        "unit": " (단위: {unit})",
        "check": " 보고서에 인용하기 전에 {method}. 이 보고서에서의 중요도는 {importance}입니다.",
        "check_sql": "검증 에이전트가 기록된 DuckDB 쿼리를 캐시된 표에 대해 스크립트와 독립적으로 다시 실행해 "
        "같은 값을 얻었습니다",
        "check_stat": "검증 에이전트가 같은 행에서 SciPy로 다시 도출해 같은 결과를 얻었습니다",
        "check_other": "검증 에이전트가 표와 대조해 일치함을 확인했습니다",
        "method_heading": "분석 방법과 검증",
        "method": (
            "이 보고서의 모든 수치는 스크립트가 수집된 표에서 계산하고 공식과 원본 열을 함께 기록한 뒤, 검증 "
            "에이전트가 독립적으로 다시 계산해 일치한 것만 인용했습니다. 검증에 실패한 수치는 싣지 않았습니다. "
            "각 수치의 인용은 그 공식과 검증으로 이어지며, 문서의 부록에 모두 정리되어 있습니다.\n\n"
            "방향, 집중도, 연관성에 대한 문장은 같은 행에서 실행한 통계 검정의 판정이며, 각 문장은 그 근거가 되는 "
            "검정을 인용합니다. 검정이 결론을 내리지 못한 경우에는 어느 한쪽을 고르지 않고 그렇게 밝힙니다.\n\n"
            "개인이나 레코드를 식별하는 열은 분석에서 제외했고, 계획에 없는 열은 사용하지 않은 이유와 함께 "
            "적었습니다.\n\n"
            "값은 기록된 계산에서 렌더러가 형식을 정해 출력합니다. 단위는 열의 정의에서, 반올림은 계산 자체에서 "
            "가져오므로 같은 수치는 문서 어디에서나 같게 읽힙니다.\n\n"
            "차트는 본문과 같은 기록된 수치로 그립니다. 각 차트의 설명은 무엇을 보여 주고 어떤 열을 쓰는지 밝히므로 "
            "차트와 그 옆의 문단이 서로 어긋날 수 없습니다."
        ),
        "limits_heading": "한계",
        "limits": (
            "이 수치는 이 표의 행만을 설명하며, 데이터가 표본으로 수집되지 않았다면 더 넓은 모집단을 대표하지 않고 "
            "예측으로 읽어서도 안 됩니다.\n\n"
            "그룹과 기간은 기록된 합계와 평균으로 비교했습니다. 그 차이는 사업의 변화만큼이나 기록 방식의 변화(새 "
            "매장, 빠진 주, 분류 이름의 변경)를 반영할 수 있으므로, 조치할 만한 차이는 그 뒤의 행을 살펴보아야 "
            "합니다.\n\n"
            "보고서의 각 판정은 그 근거가 된 검정을 밝힙니다. 데이터로 판단할 수 없다는 판정도 하나의 결과이며, "
            "결론을 내리기 전에 더 많은 데이터나 더 좁은 질문이 필요하다는 뜻입니다."
        ),
        "glossary_heading": "용어",
        "glossary": {
            "driver": (
                "**엡실론 제곱**은 측정값의 행 간 변동 가운데 분류 기준이 설명하는 비율로, 그룹 수를 보정해 작은 "
                "그룹이 많은 열이 실제보다 강해 보이지 않게 합니다."
            ),
            "concentration": (
                "**HHI**(허핀달-허쉬만 지수)는 각 그룹이 합계에서 차지하는 비중의 제곱을 더한 값으로, 합계가 여러 "
                "그룹에 퍼져 있으면 작고 소수 그룹에 몰려 있으면 큽니다."
            ),
            "trend": (
                "**켄달의 타우**는 처음과 마지막 기간만이 아니라 모든 기간 쌍을 비교해 나중 기간이 앞 기간보다 높은 "
                "경향이 있는지를 재며, **타일-센 기울기**는 그 모든 쌍의 기간당 변화의 중앙값입니다."
            ),
            "correlation": (
                "**피어슨 r**은 두 열이 함께 직선을 따르는 정도를, **스피어만 rho**는 순위에 대해 같은 것을 재며 "
                "특이값의 영향을 덜 받습니다. **쿡의 거리**로 선을 가장 많이 움직이는 행을 찾아 그 행을 빼고 다시 "
                "잽니다."
            ),
            "outlier": (
                "**IQR 경계**는 제1사분위수 아래와 제3사분위수 위로 사분위 범위의 한 배 반만큼 떨어진 곳에 있으며, "
                "그 밖의 값은 이 표에서 드문 값으로 셉니다."
            ),
        },
        "reading": {
            "kpi": (
                "합계는 모든 행의 값을 더한 것이고 평균은 그 합계를 값이 있는 행 수로 나눈 것이므로, 둘을 함께 "
                "보면 큰 합계가 많은 행에서 오는지 큰 값에서 오는지 알 수 있습니다."
            ),
            "breakdown": (
                "표는 각 그룹의 합계와 전체에서 차지하는 비중을 보여 주며, 차트는 같은 합계를 막대로 그립니다. "
                "합계는 그룹의 모든 행을 더한 값이므로, 행당 평균을 함께 보아야 그룹의 성격을 구분할 수 있습니다."
            ),
            "trend": (
                "시계열은 기간별 합계를 달력 순서로 보여 주며, 차트는 이를 선으로 그립니다. 일수나 기록이 적은 "
                "기간은 합계가 낮게 나올 수 있으므로 첫 기간과 마지막 기간은 비교하기 전에 다시 살펴보아야 합니다."
            ),
            "correlation": (
                "상관계수는 두 열이 행 단위로 얼마나 함께 움직이는지를 나타낼 뿐, 어느 쪽이 원인인지는 말하지 "
                "않습니다. 산점도는 모든 행을 보여 주므로 특이한 행을 직접 확인할 수 있습니다."
            ),
            "distribution": (
                "히스토그램은 값이 범위 안에서 어떻게 퍼져 있는지를 보여 줍니다. 경계는 데이터의 사분위수로 "
                "정하므로, 경계 밖의 값은 이 표에서 드문 값일 뿐 반드시 오류는 아닙니다."
            ),
            "overview": (
                "결측 셀은 분석한 열마다 셉니다. 결측이 있는 열의 분석은 값이 있는 행만 사용하므로 합계가 "
                "표 전체보다 적은 행을 다룹니다."
            ),
        },
    },
}
#: Words of a findings heading or its figures' ids that tell what kind of finding it is.
_KINDS = (
    ("kpi", ("kpi", "핵심")),
    ("trend", ("trend", "per_month", "per_week", "per_day", "per_year", "추이")),
    ("correlation", ("corr", "상관")),
    ("distribution", ("distribution", "outlier", "분포")),
    ("overview", ("overview", "missing", "개요", "결측")),
    ("breakdown", ("_by_", " by ", "별")),
)


def sized_render(markdown: str, conv: Conversation) -> list[ToolCall]:
    """The next calls that send the draft ``markdown`` at a real length: a few sections, or the final render."""
    sections = _chunks(expand(markdown, _citations(conv), report_language(markdown)))
    sent = [e for e in conv.exchanges() if e.name == "render_section"]
    if any(e.status != "success" for e in sent) or len(sections) < 2:
        return [ToolCall("render_report", {"markdown": markdown})]
    stored = {str(e.input.get("heading", "")) for e in sent}
    pending = [(heading, body) for heading, body in sections if heading not in stored]
    if not pending:
        return [ToolCall("render_report", {})]
    return [ToolCall("render_section", {"heading": h, "markdown": b}) for h, b in pending[:SECTIONS_PER_REPLY]]


def expand(markdown: str, citations: dict[str, dict[str, Any]], language: str = "en") -> str:
    """``markdown`` with a method section after the summary and method notes under each finding."""
    words = _WORDS["ko" if language == "ko" else "en"]
    out: list[str] = []
    noted: set[str] = set()  # each figure gets its note once, where a finding first cites it
    top_sections = 0
    for section in split_sections(markdown):
        top_sections += section.level == 2
        if section.level == 2 and top_sections == 2:  # after the summary, before the findings
            out.append(_section_text(Section(words["method_heading"], 2, words["method"])))
        body = section.body.rstrip()
        if top_sections >= 2:
            body += _notes(section, citations, words, noted)
        out.append(_section_text(Section(section.heading, section.level, body)))
    out.append(_section_text(Section(words["limits_heading"], 2, words["limits"])))
    kinds = dict.fromkeys(str(e.get("claim_kind")) for e in citations.values() if e.get("kind") == "claim")
    terms = [words["glossary"][kind] for kind in kinds if kind in words["glossary"] and _clean(words["glossary"][kind])]
    if terms:
        out.append(_section_text(Section(words["glossary_heading"], 2, "\n\n".join(terms))))
    return "\n\n".join(part for part in out if part.strip()) + "\n"


def _notes(section: Section, citations: dict[str, dict[str, Any]], words: dict[str, Any], noted: set[str]) -> str:
    # A figure the renderer prints without a citation (a count of rows, columns or groups) needs no method note.
    refs = [
        (kind, ref_id)
        for kind, ref_id in _refs(section.body)
        if ref_id in citations and not is_trivial(citations[ref_id]) and ref_id not in noted
    ]
    noted.update(ref_id for _, ref_id in refs)
    bullets = [line for kind, ref_id in refs if (line := _note(kind, citations[ref_id], words))]
    reading = words["reading"].get(_kind(section, [ref_id for _, ref_id in refs]), "")
    tables = [words["table"].format(first=first, rest=", ".join(rest)) for first, rest in _table_headers(section.body)]
    parts = [text for text in (reading, *tables) if _clean(text)]
    if bullets:
        parts.append(words["how"] + "\n\n" + "\n".join(f"- {line}" for line in bullets))
    return "\n\n" + "\n\n".join(parts) if parts else ""


def _note(kind: str, entry: dict[str, Any], words: dict[str, Any]) -> str:
    ref = "{{" + kind + ":" + str(entry.get("calculation_id")) + "}}"
    unit = str(entry.get("unit") or "")
    values = {
        "description": str(entry.get("description") or "").rstrip("."),
        "formula": str(entry.get("formula") or "").strip(),
        "source": str(entry.get("source_file") or "the table"),
        "unit": words["unit"].format(unit=unit) if unit and unit != "count" else "",
        "ref": ref,
    }
    method = {"check": "check_sql", "stat": "check_stat"}.get(str(entry.get("verification_method")), "check_other")
    check = words["check"].format(method=words[method], importance=entry.get("importance") or "medium")
    for template in ("claim",) if kind == "claim" else ("calc", "calc_plain"):
        line = words[template].format(**values)
        if values["description"] and _clean(line):
            return line + (check if _clean(check) else "")
    return ""


_TABLE_HEADER_RE = re.compile(r"^\|(.+)\|\s*\n\|\s*:?-{3,}", re.M)


def _table_headers(body: str) -> list[tuple[str, list[str]]]:
    """The header cells of each pipe table: its label column, then its value columns."""
    headers = []
    for match in _TABLE_HEADER_RE.finditer(body):
        cells = [cell.strip() for cell in match.group(1).split("|") if cell.strip()]
        if len(cells) >= 2:
            headers.append((cells[0], cells[1:]))
    return headers


def _clean(text: str) -> bool:
    """True when ``text`` holds no digit and no claim word outside its references (a formula's ``shape[1]``
    would print like a citation marker, so even code keeps no digit)."""
    if not text or find_numbers(text) or re.search(r"\d", _MARKER_RE.sub("", text)):
        return False
    return not find_claim_phrases(_MARKER_RE.sub("", text))


def _refs(text: str) -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for match in _MARKER_RE.finditer(text):
        seen.setdefault((match.group(1), match.group(2)), None)
    return list(seen)


def _kind(section: Section, ids: list[str]) -> str:
    text = " ".join([section.heading.lower(), *ids])
    return next((kind for kind, marks in _KINDS if any(mark in text for mark in marks)), "")


def _section_text(section: Section) -> str:
    head = f"{'#' * section.level} {section.heading}\n\n" if section.level else ""
    return (head + section.body.strip()).strip()


def _chunks(markdown: str) -> list[tuple[str, str]]:
    """The report cut into what one ``render_section`` call takes: the title with its text, then each ``##``
    section with its sub-sections."""
    chunks: list[tuple[str, list[str]]] = []
    for section in split_sections(markdown):
        if section.level == 0 and not section.body.strip():
            continue
        if section.level in (1, 2) or not chunks:
            chunks.append((f"{'#' * max(section.level, 1)} {section.heading}".strip(), [section.body.strip()]))
        else:
            chunks[-1][1].append(_section_text(section))
    return [(heading, "\n\n".join(p for p in parts if p)) for heading, parts in chunks]


def _citations(conv: Conversation) -> dict[str, dict[str, Any]]:
    reads = (e for e in conv.exchanges() if e.name == "file_read" and e.input.get("path") == "citations.json")
    read = next(reads, None)
    try:
        data = json.loads(read.result) if read is not None else {}
    except ValueError:
        return {}
    entries = data.get("citations", []) if isinstance(data, dict) else []
    return {str(e["calculation_id"]): e for e in entries if isinstance(e, dict) and e.get("calculation_id")}


__all__ = ["SECTIONS_PER_REPLY", "expand", "sized_render"]
