"""The standard analyses as product functions: one call runs a plan item end to end.

Each ``run_<kind>(spec, language=...)`` loads the table, computes and tracks every number with a DuckDB check (or a
recipe), saves its chart and appends its section to ``all_results.txt``. :func:`run_standard` takes the plan item's
exact wording, so an LLM Coder and the offline Coder run the same analysis from the same text::

    from coder_analysis_utils import run_standard
    run_standard("Break down `Amount` by `Category`: group totals, top group and its share, bar chart")
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import Any

from insightloom.analysis import choices, time_logic
from insightloom.analysis.catalog import AnalysisSpec, item_language, join_refusal, parse_item
from insightloom.analysis.ids import slug
from insightloom.analysis_utils.standard._common import resolve_table, stem
from insightloom.analysis_utils.trackers import job_profile
from insightloom.errors import BadInputError

logger = logging.getLogger(__name__)

#: kind -> (module of this package, function name).
RUNNERS: dict[str, tuple[str, str]] = {
    "overview": ("overview", "run_overview"),
    "kpi": ("kpis", "run_kpi"),
    "breakdown": ("breakdown", "run_breakdown"),
    "trend": ("trend", "run_trend"),
    "correlation": ("correlation", "run_correlation"),
    "distribution": ("distribution", "run_distribution"),
}

_ORDER = {"overview": "01", "kpi": "02", "breakdown": "03", "trend": "04", "correlation": "05", "distribution": "06"}


def script_name(spec: AnalysisSpec, profile: dict[str, Any]) -> str:
    """File name of a standard analysis's script, e.g. ``03_breakdown_category.py``: stable, unique per analysis,
    so re-running an item replaces its own script and numbers.

    Raises:
        BadInputError: The spec names a table or column the profile lacks, or one that may not be analysed.
    """
    table = resolve_table(spec, profile)
    parts = [_ORDER[spec.kind], {"kpi": "kpis"}.get(spec.kind, spec.kind)]
    if spec.kind in ("breakdown", "trend"):
        parts.append(stem(table, spec.by))
    if spec.kind == "trend":
        parts += _trend_parts(spec, table)
    if spec.kind == "breakdown" and spec.measure and spec.agg == "mean":
        parts.append(f"avg_{stem(table, spec.measure)}")
    if spec.kind == "correlation":
        parts += [stem(table, c) for c in spec.measures[:2]]
    if spec.kind == "distribution":
        parts.append(stem(table, spec.measure))
    if spec.kind == "kpi" and spec.filtered:  # its own script: a plan may hold the headline KPIs too
        parts.append(stem(table, spec.measure))
        parts += [f"{stem(table, col)}_{slug(value)}" for col, value in spec.where]
        parts += ["last", spec.last_period] if spec.last_period else []
    if spec.view:
        parts.append(slug(spec.view))
    return "_".join(parts) + ".py"


def _trend_parts(spec: AnalysisSpec, table: dict[str, Any]) -> list[str]:
    """What tells a trend's script from the plan's own trend over the same column: an average (``avg_<m>``), a grain
    other than the time axis' own (``month``), and a split (``by_<column>``). The plan's own trend gets none."""
    parts = [f"avg_{stem(table, spec.measure)}"] if spec.agg == "mean" and spec.measure != spec.by else []
    axis = time_logic.trend_axis(choices.annotated(table))
    if spec.period and axis is not None and axis.kind == "date" and spec.period != axis.period:
        parts.append(spec.period)
    return parts + ([f"by_{stem(table, spec.split)}"] if spec.split else [])


def runner(kind: str) -> Callable[..., None]:
    """The ``run_<kind>`` function of a standard analysis kind.

    Raises:
        BadInputError: The kind has no standard analysis.
    """
    if kind not in RUNNERS:
        raise BadInputError(f"'{kind}' is not a standard analysis kind.", fix=f"use one of: {', '.join(RUNNERS)}")
    module, name = RUNNERS[kind]
    function: Callable[..., None] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return function


def run_spec(spec: AnalysisSpec, *, language: str = "en") -> None:
    """Run one standard analysis given as a spec."""
    logger.debug("standard %s analysis in %s", spec.kind, language)
    runner(spec.kind)(spec, language=language)


def run_standard(plan_item: str, language: str | None = None) -> None:
    """Run the standard analysis a plan item describes, in the item's language unless ``language`` says otherwise.

    Args:
        plan_item: The item's exact wording (a leading ``- [ ]`` is fine), as the Planner wrote it.
        language: ``en`` or ``ko`` for findings and captions; default the item's own language.

    Raises:
        BadInputError: The text is not a standard item, or names a column the profile lacks or forbids.
        JoinRefused: The item reads a joined view the profile's relationships refuse (many-to-many, no key).
        AggregationRefused: The item asks for an aggregation the profile forbids (a total of a year, ...).
    """
    profile = job_profile()
    spec = parse_item(plan_item, profile)
    refused = join_refusal(plan_item, profile) if spec is None else None
    if refused is not None:
        raise refused  # a join that would multiply rows, or no foreign key: the reason and fix, not "unknown item"
    if spec is None:
        raise BadInputError(
            f"Not a standard analysis item (or it names unknown or personal columns): {plan_item.strip()[:200]!r}.",
            fix="copy the item's exact wording from the plan, or write the analysis with the trackers instead",
        )
    run_spec(spec, language=language or item_language(plan_item))
