"""The offline Coder: turn one planned analysis into a self-contained Python script.

A script is a constants block (view, columns, ids, units and the wording in the job's language) followed by the
kind's body from :mod:`bodies` / :mod:`bodies_groups`. Ids derive from view and column names, so they are stable
across runs and unique within a job.
"""

from __future__ import annotations

import logging
import pprint
from typing import Any

from insightloom.analysis import choices as selection
from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis.ids import slug, slug_map
from insightloom.analysis.wording import PERIOD_WORDS, texts
from insightloom.errors import BadInputError
from insightloom.models.offline.analyst import bodies, bodies_groups

logger = logging.getLogger(__name__)

TOP_N = 5
_RATE_PREFERENCE = ("roas", "ctr", "conversion_rate", "cpc")
_FORMATS = {"day": "%Y-%m-%d", "week": "%Y-%m-%d", "month": "%Y-%m", "year": "%Y"}
_BODIES = {
    "overview": bodies.OVERVIEW,
    "kpi": bodies.KPI,
    "breakdown": bodies_groups.BREAKDOWN,
    "trend": bodies_groups.TREND,
    "correlation": bodies_groups.CORRELATION,
    "distribution": bodies_groups.DISTRIBUTION,
}
_ORDER = {"overview": "01", "kpi": "02", "breakdown": "03", "trend": "04", "correlation": "05", "distribution": "06"}


def _resolve(spec: AnalysisSpec, profile: dict[str, Any]) -> dict[str, Any]:
    tables = selection.tables(profile)
    table = selection.find_table(profile, spec.view) if spec.view else (tables[0] if tables else None)
    if table is None:
        raise BadInputError(f"The plan names table '{spec.view}', which is not in the data profile.",
                            fix="use a view name from cache/profile.json")  # fmt: skip
    for name in spec.columns():
        col = selection.column(table, name)
        if col is None:
            raise BadInputError(f"The plan names column '{name}', which table '{table.get('view')}' does not have.",
                                fix="use the exact column names of the data profile")  # fmt: skip
        if not selection.usable(col):
            raise BadInputError(f"Column '{name}' holds personal data or identifiers and may not be analysed.",
                                fix="remove it from the plan")  # fmt: skip
    return table


def _is_int(col: dict[str, Any] | None) -> bool:
    return "int" in str((col or {}).get("dtype", "")).lower()


def _value_unit(table: dict[str, Any], measure: str | None, agg: str) -> tuple[str | None, int | None]:
    """Unit and display decimals of aggregated values."""
    if agg == "count" or measure is None:
        return "count", None
    col = selection.column(table, measure) or {}
    unit = selection.measure_unit(col)
    if agg == "mean" or agg == "quantile":
        return (None if unit == "count" else unit), None
    return unit, (0 if unit is None and _is_int(col) else None)


def _prefix(spec: AnalysisSpec, table: dict[str, Any]) -> str:
    return f"{slug(table['view'])}_" if spec.view else ""


def _common(spec: AnalysisSpec, table: dict[str, Any], language: str) -> dict[str, Any]:
    return {
        "VIEW": table["view"],
        "SOURCE": table.get("file") or table["view"],
        "PLAN_ITEM": spec.item_text(language),
        "P": _prefix(spec, table),
        "TX": texts(spec.kind, language),
    }


def _overview(spec: AnalysisSpec, table: dict[str, Any]) -> dict[str, Any]:
    analysed = [c["name"] for c in table.get("columns", []) if selection.usable(c)]
    return {"ANALYSED": analysed, "SLUGS": slug_map(analysed)}


def _kpi(spec: AnalysisSpec, table: dict[str, Any], language: str) -> dict[str, Any]:
    slugs = slug_map([c["name"] for c in table.get("columns", [])])
    info = {}
    for m in spec.measures:
        col = selection.column(table, m) or {}
        unit, decimals = _value_unit(table, m, "sum")
        info[m] = {"slug": slugs[m], "unit": unit, "additive": selection.is_additive(col), "decimals": decimals}
    defs = selection.rate_defs(table)
    rates = {k: _rate(defs[k], language) for k in spec.rates if k in defs}
    return {"MEASURES": list(spec.measures), "INFO": info, "RATES": rates}


def _rate(rate: selection.RateDef, language: str) -> dict[str, Any]:
    label = selection.rate_label(rate.key, language)
    return {"key": rate.key, "num": rate.numerator, "den": rate.denominator, "scale": rate.scale, "unit": rate.unit,
            "label": label}  # fmt: skip


def _col_slug(table: dict[str, Any], name: str | None) -> str:
    return slug_map([c["name"] for c in table.get("columns", [])]).get(name or "", slug(name or "rows"))


