"""One planned analysis, its plan-item wording, and recovering it from that wording.

The offline Coder sees only the plan text and the data profile, like an LLM would, so each plan item must carry
everything needed to write the script: kind, columns (in backticks, so names with commas or spaces stay
unambiguous), aggregation and period. :func:`parse_item` inverts :meth:`AnalysisSpec.item_text` exactly, in both
languages.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from insightloom.analysis import choices as selection
from insightloom.analysis import joins
from insightloom.errors import JoinRefused

logger = logging.getLogger(__name__)

KINDS = ("overview", "kpi", "breakdown", "trend", "correlation", "distribution")
PERIODS = {"en": {"day": "day", "week": "week", "month": "month", "year": "year", "step": "time step"},
           "ko": {"day": "일별", "week": "주별", "month": "월별", "year": "연도별", "step": "시점별"}}  # fmt: skip
#: The last period a filtered KPI keeps ("the last month"); Korean needs nouns here, not the trend's "월별".
LAST_PERIODS = {"en": {"day": "day", "week": "week", "month": "month", "year": "year"},
                "ko": {"day": "날", "week": "주", "month": "달", "year": "해"}}  # fmt: skip
#: How a filtered KPI aggregates its measure, in its wording.
FILTER_AGGS = {"en": {"sum": "total", "mean": "average"}, "ko": {"sum": "합계", "mean": "평균"}}
WHERE_JOIN = {"en": " and ", "ko": ", "}
_PAIR = "`[^`]+` = '(?:[^']|'')*'"

# (kind, agg or variant) -> {language: template}. Placeholders: {m} {by} {date} {x} {y} {ms} {rates} {period}, for a
# filtered KPI {where} {last}, and for a split trend {split}.
TEMPLATES: dict[tuple[str, str], dict[str, str]] = {
    ("overview", ""): {
        "en": "Profile the data: rows, columns, missing cells and their share",
        "ko": "데이터 개요와 품질 점검: 행 수, 열 수, 결측 셀 수와 비율",
    },
    ("kpi", "rates"): {
        "en": "Compute headline KPIs for {ms}: totals or averages, and rates from their parts: {rates}",
        "ko": "핵심 지표 계산: {ms}의 합계 또는 평균, 구성 요소로 다시 계산한 비율: {rates}",
    },
    ("kpi", ""): {
        "en": "Compute headline KPIs for {ms}: totals or averages",
        "ko": "핵심 지표 계산: {ms}의 합계 또는 평균",
    },
    ("breakdown", "sum"): {
        "en": "Break down {m} by {by}: group totals, top group and its share, bar chart",
        "ko": "{by}별 {m} 분석: 그룹별 합계, 상위 그룹과 비중, 막대 차트",
    },
    ("breakdown", "mean"): {
        "en": "Compare average {m} by {by}: group averages, top group, bar chart",
        "ko": "{by}별 평균 {m} 비교: 그룹별 평균, 상위 그룹, 막대 차트",
    },
    ("breakdown", "count"): {
        "en": "Count rows by {by}: group counts, top group and its share, bar chart",
        "ko": "{by}별 건수 분석: 그룹별 건수, 상위 그룹과 비중, 막대 차트",
    },
    ("trend", "sum"): {
        "en": "Trend of {m} per {period} over {date}: totals per period, first vs last period change, line chart",
        "ko": "{date} 기준 {period} {m} 추이: 기간별 합계, 첫 기간 대비 마지막 기간 변화율, 선 차트",
    },
    ("trend", "mean"): {
        "en": "Trend of average {m} per {period} over {date}: averages per period, first vs last period change, "
        "line chart",
        "ko": "{date} 기준 {period} 평균 {m} 추이: 기간별 평균, 첫 기간 대비 마지막 기간 변화율, 선 차트",
    },
    ("trend", "count"): {
        "en": "Trend of row count per {period} over {date}: rows per period, first vs last period change, line chart",
        "ko": "{date} 기준 {period} 건수 추이: 기간별 건수, 첫 기간 대비 마지막 기간 변화율, 선 차트",
    },
    # A trend split by a category: one series per group of {split} (the largest groups; the rest named as left out).
    ("trend", "split_sum"): {
        "en": "Trend of {m} per {period} over {date} by {split}: totals per period and category, first vs last "
        "period change per category, line chart",
        "ko": "{date} 기준 {split}별 {period} {m} 추이: 기간·범주별 합계, 범주별 첫 기간 대비 마지막 기간 변화율, "
        "선 차트",
    },
    ("trend", "split_mean"): {
        "en": "Trend of average {m} per {period} over {date} by {split}: averages per period and category, first vs "
        "last period change per category, line chart",
        "ko": "{date} 기준 {split}별 {period} 평균 {m} 추이: 기간·범주별 평균, 범주별 첫 기간 대비 마지막 기간 변화율, "
        "선 차트",
    },
    ("trend", "split_count"): {
        "en": "Trend of row count per {period} over {date} by {split}: rows per period and category, first vs last "
        "period change per category, line chart",
        "ko": "{date} 기준 {split}별 {period} 건수 추이: 기간·범주별 건수, 범주별 첫 기간 대비 마지막 기간 변화율, "
        "선 차트",
    },
    # A wide table keeps one column per year: the trend reads across those columns, starting at {date}.
    ("trend", "wide_sum"): {
        "en": "Trend per year across the year columns from {date}: totals per year, first vs last year change, "
        "line chart",
        "ko": "{date}부터 연도 열 전체의 연도별 추이: 연도별 합계, 첫 연도 대비 마지막 연도 변화율, 선 차트",
    },
    ("trend", "wide_mean"): {
        "en": "Trend per year across the year columns from {date}: averages per year, first vs last year change, "
        "line chart",
        "ko": "{date}부터 연도 열 전체의 연도별 평균 추이: 연도별 평균, 첫 연도 대비 마지막 연도 변화율, 선 차트",
    },
    ("correlation", ""): {
        "en": "Correlate {x} with {y}: Pearson r and scatter chart",
        "ko": "{x} 및 {y} 상관관계: 피어슨 상관계수와 산점도",
    },
    ("distribution", ""): {
        "en": "Distribution of {m}: median, p90, IQR outliers and histogram",
        "ko": "{m} 분포와 이상치: 중앙값, 90번째 백분위수, IQR 이상치, 히스토그램",
    },
}


def _filtered_templates() -> dict[tuple[str, str], dict[str, str]]:
    """The filtered KPIs: the total or average of one measure over the rows of some category values (``where``), of
    the last period of a date column (``last``), or both. Variant ``[where_][last_]<agg>``."""
    parts = {"en": (" for {where}", " in the last {last} of {date}"), "ko": ("{where}", "{date} 기준 마지막 {last}")}
    out: dict[tuple[str, str], dict[str, str]] = {}
    for flags in ((True, True), (True, False), (False, True)):
        for agg in ("sum", "mean"):
            variant = "_".join([*(["where"] if flags[0] else []), *(["last"] if flags[1] else []), agg])
            en = "".join(p for p, on in zip(parts["en"], flags, strict=True) if on)
            ko = ", ".join(p for p, on in zip(parts["ko"], flags, strict=True) if on)
            out[("kpi", variant)] = {
                "en": f"Compute the {FILTER_AGGS['en'][agg]} of {{m}}{en}",
                "ko": f"{ko} 행의 {{m}} {FILTER_AGGS['ko'][agg]} 계산",
            }
    return out


TEMPLATES.update(_filtered_templates())
TABLE_SUFFIX = {"en": " (table {view})", "ko": " (테이블 {view})"}
#: A joined view (``orders+customers``, :mod:`insightloom.analysis.joins`) named in words.
JOIN_SUFFIX = {"en": " (table {child} joined with {parents})", "ko": " (테이블 {child}에 {parents} 조인)"}
PARENTS_JOIN = {"en": " and ", "ko": ", "}
_ITEM_PREFIX = re.compile(r"^\s*(?:[-*]\s*)?(?:\[[ xX]\]\s*)?")
_COLS = "`[^`]+`(?:, `[^`]+`)*"


@dataclass(frozen=True)
class AnalysisSpec:
    """One analysis of the plan.

    Attributes:
        kind: overview, kpi, breakdown, trend, correlation or distribution.
        view: Table view; None means the first input (the ``data`` alias).
        measure: Measure aggregated (breakdown, trend, distribution); None means row counts.
        by: Category column (breakdown) or date column (trend).
        measures: KPI measures, or the (x, y) pair of a correlation.
        agg: ``sum``, ``mean`` or ``count`` (breakdown, trend).
        period: Trend bucket: day, week, month or year.
        rates: KPI rate kinds recomputed from their parts (keys of ``selection.RATE_KINDS``).
        where: A filtered KPI's ``(category column, value)`` pairs: only the rows where each column equals its
            value (one value per column).
        last_period: A filtered KPI's period (day, week, month, year): only the rows in the last such period of the
            date column ``by``, the latest in the whole table.
        split: A trend's category column: one series per group (``split_<agg>`` variant, "... by `Category`");
            None for one series over all rows.

    A filtered KPI (``where`` or ``last_period`` set) aggregates the single ``measure`` with ``agg`` (``sum`` or
    ``mean``); ``measures`` stays empty.
    """

    kind: str
    view: str | None = None
    measure: str | None = None
    by: str | None = None
    measures: tuple[str, ...] = ()
    agg: str = ""
    period: str | None = None
    rates: tuple[str, ...] = ()
    where: tuple[tuple[str, str], ...] = ()
    last_period: str | None = None
    split: str | None = None

    @property
    def filtered(self) -> bool:
        """Whether this is a filtered KPI (it keeps only some rows)."""
        return self.kind == "kpi" and bool(self.where or self.last_period)

    def _variant(self) -> str:
        if self.filtered:
            flags = (["where"] if self.where else []) + (["last"] if self.last_period else [])
            return "_".join([*flags, self.agg or "sum"])
        if self.kind == "kpi":
            return "rates" if self.rates else ""
        if self.kind == "trend" and self.split:
            return "split_" + self.agg
        if self.kind == "trend" and self.measure is not None and self.measure == self.by:
            return "wide_" + self.agg  # a wide table's trend names its first year column as both
        return self.agg if self.kind in ("breakdown", "trend") else ""

    def columns(self) -> list[str]:
        """Every column the analysis reads."""
        cols = [self.measure, self.by, *self.measures, *(c for c, _v in self.where), self.split]
        return [c for c in dict.fromkeys(cols) if c]

    def item_text(self, language: str = "en") -> str:
        """The plan checklist item for this analysis, in English or Korean (``ko``)."""
        lang = "ko" if language == "ko" else "en"
        template = TEMPLATES[(self.kind, self._variant())][lang]
        x, y = (self.measures + ("", ""))[:2]
        text = template.format(
            m=_q(self.measure),
            by=_q(self.by),
            date=_q(self.by),
            x=_q(x),
            y=_q(y),
            ms=", ".join(_q(m) for m in self.measures),
            rates=", ".join(selection.rate_label(r, lang) for r in self.rates),
            period=PERIODS[lang].get(self.period or "", ""),
            where=WHERE_JOIN[lang].join(f"{_q(c)} = {quote_value(v)}" for c, v in self.where),
            last=LAST_PERIODS[lang].get(self.last_period or "", ""),
            split=_q(self.split),
        )
        if self.view and joins.is_joined(self.view):
            child, *parents = self.view.split(joins.JOIN_SEP)
            text += JOIN_SUFFIX[lang].format(child=_q(child), parents=PARENTS_JOIN[lang].join(map(_q, parents)))
        elif self.view:
            text += TABLE_SUFFIX[lang].format(view=_q(self.view))
        return text


def _q(name: str | None) -> str:
    return f"`{name}`" if name else ""


def quote_value(value: str) -> str:
    """A filter value in an item: ``'West'``, a quote inside doubled (``'O''Brien'``), so any text round-trips."""
    return "'" + value.replace("'", "''") + "'"


def _pattern(template: str, lang: str) -> re.Pattern[str]:
    groups = {
        "m": f"(?P<m>{_COLS})",
        "by": f"(?P<by>{_COLS})",
        "date": f"(?P<by>{_COLS})",
        "x": "(?P<x>`[^`]+`)",
        "y": "(?P<y>`[^`]+`)",
        "ms": f"(?P<ms>{_COLS})",
        "rates": "(?P<rates>.+?)",
        "period": "(?P<period>" + "|".join(re.escape(w) for w in PERIODS[lang].values()) + ")",
        "where": f"(?P<where>{_PAIR}(?:{re.escape(WHERE_JOIN[lang])}{_PAIR})*)",
        "last": "(?P<last>" + "|".join(re.escape(w) for w in LAST_PERIODS[lang].values()) + ")",
        "split": f"(?P<split>{_COLS})",
    }
    parts = re.split(r"(\{[a-z]+\})", template)
    body = "".join(groups[p[1:-1]] if p.startswith("{") else re.escape(p) for p in parts)
    suffix = re.escape(TABLE_SUFFIX[lang]).replace(re.escape("{view}"), "(?P<view>`[^`]+`)")
    parents = f"`[^`]+`(?:{re.escape(PARENTS_JOIN[lang])}`[^`]+`)*"
    joined = (re.escape(JOIN_SUFFIX[lang]).replace(re.escape("{child}"), "(?P<child>`[^`]+`)")
              .replace(re.escape("{parents}"), f"(?P<parents>{parents})"))  # fmt: skip
    return re.compile(f"{body}(?:{suffix}|{joined})?")


_PATTERNS = [
    (kind, variant, lang, _pattern(text, lang))
    for (kind, variant), by_lang in TEMPLATES.items()
    for lang, text in by_lang.items()
]


def _names(group: str | None) -> list[str]:
    return re.findall(r"`([^`]+)`", group or "")


def _build_filtered(variant: str, lang: str, found: dict[str, str | None]) -> AnalysisSpec | None:
    pairs = re.findall(r"`([^`]+)` = '((?:[^']|'')*)'", found.get("where") or "")
    where = tuple((c, v.replace("''", "'")) for c, v in pairs)
    if len({c for c, _v in where}) < len(where):
        return None  # a column equal to two values keeps no row
    last = next((k for k, w in LAST_PERIODS[lang].items() if w == found.get("last")), None)
    view, measure, date = (next(iter(_names(found.get(k))), None) for k in ("view", "m", "by"))
    return AnalysisSpec("kpi", view, measure, date, agg=variant.rsplit("_", 1)[-1], where=where, last_period=last)


def _joined_view(found: dict[str, Any]) -> dict[str, Any]:
    """The groups with a joined view's words (``table `a` joined with `b```) folded into ``view`` (``a+b``)."""
    if found.get("child"):
        found["view"] = "`" + joins.JOIN_SEP.join(_names(found["child"]) + _names(found.get("parents"))) + "`"
    return found


