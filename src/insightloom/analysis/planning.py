"""The offline Planner: choose analyses from the data profile and write the plan checklist.

The plan format is DESIGN's (``# Plan`` / ``## thought`` / ``## title`` / ``## steps`` / ``### N. Agent: ...``).
Only the Coder section varies with the data; the Validator, Reporter and Auditor sections hold one fixed item each.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from insightloom.analysis import choices as selection
from insightloom.analysis import time_logic
from insightloom.analysis.catalog import AnalysisSpec

logger = logging.getLogger(__name__)

SECTION_SUBTITLES = {
    "en": {"coder": "Data analysis", "validator": "Verification", "reporter": "Report", "auditor": "Audit"},
    "ko": {"coder": "데이터 분석", "validator": "검증", "reporter": "보고서 작성", "auditor": "감사"},
}
SECTION_ITEMS = {
    "en": {
        "validator": "Re-run every tracked calculation's check and write citations.json",
        "reporter": "Write the report in Markdown from all_results.txt, citing every number as a calculation "
        "reference, and render final_report.docx",
        "auditor": "Audit the final DOCX for uncited, mismatched, undefined and unused numbers",
    },
    "ko": {
        "validator": "추적된 모든 계산의 check를 다시 실행하고 citations.json 작성",
        "reporter": "all_results.txt를 바탕으로 모든 수치를 계산 참조로 인용하는 Markdown 보고서를 쓰고 "
        "final_report.docx로 렌더링",
        "auditor": "최종 DOCX에서 인용 누락, 값 불일치, 정의되지 않은 참조, 사용되지 않은 계산을 감사",
    },
}


def trend_spec(
    table: dict[str, Any], view: str | None, axis: time_logic.TimeAxis, primary: str | None, agg: str
) -> AnalysisSpec:
    """The trend along the table's time axis: a date column by its period, an integer year column per year, or a
    wide table's year columns (the values sit in those columns, so the first one names the measure)."""
    if axis.kind == "wide_years":
        first = selection.column(table, axis.column) or {}
        wide_agg = "sum" if selection.is_additive(first) else "mean"
        return AnalysisSpec("trend", view, measure=axis.column, by=axis.column, agg=wide_agg, period="year")
    return AnalysisSpec("trend", view, measure=primary, by=axis.column, agg=agg, period=axis.period)


def _table_specs(
    table: dict[str, Any], view: str | None, request: str, full: bool, profile: dict[str, Any] | None = None
) -> list[AnalysisSpec]:
    specs = [AnalysisSpec("overview", view)]
    ms = selection.measures(table, request)
    rates = tuple(selection.rate_defs(table))
    primary = ms[0] if ms else None
    if ms:
        specs.append(AnalysisSpec("kpi", view, measures=tuple(ms[: selection.MAX_KPI_MEASURES]), rates=rates))
    primary_col = selection.column(table, primary) or {}
    agg = "count" if primary is None else "sum" if selection.is_additive(primary_col) else "mean"
    cats = [c for c in selection.breakdown_columns(table, request, full=full) if c != primary]
    specs += [AnalysisSpec("breakdown", view, measure=primary, by=cat, agg=agg) for cat in cats]
    specs += joined_breakdowns(profile or {}, table, request, primary, agg, full=full)
    if not full:
        return specs
    # A 0/1 outcome leads as its rate per group (over time too, when it is numeric); a correlation or a
    # distribution needs a quantity.
    quantities = [m for m in ms if _is_quantity(selection.column(table, m) or {})]
    lead = quantities[0] if quantities else None
    axis = time_logic.trend_axis(selection.annotated(table))
    if axis is not None and axis.column:
        numeric_primary = primary is not None and _is_number(selection.column(table, primary) or {})
        over_time = primary if numeric_primary else lead
        time_agg = agg if over_time == primary else "count" if over_time is None else _agg(table, over_time)
        specs.append(trend_spec(table, view, axis, over_time, time_agg))
    partner = next((q for q in quantities[1:] if not same_quantity(quantities[0], q)), None)
    if partner is not None:
        specs.append(AnalysisSpec("correlation", view, measures=(quantities[0], partner)))
    if lead:
        specs.append(AnalysisSpec("distribution", view, measure=lead))
    return specs