def _breakdown(spec: AnalysisSpec, table: dict[str, Any], language: str) -> dict[str, Any]:
    by, m = _col_slug(table, spec.by), _col_slug(table, spec.measure)
    base = {"count": f"rows_by_{by}", "sum": f"{m}_by_{by}", "mean": f"avg_{m}_by_{by}"}[spec.agg]
    pfx = _prefix(spec, table) + base
    unit, decimals = _value_unit(table, spec.measure, spec.agg)
    defs = selection.rate_defs(table) if spec.agg == "sum" else {}
    key = next((k for k in _RATE_PREFERENCE if k in defs), None)
    rate = _rate(defs[key], language) if key else None
    return {"MEASURE": spec.measure, "BY": spec.by, "AGG": spec.agg, "PFX": pfx, "UNIT": unit, "DECIMALS": decimals,
            "TOP_N": TOP_N, "RATE": rate, "CHART": f"breakdown_{pfx}"}  # fmt: skip


def _trend(spec: AnalysisSpec, table: dict[str, Any], language: str) -> dict[str, Any]:
    m, period = _col_slug(table, spec.measure), spec.period or "month"
    base = {"count": f"rows_per_{period}", "sum": f"{m}_per_{period}", "mean": f"avg_{m}_per_{period}"}[spec.agg]
    pfx = _prefix(spec, table) + base
    unit, decimals = _value_unit(table, spec.measure, spec.agg)
    return {"MEASURE": spec.measure, "DATE": spec.by, "AGG": spec.agg, "PERIOD": period, "FMT": _FORMATS[period],
            "TX_PERIOD": PERIOD_WORDS["ko" if language == "ko" else "en"][period], "PFX": pfx, "UNIT": unit,
            "DECIMALS": decimals, "CHART": f"trend_{pfx}"}  # fmt: skip


def _correlation(spec: AnalysisSpec, table: dict[str, Any]) -> dict[str, Any]:
    x, y = spec.measures[:2]
    pfx = _prefix(spec, table) + f"corr_{_col_slug(table, x)}_{_col_slug(table, y)}"
    return {"X": x, "Y": y, "PFX": pfx, "CHART": f"correlation_{pfx}"}


def _distribution(spec: AnalysisSpec, table: dict[str, Any]) -> dict[str, Any]:
    pfx = _prefix(spec, table) + _col_slug(table, spec.measure)
    unit, _ = _value_unit(table, spec.measure, "quantile")
    return {"MEASURE": spec.measure, "PFX": pfx, "UNIT": unit, "CHART": f"distribution_{pfx}"}


def _constants(spec: AnalysisSpec, table: dict[str, Any], language: str) -> dict[str, Any]:
    values = _common(spec, table, language)
    if spec.kind == "overview":
        values.update(_overview(spec, table))
    elif spec.kind == "kpi":
        values.update(_kpi(spec, table, language))
    elif spec.kind == "breakdown":
        values.update(_breakdown(spec, table, language))
    elif spec.kind == "trend":
        values.update(_trend(spec, table, language))
    elif spec.kind == "correlation":
        values.update(_correlation(spec, table))
    else:
        values.update(_distribution(spec, table))
    return values


def script_name(spec: AnalysisSpec, profile: dict[str, Any]) -> str:
    """File name of the analysis script, e.g. ``03_breakdown_category.py`` (stable, unique per analysis)."""
    table = _resolve(spec, profile)
    parts = [_ORDER[spec.kind], {"kpi": "kpis"}.get(spec.kind, spec.kind)]
    if spec.kind in ("breakdown", "trend"):
        parts.append(_col_slug(table, spec.by))
    if spec.kind == "breakdown" and spec.measure and spec.agg == "mean":
        parts.append(f"avg_{_col_slug(table, spec.measure)}")
    if spec.kind == "correlation":
        parts += [_col_slug(table, c) for c in spec.measures[:2]]
    if spec.kind == "distribution":
        parts.append(_col_slug(table, spec.measure))
    if spec.view:
        parts.append(slug(spec.view))
    return "_".join(parts) + ".py"


def _literal(value: Any) -> str:
    return pprint.pformat(value, width=110, sort_dicts=False)


def script_for(spec: AnalysisSpec, profile: dict[str, Any], language: str = "en") -> tuple[str, str]:
    """Write the analysis script for one planned analysis.

    Args:
        spec: The analysis (from :func:`plan_analyses` or :func:`parse_item`).
        profile: The data profile (``cache/profile.json``).
        language: Language of findings, captions and descriptions (``en`` or ``ko``).

    Returns:
        ``(file name, Python source)``; the script imports ``coder_analysis_utils`` and runs with cwd = job folder.

    Raises:
        BadInputError: The spec names a table or column the profile lacks, or a personal/identifier column.
    """
    lang = "ko" if language == "ko" else "en"
    table = _resolve(spec, profile)
    constants = _constants(spec, table, lang)
    item = " ".join(spec.item_text(lang).split())
    header = f"# {item}\n# Written by the insightloom offline Coder: numbers carry a DuckDB check or a recipe.\n\n"
    block = "\n".join(f"{name} = {_literal(value)}" for name, value in constants.items())
    imports = bodies.IMPORTS if spec.kind in ("overview", "kpi") else bodies.CHART_IMPORTS
    source = header + imports + "\n" + block + "\n" + bodies.HELPERS + _BODIES[spec.kind]
    logger.debug("script for %s: %d chars", spec.kind, len(source))
    return script_name(spec, profile), source