def _build(kind: str, variant: str, lang: str, match: re.Match[str]) -> AnalysisSpec | None:
    found = _joined_view(match.groupdict())
    if kind == "kpi" and variant not in ("", "rates"):
        return None if len(_names(found.get("m"))) > 1 else _build_filtered(variant, lang, found)
    one: dict[str, str | None] = {
        k: next(iter(_names(found.get(k))), None) for k in ("m", "by", "x", "y", "view", "split")
    }
    if any(len(_names(found.get(k))) > 1 for k in ("m", "by", "split")):
        return None
    period = next((k for k, w in PERIODS[lang].items() if w == found.get("period")), None)
    rates: tuple[str, ...] = ()
    if found.get("rates"):
        keys = [selection.rate_key(label) for label in found["rates"].split(", ")]
        if None in keys:
            return None
        rates = tuple(k for k in keys if k)
    measures = tuple(_names(found.get("ms"))) if kind == "kpi" else tuple(c for c in (one["x"], one["y"]) if c)
    agg = variant.removeprefix("split_") if kind in ("breakdown", "trend") else ""
    if agg.startswith("wide_"):
        agg, one["m"], period = agg.removeprefix("wide_"), one["by"], "year"
    if one["split"] is not None and one["split"] in (one["m"], one["by"]):
        return None  # a series split by its own measure or time axis is no split
    return AnalysisSpec(kind, one["view"], one["m"], one["by"], measures, agg, period, rates, split=one["split"])


