"""The offline Validator: re-run every check, verify the calculations the tiers selected with its own script, report.

Like a hosted model, it decides only from what the tools return. ``validate_calculations`` lists the unchecked
calculations the tiers selected, each with its table, columns, formula and (when the Coder left one) a
machine-readable recipe. From those recipes this brain writes ONE pandas script that re-computes every selected value
by its own route (never reading the tracked value or the Coder's script) and records them with
``record_verification``. A selected calculation without a usable recipe is left ``unverified``, as a careful model
would leave a number it cannot re-derive.
"""

from __future__ import annotations

import logging
import re

from insightloom.validation.recipes import SCRIPT_NAME, expression, selected_tasks, verification_script

from ..conversation import Conversation, Reply, ToolExchange
from .role_helpers import plan_items, standard_response

logger = logging.getLogger(__name__)

_COUNTS_RE = re.compile(r"(\d+) calculations: (\d+) verified, (\d+) needs_review, (\d+) unverified")


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