#: Breakdowns by a parent's category across a joined view, for the first input (one for a further table).
MAX_JOINED_BREAKDOWNS = 2
#: The least match rate of a foreign key whose parent's categories the plan breaks down by: below it most rows would
#: be in no group, and the breakdown would describe the rows that happened to match.
MIN_PLANNED_MATCH_RATE = 0.5


def joined_breakdowns(
    profile: dict[str, Any], table: dict[str, Any], request: str, measure: str | None, agg: str, *, full: bool
) -> list[AnalysisSpec]:
    """Breakdowns of the table's main measure by categories its parents hold, each across the joined view of the
    foreign key (``orders+customers``: revenue by customer segment). Only joins the profile lists, so never one
    that would multiply rows, and only those matching at least :data:`MIN_PLANNED_MATCH_RATE` of the rows."""
    specs: list[AnalysisSpec] = []
    limit = MAX_JOINED_BREAKDOWNS if full else 1
    for fk in (profile.get("relationships") or {}).get("foreign_keys") or []:
        wanted = fk.get("child") == table.get("view") and float(fk.get("match_rate") or 0) >= MIN_PLANNED_MATCH_RATE
        joined = selection.find_table(profile, str(fk.get("view"))) if wanted else None
        if joined is None:
            continue
        brought = {c["name"] for c in joined.get("columns", []) if c.get("joined_from") == fk.get("parent")}
        ranked = selection.categories(joined, request)
        named = [n for n in dict.fromkeys(re.findall(r"`([^`]+)`", request or "")) if n in ranked]
        cats = [c for c in (named or ranked) if c in brought]  # columns the request names in backticks, if any
        specs += [AnalysisSpec("breakdown", joined["view"], measure=measure, by=c, agg=agg) for c in cats]
    return specs[:limit]


_LOG_PREFIX_RE = re.compile(r"^(?:log|ln|l)[_ .]?(.+)$", re.IGNORECASE)
_LOG_SUFFIX_RE = re.compile(r"^(.+?)[_ .](?:log|ln)$", re.IGNORECASE)


def same_quantity(a: str, b: str) -> bool:
    """Whether one column is the other's logarithm by name (``salary`` and ``lsalary``, ``log_gdp``, ``gdp_ln``):
    their correlation measures the transformation, not a relationship."""
    for first, second in ((a, b), (b, a)):
        match = _LOG_PREFIX_RE.match(second) or _LOG_SUFFIX_RE.match(second)
        if match and match.group(1).lower() == first.lower():
            return True
    return False


def _is_number(col: dict[str, Any]) -> bool:
    return col.get("dtype") in ("int64", "float64")


def _is_quantity(col: dict[str, Any]) -> bool:
    """A number worth correlating or describing: no 0/1 outcome, and no numbering of groups or periods (``site``
    1..7, ``Time`` 1..19), whose correlation would measure the numbering."""
    return _is_number(col) and col.get("semantic") != "binary_outcome" and not selection.is_label_column(col)


def _agg(table: dict[str, Any], measure: str) -> str:
    return "sum" if selection.is_additive(selection.column(table, measure) or {}) else "mean"


def plan_analyses(profile: dict[str, Any], request: str = "", language: str = "en") -> list[AnalysisSpec]:
    """Choose the analyses for a data profile.

    The first input gets the full set (overview, KPIs, 2-3 breakdowns, trend, correlation, distribution); further
    tables get an overview, KPIs and one breakdown, which keeps multi-file jobs bounded.

    Args:
        profile: ``DataProfile.to_dict()``.
        request: The user's request; column names it mentions are preferred.
        language: Plan language (does not change the choice, only wording elsewhere).

    Returns:
        The analyses in plan order.
    """
    specs: list[AnalysisSpec] = []
    for index, table in enumerate(selection.tables(profile)):
        view = None if index == 0 else table.get("view")
        specs += _table_specs(table, view, request, full=index == 0, profile=profile)
    logger.debug("planned %d analyses (%s)", len(specs), language)
    return specs


