"""Helpers for the parse tests' made-up tables: a category column and a question that must parse to a request."""

from __future__ import annotations

from typing import Any

from insightloom.statistics.parse import parse_question
from insightloom.statistics.request import StatRequest


def category(name: str, *values: str) -> dict[str, Any]:
    """A text category column listing ``values`` as its top values."""
    top = [{"value": value, "count": 10 * (index + 1)} for index, value in enumerate(values)]
    return {"name": name, "dtype": "string", "role": "category", "distinct": len(top), "top_values": top}


def parsed(question: str, profile: dict[str, Any]) -> StatRequest:
    """The request ``question`` makes (the test fails with the refusal otherwise)."""
    found = parse_question(question, profile)
    assert isinstance(found, StatRequest), found
    return found
