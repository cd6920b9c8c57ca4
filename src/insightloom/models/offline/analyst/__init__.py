"""The offline analyst: the offline model's Planner and Coder, as thin clients of :mod:`insightloom.analysis`.

The Planner writes the product's suggested plan (:func:`plan_markdown`) and applies feedback with the product's
reviser (:func:`revise_plan`); the Coder recovers each analysis from its plan item (:func:`parse_item`) and writes a
script calling the product's ``run_standard`` (:func:`script_for`).
"""

from __future__ import annotations

from insightloom.analysis.catalog import AnalysisSpec, join_refusal, parse_item, parse_item_text
from insightloom.analysis.planning import plan_analyses, plan_markdown
from insightloom.analysis.revision import revise_plan
from insightloom.analysis_utils.standard import script_name
from insightloom.models.offline.analyst.scripts import script_for

__all__ = [
    "AnalysisSpec",
    "join_refusal",
    "parse_item",
    "parse_item_text",
    "plan_analyses",
    "plan_markdown",
    "revise_plan",
    "script_for",
    "script_name",
]
