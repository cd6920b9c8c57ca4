"""Conclusions that say what the findings mean for the business, not how they were computed.

From the verified calculations of the standard analyses (their ids follow the catalog's conventions: a breakdown
tracks ``<base>_top``, ``<base>_1``, ``<base>_2``, ``<base>_share_1`` and ``<base>_groups``; a trend
``<base>_change``; a correlation ``<base>_r``; ``source_columns`` name the columns), :func:`conclusions` states
- the main driver: the top group of the headline (first) breakdown and its share, or a tie when the top two are equal;
- concentration: whether that group holds most of the total, or the groups are close to even;
- the direction of the first trend (rising, falling or flat) and its change;
- a strong relationship between two measures, with its direction.
Each line cites its numbers as ``{{calc:ID}}`` and is checked by the renderer's own rules; a line that would be
refused is left out. The offline Reporter writes its conclusions with it; the Reporter prompt asks a hosted model for
the same content.
"""

from __future__ import annotations

from pathlib import Path

from insightloom.calc_refs import reference
from insightloom.errors import InsightloomError
from insightloom.fileio import is_regular_file
from insightloom.report.calcinfo import CalcInfo, load_calc_info
from insightloom.validation.jobfiles import METADATA_FILE, load_calculations

__all__ = ["conclusions"]

#: Above this share the top group dominates; below ``_EVEN`` times the even share the groups are about even.
_DOMINANT_SHARE = 50.0
_EVEN = 1.5
_STRONG_R = 0.5

_TEXTS = {
    "en": {
        "driver": "{by} is the main driver of {m}: {top} leads with {share} of the total.",
        "tie": "No single {by} leads {m}: the top groups tie, each with {share} of the total.",
        "dominant": "More than half of {m} comes from that one group, so the overall result depends heavily on it.",
        "even": "{m} is spread fairly evenly across the {by} groups; no single group dominates.",
        "lead": "The lead is clear but not dominant: the other {by} groups together hold at least half of {m}.",
        "up": "{m} is rising over {date}: from the first to the last period it changed by {change}.",
        "down": "{m} is falling over {date}: from the first to the last period it changed by {change}.",
        "flat": "{m} is flat over {date}: the last period matches the first ({change}).",
        "corr_pos": "{x} and {y} move together (r = {r}): where one is high, the other tends to be high too.",
        "corr_neg": "{x} and {y} move in opposite directions (r = {r}): where one is high, the other tends to be low.",
        "rows": "the row count",
    },
    "ko": {
        "driver": "{m}의 주요 동인은 {by}입니다: {top}이(가) 전체의 {share}로 가장 큽니다.",
        "tie": "{m}에서 한 {by}이(가) 앞서지 않습니다: 상위 그룹이 각각 전체의 {share}로 동률입니다.",
        "dominant": "{m}의 절반 이상이 이 한 그룹에서 나오므로 전체 결과가 이 그룹에 크게 좌우됩니다.",
        "even": "{m}은(는) {by} 그룹 사이에 비교적 고르게 나뉘어 있어 지배적인 그룹이 없습니다.",
        "lead": "선두는 분명하지만 지배적이지는 않습니다: 나머지 {by} 그룹이 합쳐서 {m}의 절반 이상을 차지합니다.",
        "up": "{date} 기준 {m}은(는) 증가 추세입니다: 첫 기간 대비 마지막 기간 변화율은 {change}입니다.",
        "down": "{date} 기준 {m}은(는) 감소 추세입니다: 첫 기간 대비 마지막 기간 변화율은 {change}입니다.",
        "flat": "{date} 기준 {m}은(는) 변화가 없습니다: 마지막 기간이 첫 기간과 같습니다({change}).",
        "corr_pos": "{x}와(과) {y}는 함께 움직입니다(r = {r}): 한쪽이 높으면 다른 쪽도 높은 경향이 있습니다.",
        "corr_neg": "{x}와(과) {y}는 반대로 움직입니다(r = {r}): 한쪽이 높으면 다른 쪽은 낮은 경향이 있습니다.",
        "rows": "건수",
    },
}


def _number(info: CalcInfo | None) -> float | None:
    if info is None or isinstance(info.value, bool) or not isinstance(info.value, int | float):
        return None
    return float(info.value)


