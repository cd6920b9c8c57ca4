"""``run_statistics``: compute a catalog request and track every part as a Validator-checked calculation.

The Coder (hosted or offline) calls ``run_statistics(<plan item or request>)``; each part of each step becomes one
calculation whose ``basis`` records what was computed (operation, columns, group, filters, parameters, part), so an
answer can be matched to its question by fields, not words. A part DuckDB can compute carries its SQL check; the
others (p-values, test statistics, verdicts) carry a ``statistic`` recipe that the Validator re-derives from the
job's views (:func:`recompute_statistic`), never from this script's frame.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from typing import Any

from insightloom.analysis_utils.jobdir import job_dir
from insightloom.analysis_utils.trackers import frame, table_of, track_value
from insightloom.errors import BadInputError
from insightloom.statistics import operations as ops
from insightloom.statistics import wording  # a module: statistics.operations imports this package first
from insightloom.statistics.request import Filter, StatRequest, Step, parse_item

logger = logging.getLogger(__name__)

RECIPE_OP = "statistic"
#: Decimals of a part when the request asks none: p-values and coefficients keep 4, counts none, the rest 2.
_FINE_PARTS = ("p_value", "r_squared")
_FINE_OPS = ("pearson", "spearman", "kendall", "skew", "kurtosis")


def _request(request: str | Mapping[str, Any] | StatRequest) -> StatRequest:
    if isinstance(request, StatRequest):
        return request
    if isinstance(request, Mapping):
        try:
            return StatRequest.from_json(request)
        except (ValueError, KeyError, TypeError) as exc:
            raise BadInputError(f"Not a statistics request: {exc}.", fix="pass the plan item's exact text") from None
    found = parse_item(request)
    if found is None:
        raise BadInputError(
            f"Not a statistics-catalog item: {str(request).strip()[:200]!r}.",
            fix="copy the plan item's exact wording (it starts 'Compute with the statistics catalog: ')",
        )
    return found


def step_id(step: Step, filters: tuple[Filter, ...], view: str | None) -> str:
    """A stable id stem for a step: its operation and a digest of everything that defines it."""
    data = json.dumps([view, step.op, step.columns, step.group, step.params, [f.to_json() for f in filters]],
                      sort_keys=True, default=str)  # fmt: skip
    return f"stat_{step.op}_{hashlib.sha1(data.encode()).hexdigest()[:8]}"


def basis_of(step: Step, filters: tuple[Filter, ...], part: str) -> dict[str, Any]:
    """The structured fields of one tracked part: what the answer check and retrieval match on."""
    return {
        "op": step.op,
        "columns": list(step.columns),
        "group": step.group,
        "params": ops.params_of(step),
        "filters": [f.to_json() for f in filters],
        "part": part,
    }


def _decimals(step: Step, part: str, value: Any, asked: int | None) -> int | None:
    if isinstance(value, str):
        return None
    if asked is not None:
        return asked
    if isinstance(value, int) or step.op in ("count", "distinct", "missing", "zscore_outliers", "iqr_outliers"):
        return 0
    if step.op in ("min", "max", "sum", "median") and isinstance(value, float) and value.is_integer():
        return 0  # the youngest age of an integer column is 1, not 1.00; its median 5, not 5.00
    if part in _FINE_PARTS or (part == "value" and step.op in _FINE_OPS):
        return 4
    return 2


def _unit(step: Step, part: str) -> str | None:
    if step.op == "share":
        return "%"
    if step.op in ("count", "distinct", "missing", "zscore_outliers", "iqr_outliers") and part == "value":
        return "count"
    return None


def run_statistics(request: str | Mapping[str, Any] | StatRequest, importance: str = "high") -> list[str]:
    """Compute every step of a statistics request and track each part; the ``{{calc:ID}}`` references, in order.

    Args:
        request: The plan item's exact text, the request as a dict, or a :class:`StatRequest`.
        importance: The tracked calculations' importance.

    Raises:
        BadInputError: Not a request; or a step names a column the table lacks.
        ValueError: A step cannot be computed on the rows kept (too few values, a constant column ...).
    """
    req = _request(request)
    data = frame(req.view)
    view = table_of(req.view).view
    kept = data.loc[ops.filter_mask(data, req.filters)]
    refs: list[str] = []
    for step in req.steps:
        try:
            result = ops.evaluate(step, kept)
        except KeyError as exc:
            raise BadInputError(f"Cannot compute {wording.describe_step(step, req.filters)}: {exc}.",
                                fix="name columns exactly as the data profile does") from None  # fmt: skip
        checks = ops.check_sql(step, view, req.filters)
        stem = step_id(step, req.filters, view)
        for part, value in result.items():
            recipe = None
            check = checks.get(part)
            if check is None:
                recipe = {"op": RECIPE_OP, "view": view, "step": step.to_json(),
                          "filters": [f.to_json() for f in req.filters], "part": part}  # fmt: skip
            refs.append(track_value(
                f"{stem}_{part}", value, wording.part_description(step, req.filters, part), _formula(step, part), view,
                ops.input_columns(step), importance, check, _unit(step, part),
                _decimals(step, part, value, req.decimals_for(part, step.op)), recipe,
                basis=basis_of(step, req.filters, part),
            ))  # fmt: skip
        print(f"{wording.describe_step(step, req.filters)}: " + ", ".join(f"{k}={v}" for k, v in result.items()))
    return refs


def _formula(step: Step, part: str) -> str:
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(ops.params_of(step).items()))
    return (
        f"insightloom.statistics.operations.evaluate({step.op!r}, {list(step.columns)!r}"
        + (f", group={step.group!r}" if step.group else "")
        + (f", {params}" if params else "")
        + f")[{part!r}]"
    )


def recompute_statistic(recipe: Mapping[str, Any]) -> Any:
    """The Validator's re-derivation of one ``statistic`` recipe: the step re-computed from the job's views through
    DuckDB (never the Coder's frame), and the recipe's part returned."""
    from insightloom.validation.checks import open_connection
    from insightloom.validation.jobfiles import load_views

    views = load_views(job_dir(), warn_unrecorded=False)
    con = open_connection(views, None, [])
    try:
        return recompute_with(recipe, con)
    finally:
        con.close()


def recompute_with(recipe: Mapping[str, Any], con: Any) -> Any:
    """One ``statistic`` recipe's part re-computed on an open check connection."""
    step = Step.from_json(recipe["step"])
    filters = tuple(Filter.from_json(f) for f in recipe.get("filters") or ())
    return ops.recompute(step, filters, str(recipe["view"]), con)[str(recipe["part"])]
