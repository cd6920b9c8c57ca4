"""Recipes: the machine-readable route to re-derive a number the Coder left without a DuckDB check.

A Coder passes ``track_calculation(..., recipe={"op": ..., ...})``; ``validate_calculations`` lists each selected
unchecked calculation with its recipe, and a Validator (hosted or offline) re-computes the value by its own route
with the expressions here, never reading the tracked value or the Coder's script. Ops: ``column_count`` (view),
``count_groups`` (view, by, optional nonnull columns), ``std`` (view, column; sample standard deviation) and
``statistic`` (view, step, filters, part): any part of a statistics-catalog step
(:mod:`insightloom.statistics.operations`), re-derived from the job's views through DuckDB.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

SCRIPT_NAME = "verify_unchecked.py"
TASK_RE = re.compile(r"^- (?P<id>[A-Za-z0-9_.\-]+) \[(?P<importance>\w+|\?)\] table=(?P<table>\S+) .*$", re.M)
RECIPE_RE = re.compile(r"; recipe=(\{.*\})\s*$")

PRELUDE = '''\
# Validator: re-compute the unchecked calculations the tiers selected, independently of the Coder's scripts.
import numpy as np
import pandas as pd

from coder_analysis_utils import load_df, recompute_statistic, record_verification

_tables = {}


def table(view):
    """Each table is loaded once per script."""
    if view not in _tables:
        _tables[view] = load_df(view)
    return _tables[view]


results = {}
'''


def _column_count(recipe: dict[str, Any]) -> str:
    return f"len(list(table({recipe['view']!r})))"


def _count_groups(recipe: dict[str, Any]) -> str:
    keep = [recipe["by"], *recipe.get("nonnull", [])]
    return f"int(table({recipe['view']!r}).dropna(subset={keep!r})[{recipe['by']!r}].drop_duplicates().shape[0])"


def _std(recipe: dict[str, Any]) -> str:
    values = f"pd.to_numeric(table({recipe['view']!r})[{recipe['column']!r}], errors='coerce').dropna()"
    return f"float(np.std({values}.to_numpy(dtype=float), ddof=1))"


def _statistic(recipe: dict[str, Any]) -> str:
    return f"recompute_statistic({recipe!r})"


# op -> (required keys, Python expression re-computing the value)
RECIPES: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], str]]] = {
    "column_count": (("view",), _column_count),
    "count_groups": (("view", "by"), _count_groups),
    "std": (("view", "column"), _std),
    "statistic": (("view", "step", "part"), _statistic),
}


def selected_tasks(result: str) -> list[tuple[str, dict[str, Any] | None]]:
    """The (id, recipe) pairs the validation result asks the Validator to verify by script."""
    tasks: list[tuple[str, dict[str, Any] | None]] = []
    for match in TASK_RE.finditer(result):
        recipe: dict[str, Any] | None = None
        found = RECIPE_RE.search(match.group(0))
        if found:
            try:
                recipe = json.loads(found.group(1))
            except ValueError:
                recipe = None
        tasks.append((match.group("id"), recipe if isinstance(recipe, dict) else None))
    return tasks


def expression(recipe: dict[str, Any] | None) -> str | None:
    """The pandas expression re-computing a recipe's value, or None when the recipe is unknown or incomplete."""
    if not recipe or recipe.get("op") not in RECIPES:
        return None
    required, build = RECIPES[recipe["op"]]
    if any(not recipe.get(key) for key in required):
        return None
    return build(recipe)


def verification_script(tasks: list[tuple[str, str]]) -> str:
    """One self-contained script re-computing every (id, expression) and recording the results."""
    lines = [f"results[{calc_id!r}] = {expr}" for calc_id, expr in tasks]
    return PRELUDE + "\n".join(lines) + "\nprint(record_verification(results))\n"
