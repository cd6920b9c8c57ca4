"""The offline analyst: what the deterministic offline model thinks as Planner and Coder.

The Planner part chooses analyses from the data profile and writes the plan checklist; the Coder part recovers each
analysis from its plan item (:func:`parse_item`) and writes a self-contained pandas/matplotlib script whose every
number carries a DuckDB check (:func:`script_for`).
"""

from __future__ import annotations

from insightloom.analysis.catalog import AnalysisSpec, parse_item, parse_item_text
from insightloom.analysis.planning import (
    SECTION_ITEMS,
    SECTION_SUBTITLES,
    default_title,
    plan_analyses,
    plan_markdown,
)
from insightloom.analysis.revision import revise_plan
from insightloom.models.offline.analyst.scripts import script_for, script_name

__all__ = [
    "SECTION_ITEMS",
    "SECTION_SUBTITLES",
    "AnalysisSpec",
    "default_title",
    "parse_item",
    "parse_item_text",
    "plan_analyses",
    "plan_markdown",
    "revise_plan",
    "script_for",
    "script_name",
]
