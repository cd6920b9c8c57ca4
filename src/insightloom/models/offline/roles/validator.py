"""The offline Validator: re-run every check, verify the calculations the tiers selected with its own script, report.

Like a hosted model, it decides only from what the tools return. ``validate_calculations`` lists the unchecked
calculations the tiers selected, each with its table, columns, formula and (when the Coder left one) a
machine-readable recipe. From those recipes this brain writes ONE pandas script that re-computes every selected value
by its own route (never reading the tracked value or the Coder's script) and records them with
``record_verification``. A selected calculation without a usable recipe is left ``unverified``, as a careful model
would leave a number it cannot re-derive.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

from ..conversation import Conversation, Reply, ToolExchange
from .role_helpers import plan_items, standard_response

logger = logging.getLogger(__name__)

SCRIPT_NAME = "verify_unchecked.py"
_TASK_RE = re.compile(r"^- (?P<id>[A-Za-z0-9_.\-]+) \[(?P<importance>\w+|\?)\] table=(?P<table>\S+) .*$", re.M)
_RECIPE_RE = re.compile(r"; recipe=(\{.*\})\s*$")
_COUNTS_RE = re.compile(r"(\d+) calculations: (\d+) verified, (\d+) needs_review, (\d+) unverified")

_PRELUDE = '''\
# Validator: re-compute the unchecked calculations the tiers selected, independently of the Coder's scripts.
import numpy as np
import pandas as pd

from coder_analysis_utils import load_df, record_verification

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


# op -> (required keys, Python expression re-computing the value)
RECIPES: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], str]]] = {
    "column_count": (("view",), _column_count),
    "count_groups": (("view", "by"), _count_groups),
    "std": (("view", "column"), _std),
}


def selected_tasks(result: str) -> list[tuple[str, dict[str, Any] | None]]:
    """The (id, recipe) pairs the validation result asks the Validator to verify by script."""
    tasks: list[tuple[str, dict[str, Any] | None]] = []
    for match in _TASK_RE.finditer(result):
        recipe: dict[str, Any] | None = None
        found = _RECIPE_RE.search(match.group(0))
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
    return _PRELUDE + "\n".join(lines) + "\nprint(record_verification(results))\n"


def _final(conv: Conversation, validation: ToolExchange, script: ToolExchange | None, skipped: list[str]) -> Reply:
    if validation.status != "success":
        return Reply(text=standard_response("ERROR", [], [validation.result.splitlines()[0][:300]], []))
    source = script.result if script is not None and script.status == "success" else validation.result
    counts = _COUNTS_RE.findall(source)
    needs_review = int(counts[-1][2]) if counts else 0
    insights = [f"{c[0]} calculations: {c[1]} verified, {c[2]} needs_review, {c[3]} unverified." for c in counts[-1:]]
    insights += [line.strip("- ").strip() for line in source.splitlines() if "needs_review " in line][:5]
    if script is not None and script.status != "success":
        insights.append("The verification script failed; its calculations stay unverified: " + script.result[:200])
    if skipped:
        insights.append("Left unverified (no recipe to re-derive them from): " + ", ".join(skipped[:10]))
    files = ["citations.json -- every calculation with its verification status", "validation_report.txt"]
    if script is not None:
        files.append(f"code/{SCRIPT_NAME} -- independent re-computation of the selected unchecked calculations")
    status = "PARTIAL_SUCCESS" if needs_review or (script is not None and script.status != "success") else "SUCCESS"
    return Reply(text=standard_response(status, plan_items(conv), insights, files))


def validator(conv: Conversation) -> Reply:
    exchanges = conv.exchanges()
    validations = [e for e in exchanges if e.name == "validate_calculations"]
    if not validations:
        return Reply.call("validate_calculations")
    validation = validations[-1]
    scripts = [e for e in exchanges if e.name == "write_and_execute_tool"]
    tasks = selected_tasks(validation.result) if validation.status == "success" else []
    doable = [(calc_id, expr) for calc_id, recipe in tasks if (expr := expression(recipe)) is not None]
    skipped = [calc_id for calc_id, recipe in tasks if expression(recipe) is None]
    if doable and not scripts:
        logger.debug("offline validator: script-verifying %d calculation(s)", len(doable))
        return Reply.call(
            "write_and_execute_tool", file_path=SCRIPT_NAME, content=verification_script(doable), timeout=120
        )
    return _final(conv, validation, scripts[-1] if scripts else None, skipped)
