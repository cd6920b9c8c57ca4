"""The sentence a ``{{claim:ID}}`` reference prints: the verdict's wording from ``table.py`` with its evidence.

``claim_text(record, "en")`` -> ``no clear trend: the monthly totals swing by 83.2% of their mean (CV 61.3%, ...)``.
Numbers are formatted by :func:`insightloom.report.formatting.format_value`, the renderer's rule, so the audit can
compare a printed claim with what the renderer would print, character for character.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from insightloom.claims.records import evidence_of, params_of
from insightloom.claims.table import EVIDENCE_FORMAT, kind_of
from insightloom.report.formatting import format_value

_PERIOD_ADJECTIVE = {
    "day": "daily",
    "week": "weekly",
    "month": "monthly",
    "quarter": "quarterly",
    "year": "yearly",
    "step": "per-step",
}
_PERIOD_KO = {"day": "일", "week": "주", "month": "월", "quarter": "분기", "year": "연도", "step": "시점"}
_SERIES = {"sum": ("totals", "합계"), "mean": ("averages", "평균"), "count": ("counts", "건수")}
_STRENGTH_KO = {"strong": "강한", "moderate": "중간 정도의", "weak": "약한"}
_DIRECTION_KO = {"positive": "양의", "negative": "음의"}
_DEFAULTS = {"measure": "the values", "by": "the breakdown", "x": "x", "y": "y", "a": "A", "b": "B"}
_DEFAULTS_KO = {"measure": "값", "by": "구분", "x": "x", "y": "y", "a": "A", "b": "B"}


class _Fields(dict[str, str]):
    """Template fields; a field the record does not give prints a neutral word instead of failing the render."""

    def __init__(self, values: Mapping[str, str], defaults: Mapping[str, str]) -> None:
        super().__init__(values)
        self.defaults = defaults

    def __missing__(self, key: str) -> str:
        return self.defaults.get(key, "?")


def _language(language: str) -> str:
    return "ko" if str(language or "").lower().startswith("ko") else "en"


def _formatted(key: str, value: object, measure_unit: str | None) -> str:
    unit, decimals = EVIDENCE_FORMAT.get(key, (None, None))
    if unit == "measure":
        unit = measure_unit
    return format_value(value, unit, decimals)


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _p_text(value: object) -> str:
    """``= 0.041``, or ``< 0.001`` where three decimals would print a p value of zero."""
    number = _number(value)
    return "< 0.001" if number < 0.0005 else "= " + format_value(number, None, 3)


def _best_notes(evidence: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, str]:
    """Which breakdown explains the most, or that this one was the only one compared."""
    best = str(evidence.get("best") or "")
    if not best or best == str(params.get("by") or ""):
        return {"best_note": "the only breakdown compared", "best_note_ko": "비교한 유일한 구분"}
    share = format_value(_number(evidence.get("best_epsilon_sq")) * 100, "%")
    return {"best_note": f"{best} explains the most, {share}", "best_note_ko": f"최대는 {best}, {share}"}


def _extras(
    kind: str, verdict: str, evidence: Mapping[str, Any], params: Mapping[str, Any], unit: str | None
) -> dict[str, str]:
    """Display fields derived from the evidence and params (signs dropped, shares in %, period words)."""
    period = str(params.get("period") or "period")
    series_en, series_ko = _SERIES.get(str(params.get("agg") or "sum"), ("values", "값"))
    extras: dict[str, str] = {
        "period": period,
        "period_adj": _PERIOD_ADJECTIVE.get(period, "per-period"),
        "period_ko": _PERIOD_KO.get(period, "기간"),
        "series": series_en,
        "series_ko": series_ko,
        "abs_slope": _formatted("slope", abs(_number(evidence.get("slope"))), unit),
        "abs_diff": _formatted("diff", abs(_number(evidence.get("diff"))), unit),
        "effect_pct": format_value(_number(evidence.get("epsilon_sq")) * 100, "%"),
        "p_text": _p_text(evidence.get("p_value")),
    }
    if kind == "correlation" and "_" in verdict and verdict != "driven_by_extremes":
        strength, direction = verdict.split("_", 1)
        extras.update(
            strength=strength,
            direction=direction,
            strength_ko=_STRENGTH_KO.get(strength, strength),
            direction_ko=_DIRECTION_KO.get(direction, direction),
        )
    if kind == "driver":
        extras.update(_best_notes(evidence, params))
    if kind == "sentinel":
        extras["code_text"] = format_value(evidence.get("code"), "count")
    return extras


def claim_text(record: Mapping[str, Any], language: str = "en") -> str:
    """The printed sentence of a claim record (``kind: "claim"``), in English or Korean.

    Args:
        record: The record from ``calculation_metadata.json`` (``claim_kind``, ``value``, ``evidence``, ``test``).
        language: ``en`` or ``ko`` (any other falls back to English).

    Raises:
        ValueError: The record's kind or verdict is not in the claims table (the message lists the valid ones).
    """
    kind = kind_of(str(record.get("claim_kind")))
    verdict = str(record.get("value"))
    if verdict not in kind.wording:
        raise ValueError(f"claim {record.get('id')!r}: verdict {verdict!r} is not one of {', '.join(kind.verdicts)}")
    params, evidence = params_of(record), evidence_of(record)
    unit = params.get("unit") or record.get("unit")
    unit = str(unit) if unit else None
    lang = _language(language)
    values = {key: str(value) for key, value in params.items() if isinstance(value, (str, int, float))}
    values.update({key: _formatted(key, value, unit) for key, value in evidence.items()})
    values.update(_extras(kind.name, verdict, evidence, params, unit))
    tied = int(_number(evidence.get("tied")))
    if kind.name == "concentration" and tied > 1:  # a tie: the first name in order leads no more than the others
        top, more = values.get("top", ""), format_value(tied - 1, "count")
        values["top"] = (f"{top} 외 {more}개 그룹과 동률" if lang == "ko" else
                         f"{top}, tied with {more} other group{'s' if tied > 2 else ''}")  # fmt: skip
    defaults = _DEFAULTS_KO if lang == "ko" else _DEFAULTS
    return kind.wording[verdict][lang].format_map(_Fields(values, defaults))
