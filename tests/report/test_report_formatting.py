"""The one formatting rule shared by the renderer and the audit."""

from __future__ import annotations

import pytest

from insightloom.report.formatting import cited_text, format_value


@pytest.mark.parametrize(
    ("value", "unit", "decimals", "expected"),
    [
        (45.234, "%", None, "45.2%"),
        (45.25, "%", None, "45.2%"),  # an exact half: Python rounds half to even
        (16431923.4, "KRW", None, "16,431,923 KRW"),
        (1234.5, "USD", None, "1,234 USD"),  # Python rounding: half to even on the exact binary value
        (836, "count", None, "836"),
        (1234567, "count", None, "1,234,567"),
        (0.5123, "ratio", None, "0.51"),
        (0.5123, None, None, "0.51"),
        (1234.5, None, None, "1,234.50"),
        (12.5, "orders/day", None, "12.50 orders/day"),
        (3.14159, None, 4, "3.1416"),
        (45.234, "%", 2, "45.23%"),
        (16431923.4, "KRW", 1, "16,431,923.4 KRW"),
        (-1234.567, None, None, "-1,234.57"),
        (-45.26, "%", None, "-45.3%"),
        (-2500, "KRW", None, "-2,500 KRW"),
        (-0.001, None, None, "0.00"),
        (0.125, None, None, "0.12"),
        (0.375, None, None, "0.38"),
        (0.135, None, None, "0.14"),
        ("Seoul", "KRW", None, "Seoul"),
        ("1,234", None, None, "1,234"),
    ],
)
def test_format_value(value: object, unit: str | None, decimals: int | None, expected: str) -> None:
    assert format_value(value, unit, decimals) == expected


def test_rounding_is_pythons_format() -> None:
    for value in (0.125, 0.135, 2.675, 1.005, 1e6 + 0.5):
        assert format_value(value, None) == f"{value:,.2f}"


def test_cited_text_appends_the_marker() -> None:
    assert cited_text(45.2, "%", None, "[3]") == "45.2% [3]"
    assert cited_text(16431923, "KRW", None, "[1]") == "16,431,923 KRW [1]"
