"""What a question asks, as data: the catalog operations, their columns, filters, groups, parameters and output form.

A :class:`StatRequest` is what ``insightloom ask`` records for a statistics question, what the follow-up Coder gets
as its plan item (:func:`item_text`, the request as JSON behind a fixed prefix, so it round-trips exactly), what
``coder_analysis_utils.run_statistics`` computes, and what an answer is checked against. An LLM answerer fills the
same structure through its tool, so hosted and offline models share one contract.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

#: The comparison operators a filter may use.
FILTER_OPS = ("=", "!=", ">", ">=", "<", "<=")
#: The output forms: the values, a yes/no verdict first, or the group's (or row's) name.
FORMS = ("value", "verdict", "name")
#: Operations whose value is a whole number (a count of rows or values).
WHOLE_NUMBER_OPS = frozenset({"count", "distinct", "missing", "zscore_outliers", "iqr_outliers"})
#: How a follow-up plan item that carries a request starts.
ITEM_PREFIX = "Compute with the statistics catalog: "


@dataclass(frozen=True)
class Filter:
    """Rows kept: ``column op value`` (a text value compares as text, a number as a number)."""

    column: str
    op: str
    value: str | float

    def to_json(self) -> list[Any]:
        return [self.column, self.op, self.value]

    @classmethod
    def from_json(cls, data: Any) -> Filter:
        column, op, value = data
        if op not in FILTER_OPS:
            raise ValueError(f"filter operator {op!r} is not one of {', '.join(FILTER_OPS)}")
        return cls(str(column), str(op), value if isinstance(value, int | float) else str(value))

    def text(self) -> str:
        shown = f"'{self.value}'" if isinstance(self.value, str) else f"{self.value:g}"
        return f"`{self.column}` {self.op} {shown}"


@dataclass(frozen=True)
class Step:
    """One catalog operation.

    Attributes:
        op: The operation's name in :data:`insightloom.statistics.operations.OPERATIONS`.
        columns: The columns it reads: one measure, two (``x``, ``y``; a regression's predictor first) or none
            (a row count).
        group: The grouping column (which group, a t-test's or ANOVA's groups, a χ² test's second column).
        params: Method parameters (``threshold``, ``k``, ``alpha``, ``q``, ``ddof``, ``agg``, ``levels`` ...), sorted.
        show: The parts of the result the question asks for, in order (``value``, ``p_value``, ``verdict`` ...).
    """

    op: str
    columns: tuple[str, ...] = ()
    group: str | None = None
    params: tuple[tuple[str, Any], ...] = ()
    show: tuple[str, ...] = ()

    def param(self, name: str, default: Any = None) -> Any:
        return dict(self.params).get(name, default)

    def with_params(self, **values: Any) -> Step:
        merged = {**dict(self.params), **{k: _frozen(v) for k, v in values.items() if v is not None}}
        return replace(self, params=tuple(sorted(merged.items())))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"op": self.op, "columns": list(self.columns)}
        if self.group is not None:
            data["group"] = self.group
        if self.params:
            data["params"] = {k: _thawed(v) for k, v in self.params}
        if self.show:
            data["show"] = list(self.show)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Step:
        params = data.get("params") or {}
        if not isinstance(params, Mapping):
            raise ValueError("a step's params must be an object")
        return cls(
            op=str(data["op"]),
            columns=tuple(str(c) for c in data.get("columns") or ()),
            group=str(data["group"]) if data.get("group") is not None else None,
            params=tuple(sorted((str(k), _frozen(v)) for k, v in params.items())),
            show=tuple(str(s) for s in data.get("show") or ()),
        )


def _frozen(value: Any) -> Any:
    """Lists as tuples, all the way down (a step is hashable)."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list | tuple) else value


def _thawed(value: Any) -> Any:
    return [_thawed(v) for v in value] if isinstance(value, tuple) else value


@dataclass(frozen=True)
class StatRequest:
    """A statistics question as data.

    Attributes:
        steps: The operations, in the order the question asks them.
        filters: Rows kept before every step (all must hold).
        decimals: The rounding the question asks for (half away from zero); None keeps the report's display.
        part_decimals: Part -> the rounding asked for that part alone (``slope`` 3, ``intercept`` 2).
        form: ``value``, ``verdict`` (a yes/no first) or ``name`` (the group's or row's name, not only its value).
        view: The table; None is the first input.
        language: ``en`` or ``ko``, the answer's language.
    """

    steps: tuple[Step, ...]
    filters: tuple[Filter, ...] = ()
    decimals: int | None = None
    form: str = "value"
    view: str | None = None
    language: str = "en"
    part_decimals: tuple[tuple[str, int], ...] = ()

    def decimals_for(self, part: str, op: str | None = None) -> int | None:
        """The rounding asked for one part ("the slope to 3 decimals, the intercept to 2"), else the request's. A
        whole-number part (a count, a test's degrees of freedom) prints no decimals: "how many, and what percent
        (2 decimals)" rounds the percent."""
        if self.decimals is not None and (part == "dof" or (part == "value" and op in WHOLE_NUMBER_OPS)):
            return 0
        return dict(self.part_decimals).get(part, self.decimals)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"steps": [s.to_json() for s in self.steps], "form": self.form}
        if self.filters:
            data["filters"] = [f.to_json() for f in self.filters]
        if self.decimals is not None:
            data["decimals"] = self.decimals
        if self.view is not None:
            data["view"] = self.view
        if self.language != "en":
            data["language"] = self.language
        if self.part_decimals:
            data["part_decimals"] = dict(self.part_decimals)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StatRequest:
        """The request from :meth:`to_json` output (or a model's tool input).

        Raises:
            ValueError: A key is missing or of the wrong type, the form is unknown, or decimals are negative.
        """
        steps = data.get("steps")
        if not isinstance(steps, list) or not steps:
            raise ValueError("a request needs a non-empty list of steps")
        form = str(data.get("form") or "value")
        if form not in FORMS:
            raise ValueError(f"form {form!r} is not one of {', '.join(FORMS)}")
        decimals = data.get("decimals")
        if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0):
            raise ValueError("decimals must be a non-negative integer or null")
        return cls(
            steps=tuple(Step.from_json(s) for s in steps),
            filters=tuple(Filter.from_json(f) for f in data.get("filters") or ()),
            decimals=decimals,
            form=form,
            view=str(data["view"]) if data.get("view") else None,
            language=str(data.get("language") or "en"),
            part_decimals=tuple(sorted((str(k), int(v)) for k, v in (data.get("part_decimals") or {}).items())),
        )


def item_text(request: StatRequest) -> str:
    """The follow-up Coder's plan item: the request as compact JSON behind :data:`ITEM_PREFIX`."""
    return ITEM_PREFIX + json.dumps(request.to_json(), ensure_ascii=False, separators=(",", ":"))


def parse_item(text: str) -> StatRequest | None:
    """The request a plan item carries (a leading ``- [ ]`` is fine), or None when it is no such item."""
    clean = text.strip().removeprefix("- ").removeprefix("[ ] ").removeprefix("[x] ").strip()
    if not clean.startswith(ITEM_PREFIX):
        return None
    try:
        data = json.loads(clean[len(ITEM_PREFIX) :])
        return StatRequest.from_json(data) if isinstance(data, Mapping) else None
    except (ValueError, KeyError, TypeError):
        return None
