"""A request's parts found among a job's calculations by their basis, never by their wording."""

from __future__ import annotations

from typing import Any

from insightloom.ask.stat_answer import match_request
from insightloom.statistics.request import StatRequest, Step


def _calc(calc_id: str, value: Any, basis: dict[str, Any]) -> dict[str, Any]:
    return {"id": calc_id, "value": value, "basis": {"group": None, "params": {}, "filters": [], **basis}}


CALCS = [
    _calc("top", "West", {"op": "group_max", "columns": ["Revenue"], "group": "Region", "params": {"agg": "sum"},
                          "part": "group"}),
    _calc("west", 24213.75, {"op": "sum", "columns": ["Revenue"], "filters": [["Region", "=", "West"]],
                             "part": "value"}),
    _calc("east", 21101.45, {"op": "sum", "columns": ["Revenue"], "filters": [["Region", "=", "East"]],
                             "part": "value"}),
]  # fmt: skip
VERIFIED = {"top": "West", "west": "24,213.75", "east": "21,101.45"}


def _top(agg: str) -> StatRequest:
    step = Step("group_max", ("Revenue",), "Region", show=("group", "value")).with_params(agg=agg)
    return StatRequest((step,), form="name")


def test_the_top_groups_value_is_its_own_total_from_the_breakdown() -> None:
    found = match_request(_top("sum"), CALCS, VERIFIED)
    assert found.complete, found.missing
    assert found.refs[0]["group"] == "{{calc:top}}" and found.refs[0]["value"] == "{{calc:west}}"


def test_another_aggregation_of_the_group_is_not_taken_for_it() -> None:
    found = match_request(_top("mean"), CALCS, VERIFIED)
    assert not found.complete and "east" not in found.calcs and "west" not in found.calcs


def test_an_unverified_group_total_is_missing() -> None:
    found = match_request(_top("sum"), CALCS, {"top": "West"})
    assert not found.complete and found.missing