def _columns_exist(spec: AnalysisSpec, profile: dict[str, Any]) -> bool:
    table = selection.find_table(profile, spec.view or "data")
    if table is None:
        return False
    for name in spec.columns():
        col = selection.column(table, name)
        if col is None or not selection.usable(col):
            logger.debug("plan item names column %r that is missing or not analysable", name)
            return False
    return True


def parse_item(text: str, profile: dict[str, Any]) -> AnalysisSpec | None:
    """Recover the analysis from a plan item's exact wording (either language).

    Args:
        text: The item text; a leading ``- [ ]`` / ``- [x]`` is ignored.
        profile: The data profile, to check that the named table and columns exist and may be analysed.

    Returns:
        The spec, or None when the text is not an analysis item or names unknown/personal columns.
    """
    spec = parse_item_text(text)
    if spec is not None and _columns_exist(spec, profile):
        return spec
    return None


def join_refusal(text: str, profile: dict[str, Any]) -> JoinRefused | None:
    """Why an item's joined view cannot be read (many-to-many, no foreign key), or None when it names no joined view
    or an allowed one: the refusal a script would raise, for a Coder that reports the item as not possible."""
    spec = parse_item_text(text)
    if spec is None or not joins.is_joined(spec.view):
        return None
    try:
        joins.resolve(profile, str(spec.view))
    except JoinRefused as exc:
        return exc
    return None


def parse_item_text(text: str) -> AnalysisSpec | None:
    """Recover the analysis from an item's wording alone, without checking columns against a profile."""
    clean = _ITEM_PREFIX.sub("", text.strip(), count=1).strip()
    for kind, variant, lang, pattern in _PATTERNS:
        match = pattern.fullmatch(clean)
        if match:
            spec = _build(kind, variant, lang, match)
            if spec is not None:
                return spec
    return None


def item_language(text: str) -> str:
    """``ko`` when the item uses the Korean wording, else ``en``."""
    clean = _ITEM_PREFIX.sub("", text.strip(), count=1).strip()
    return next((lang for _k, _v, lang, pattern in _PATTERNS if pattern.fullmatch(clean)), "en")