def suggested_items(profile: dict[str, Any], request: str = "", language: str = "en") -> str:
    """The analyses :func:`plan_analyses` chooses, as plan items (one ``- `` line each) for the Planner's prompt.

    A hosted Planner starts from the same choices as the offline one (headline measures, breakdowns, time axis),
    word for word, and changes them only where the request or its judgement says so.
    """
    lang = "ko" if language == "ko" else "en"
    items = [f"- {spec.item_text(lang)}" for spec in plan_analyses(profile, request, lang)]
    return "\n".join(items) or "(none: the profile has no analysable table)"


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) or "-"


def _thought(profile: dict[str, Any], request: str, language: str) -> str:
    lines = []
    for table in selection.tables(profile):
        ms = selection.measures(table, request)[: selection.MAX_KPI_MEASURES]
        cats = selection.breakdown_columns(table, request)
        axis = time_logic.trend_axis(selection.annotated(table))
        date = axis.column if axis else None
        rates = [selection.rate_label(k, language) for k in selection.rate_defs(table)]
        skipped = [c["name"] for c in table.get("columns", []) if not selection.usable(c)]
        rows, ncols = table.get("rows", 0), len(table.get("columns", []))
        if language == "ko":
            lines.append(
                f"`{table.get('file', table.get('view'))}`: {rows}행 × {ncols}열. 주요 측정값 {_names(ms)}, "
                f"주요 범주 {_names(cats)}, 시간 축 {_names([date] if date else [])}, "
                f"구성 요소로 다시 계산할 비율 {', '.join(rates) or '-'}."
                + (f" 개인정보·식별자 열 {_names(skipped)}은(는) 분석하지 않습니다." if skipped else "")
            )
        else:
            lines.append(
                f"`{table.get('file', table.get('view'))}` has {rows} rows x {ncols} columns. Main measures "
                f"{_names(ms)}; main categories {_names(cats)}; time axis {_names([date] if date else [])}; rates "
                f"recomputed from their parts: {', '.join(rates) or '-'}."
                + (f" Personal and identifier columns {_names(skipped)} are not analysed." if skipped else "")
            )
    lines += _relationship_lines(profile, language)
    if language == "ko":
        lines.append("모든 수치는 DuckDB check로 독립 재계산되어 검증된 뒤에만 보고서에 인용됩니다.")
    else:
        lines.append("Every number is tracked with an independent DuckDB check and cited only once verified.")
    return "\n".join(lines)


def _relationship_lines(profile: dict[str, Any], language: str) -> list[str]:
    """One line per foreign key (joined view, cardinality, match rate) and per many-to-many pair (never joined)."""
    rel = profile.get("relationships") or {}
    lines = []
    for fk in rel.get("foreign_keys") or []:
        link = f"`{fk['child']}.{fk['child_column']}` → `{fk['parent']}.{fk['parent_column']}`"
        rate = f"{100 * float(fk['match_rate']):.1f}%"
        kind = str(fk["cardinality"]).replace("_", "-")
        lines.append(f"{link}: {kind}, 행의 {rate} 일치; 조인 뷰 `{fk['view']}`." if language == "ko" else
                     f"{link}: {kind}, {rate} of rows matched; joined view `{fk['view']}`.")  # fmt: skip
    for pair in rel.get("many_to_many") or []:
        link = f"`{pair['left']}.{pair['left_column']}` ~ `{pair['right']}.{pair['right_column']}`"
        lines.append(f"{link}: 다대다, 행이 늘어나므로 조인하지 않습니다." if language == "ko" else
                     f"{link}: many-to-many, not joined (it would multiply rows).")  # fmt: skip
    return lines


def default_title(profile: dict[str, Any], language: str) -> str:
    """A report title from the first input's file name."""
    first = next(iter(selection.tables(profile)), {})
    stem = Path(str(first.get("file") or first.get("view") or "data")).stem
    name = stem.replace("-", " ").replace("_", " ").strip()
    return f"{name} 데이터 분석 보고서" if language == "ko" else f"{name.title()} Analysis Report"