def _columns(job_dir: Path) -> dict[str, list[str]]:
    """Calculation id -> its source columns, from calculation_metadata.json."""
    if not is_regular_file(job_dir / METADATA_FILE, beneath=job_dir):
        return {}
    try:
        calculations = load_calculations(job_dir)
    except InsightloomError:
        return {}  # the renderer names a broken metadata file; conclusions just have nothing to say
    return {str(c["id"]): [str(x) for x in c.get("source_columns") or []] for c in calculations}


def _q(name: str) -> str:
    return f"`{name}`"


class _Facts:
    """The verified calculations and their columns, looked up by the catalog's id conventions."""

    def __init__(self, job_dir: Path) -> None:
        self.calcs = {k: v for k, v in load_calc_info(job_dir, required=False).items() if v.status == "verified"}
        self.columns = _columns(job_dir)

    def bases(self, suffix: str) -> list[str]:
        return [calc_id.removesuffix(suffix) for calc_id in self.calcs if calc_id.endswith(suffix)]

    def get(self, base: str, suffix: str) -> CalcInfo | None:
        return self.calcs.get(base + suffix)

    def cols(self, calc_id: str) -> list[str]:
        return self.columns.get(calc_id, [])


def _breakdown(facts: _Facts, words: dict[str, str]) -> list[str]:
    """The main driver of the headline breakdown, and how concentrated the total is."""
    for base in facts.bases("_share_1"):
        top, share = facts.get(base, "_top"), _number(facts.get(base, "_share_1"))
        cols = facts.cols(base + "_share_1")
        if top is None or share is None or not cols:
            continue
        by, m = _q(cols[0]), _q(cols[1]) if len(cols) > 1 else words["rows"]
        first, second = _number(facts.get(base, "_1")), _number(facts.get(base, "_2"))
        values = {"by": by, "m": m, "top": reference(top.calc_id), "share": reference(base + "_share_1")}
        if first is not None and first == second:
            return [words["tie"].format(**values)]
        lines = [words["driver"].format(**values)]
        groups = _number(facts.get(base, "_groups"))
        if share > _DOMINANT_SHARE:
            lines.append(words["dominant"].format(**values))
        elif groups and share < _EVEN * 100.0 / groups:
            lines.append(words["even"].format(**values))
        else:
            lines.append(words["lead"].format(**values))
        return lines
    return []


def _trend(facts: _Facts, words: dict[str, str]) -> list[str]:
    """The direction of the first trend and its first-to-last change."""
    for base in facts.bases("_change"):
        info = facts.get(base, "_change")
        change, cols = _number(info), facts.cols(base + "_change")
        if info is None or change is None or info.unit != "%" or not cols:
            continue
        date, m = _q(cols[0]), _q(cols[1]) if len(cols) > 1 else words["rows"]
        key = "up" if change > 0 else "down" if change < 0 else "flat"
        return [words[key].format(date=date, m=m, change=reference(info.calc_id))]
    return []


def _correlation(facts: _Facts, words: dict[str, str]) -> list[str]:
    """A strong relationship between two measures, and its direction."""
    for base in facts.bases("_r"):
        r, cols = _number(facts.get(base, "_r")), facts.cols(base + "_r")
        if r is None or abs(r) < _STRONG_R or len(cols) < 2:
            continue
        key = "corr_pos" if r > 0 else "corr_neg"
        return [words[key].format(x=_q(cols[0]), y=_q(cols[1]), r=reference(base + "_r"))]
    return []


def conclusions(job_dir: Path, *, language: str = "en") -> list[str]:
    """The conclusions of the job's verified findings, one Markdown line each (no bullet), in ``language``.

    Empty when no breakdown, trend or correlation was verified. Every line cites its numbers as ``{{calc:ID}}``
    and passes the renderer's checks.
    """
    from insightloom.report.render import check_markdown

    job_dir = Path(job_dir)
    words = _TEXTS["ko" if language == "ko" else "en"]
    facts = _Facts(job_dir)
    lines = _breakdown(facts, words) + _trend(facts, words) + _correlation(facts, words)
    return [line for line in lines if not check_markdown(line, job_dir)]
