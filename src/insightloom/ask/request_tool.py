"""The answerer's ``statistics_request`` tool: an LLM fills the same request structure the product's parser fills.

When the product cannot read a question as a catalog request (:func:`insightloom.statistics.parse.parse_question`
returns None, or a constraint it cannot place), a hosted answerer may read it itself and call this tool with the
request as JSON. The tool checks it in code (:func:`request_problems_for`: known operations, columns of the data,
numeric columns where numbers are needed) and answers with a tool error naming each problem and its fix; a valid
request is matched to the job's verified calculations by their basis, exactly as a parsed one is, and the tool
returns the computed sentences to restate. The final answer is then checked against that request
(:func:`insightloom.ask.stat_answer.request_problems`), the same check every answer of a parsed request gets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from strands import tool
from strands.types.tools import AgentTool

from ..statistics import operations as ops
from ..statistics.parse import is_numeric
from ..statistics.request import FILTER_OPS, FORMS, StatRequest
from ..statistics.wording import describe_request
from ..tools.tool_results import tool_error
from .stat_answer import Matched, computed_block

TOOL_NAME = "statistics_request"


def request_problems_for(data: Any, profile: Mapping[str, Any]) -> tuple[StatRequest | None, list[str]]:
    """The request ``data`` describes over the profile's first table, or the problems that keep it from one."""
    if not isinstance(data, Mapping):
        return None, ["the request must be a JSON object with 'steps' (and optionally 'filters', 'decimals', 'form')"]
    try:
        request = StatRequest.from_json(data)
    except (ValueError, KeyError, TypeError) as exc:
        return None, [f"{exc}; form is one of {', '.join(FORMS)}, filter operators one of {', '.join(FILTER_OPS)}"]
    tables = [t for t in profile.get("tables", []) if request.view is None or t.get("view") == request.view]
    if not tables:
        return None, [f"the data have no table {request.view!r}; leave 'view' out for the first table"]
    columns = {str(c["name"]): c for c in tables[0].get("columns", []) if c.get("role") != "pii"}
    problems: list[str] = []
    for step in request.steps:
        if step.op not in ops.OPERATIONS:
            problems.append(f"no catalog operation {step.op!r}; use one of {', '.join(ops.OPERATIONS)}")
            continue
        for name in ops.input_columns(step):
            if name not in columns:
                problems.append(f"the data have no column {name!r}; the columns are {', '.join(sorted(columns))}")
        kind = ops.operation(step.op).kind
        numeric = [c for c in step.columns if c in columns and not is_numeric(columns[c])]
        if kind in ("one", "pair", "by") and numeric:
            problems.append(f"{step.op} needs numeric columns; {', '.join(numeric)} holds text")
        if kind == "pair" and len(step.columns) != 2:
            problems.append(f"{step.op} needs exactly two columns (x, y)")
    problems += [
        f"the data have no column {f.column!r} to filter on" for f in request.filters if f.column not in columns
    ]
    return (None if problems else request), problems


@dataclass
class RequestState:
    """What the tool was last called with: the accepted request and its matched calculations (``calcs``: the job's
    calculation records, read once)."""

    request: StatRequest | None = None
    matched: Matched | None = None
    calcs: list[dict[str, Any]] = field(default_factory=list)


def make_request_tool(
    profile: Mapping[str, Any],
    match: Callable[[StatRequest], Matched],
    state: RequestState,
) -> AgentTool:
    """The ``statistics_request`` tool over one job's profile; ``match`` finds the verified calculations."""

    @tool(name=TOOL_NAME)
    def statistics_request(request: dict[str, Any]) -> str | dict[str, Any]:
        """Ask for catalog statistics when the question asks for one and no <computed> block was given.

        Args:
            request: {"steps": [{"op": "mean", "columns": ["Volume"], "group": null, "params": {},
                "show": ["value"]}], "filters": [["Region", "=", "West"]], "decimals": 2, "form": "value"}.
                op is a catalog operation (mean, std, var, median, quantile, min, max, sum, skew, kurtosis,
                zscore_outliers, iqr_outliers, count, distinct, missing, share, normality, pearson, spearman,
                kendall, regression, ttest, anova, chi2, group_max, group_min); form is value, verdict or name.
        """
        found, problems = request_problems_for(request, profile)
        if found is None:
            return tool_error("The request cannot be computed: " + "; ".join(problems) + ". Fix it and call again.")
        matched = match(found)
        state.request, state.matched = found, matched
        if not matched.complete:
            return tool_error(
                f"No verified value of the {'; '.join(matched.missing)} in the job. Fix: answer with the "
                "abstention sentence (the user can ask again with --analyze to compute it)."
            )
        return f"Computed ({describe_request(found)}); answer with these sentences:\n{computed_block(matched)}"

    return statistics_request