def plan_markdown(profile: dict[str, Any], request: str = "", language: str = "en", title: str | None = None) -> str:
    """The full plan in DESIGN's format: one Coder item per analysis, one item each for the other agents."""
    lang = "ko" if language == "ko" else "en"
    specs = plan_analyses(profile, request, lang)
    subtitles, items = SECTION_SUBTITLES[lang], SECTION_ITEMS[lang]
    lines = [
        "# Plan",
        "## thought",
        _thought(profile, request, lang),
        "## title",
        title or default_title(profile, lang),
    ]
    lines += ["## steps", f"### 1. Coder: {subtitles['coder']}"]
    lines += [f"- [ ] {spec.item_text(lang)}" for spec in specs]
    for number, role in enumerate(("validator", "reporter", "auditor"), start=2):
        lines += [f"### {number}. {role.capitalize()}: {subtitles[role]}", f"- [ ] {items[role]}"]
    return "\n".join(lines) + "\n"


#: A column missing in at least this share of rows (in %) is named as "mostly missing" when the plan leaves it out.
MOSTLY_MISSING = 50.0
#: Why a column is not analysed, in the order the reasons are tried.
SKIP_REASONS = (
    "pii",
    "identifier",
    "text",
    "missing",
    "constant",
    "many_groups",
    "code",
    "date",
    "rate",
    "more_categories",
    "more_measures",
    "unplanned",
)


def planned_columns(specs: list[AnalysisSpec], table: dict[str, Any]) -> set[str]:
    """The columns of ``table`` the analyses read: their measures, breakdowns, time axes, rate parts and, for a wide
    table's trend, every year column. ``specs`` are those of this table only."""
    used: set[str] = set()
    axis = time_logic.trend_axis(selection.annotated(table))
    rates = selection.rate_defs(table)
    for spec in specs:
        used.update(spec.columns())
        if spec.kind == "trend" and axis is not None and axis.kind == "wide_years" and spec.by in axis.columns:
            used.update(axis.columns)
        for key in spec.rates:
            if key in rates:
                used.update((rates[key].numerator, rates[key].denominator))
    return used


def missing_share(col: dict[str, Any], rows: int) -> float:
    """The share of rows (in %) where the column is missing, from its profile entry."""
    return 100.0 * float(col.get("missing") or 0) / rows if rows else 0.0


def skip_reason(col: dict[str, Any], rows: int, kinds: frozenset[str] = frozenset()) -> str:
    """Why a column the plan does not read is left out: one of :data:`SKIP_REASONS`.

    ``kinds`` are the plan's analysis kinds: a category is "beyond the plan's breakdowns" only when it has some.
    """
    role, distinct = col.get("role"), int(col.get("distinct") or 0)
    if role in selection.EXCLUDED_ROLES:
        return str(role)
    if role == "text":
        return "text"
    if missing_share(col, rows) >= MOSTLY_MISSING:
        return "missing"
    if distinct <= 1:
        return "constant"
    if role == "category" and distinct > selection.MAX_GROUPS:
        return "many_groups"
    if role in ("measure", "rate") and selection.is_label_column(col):
        return "code"
    if role == "date":
        return "date"
    if role == "rate":
        return "rate"
    if role == "category" and "breakdown" in kinds:
        return "more_categories"
    if role == "measure" and "kpi" in kinds:
        return "more_measures"
    return "unplanned"


def unanalysed_columns(table: dict[str, Any], specs: list[AnalysisSpec]) -> list[tuple[str, str]]:
    """Every profiled column of ``table`` that no analysis of ``specs`` reads, with its reason, in table order."""
    table = selection.annotated(table)
    used = planned_columns(specs, table)
    rows = int(table.get("rows") or 0)
    kinds = frozenset(spec.kind for spec in specs)
    return [
        (str(col["name"]), skip_reason(col, rows, kinds))
        for col in table.get("columns", [])
        if col.get("name") not in used
    ]
