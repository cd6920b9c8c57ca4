"""Coercion read on a column's distinct values (each once, with its count) decides exactly as on every cell.

Large columns that repeat their values take the distinct-values path for speed; these tests hold both paths to the
same typed column, unit, report, text levels and notice over varied columns (numbers, units, dates, placeholders,
words, codes, digit groups, long ids), large enough that the first-cells sample differs from the whole column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from insightloom.intake.coerce import _NUM_RE, _to_numbers, coerce_column

_WORDS = ["TIE", "EVEN", "north", "South", "서울", "none", "-", "n/a", "x", "A", "B12", "100a", "1 and 2", "about 3"]
_DATES = ["%Y-%m-%d", "%m/%d/%y", "%d.%m.%Y", "%Y%m%d", "%Y-%m-%dT%H:%M:%SZ", "%Y년 %m월 %d일", "%Y/%m/%d %H:%M"]


@st.composite
def _value(draw: st.DrawFn, kind: str) -> str:
    n = draw(st.integers(-2_000_000, 2_000_000))
    if kind == "int":
        return draw(st.sampled_from(["", "+"])) + str(n) if n >= 0 else str(n)
    if kind == "decimal":
        return f"{n / draw(st.sampled_from([4, 100, 1000, 3])):.{draw(st.integers(0, 4))}f}"
    if kind == "thousands":
        return f"{n:,}" if draw(st.booleans()) else f"{n / 100:,.2f}"
    if kind == "unit":
        return draw(st.sampled_from(["{}%", "${}", "₩{}", "{}원", "€{}"])).format(abs(n) % 5000)
    if kind == "grouped":
        sep = draw(st.sampled_from([" ", "\t", "\u00a0", "\u202f"]))
        return f"{abs(n):,}".replace(",", sep)
    if kind == "date":
        day = pd.Timestamp("2015-01-01") + pd.Timedelta(days=abs(n) % 3000, minutes=abs(n) % 1440)
        return day.strftime(draw(st.sampled_from(_DATES)))
    if kind == "id":
        return draw(st.sampled_from(["0", "00", "1234567890123"])) + str(abs(n))
    if kind == "exp":
        return f"{n:.3e}"
    if kind == "euro":
        return f"{n / 100:,.2f}".replace(",", " ").replace(".", ",").replace(" ", ".")
    return draw(st.sampled_from(_WORDS))


_KINDS = ["int", "decimal", "thousands", "unit", "grouped", "date", "id", "exp", "euro", "word"]
_KINDS += ["int", "grouped", "date"]  # the kinds with the most rules, drawn twice as often


@st.composite
def _column(draw: st.DrawFn) -> tuple[pd.Series, str, bool]:
    kinds = draw(st.lists(st.sampled_from(_KINDS), min_size=1, max_size=2))
    pool = draw(st.lists(st.one_of([_value(kind) for kind in kinds]), min_size=1, max_size=30))
    pool += draw(st.lists(st.sampled_from(["", " ", " 7 ", "TIE"]), max_size=2))  # blanks, padding, a level
    rows = draw(st.one_of(st.integers(1, 60), st.integers(500, 1500)))  # past the 500-cell sample, or not
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    weights = rng.dirichlet(np.full(len(pool), draw(st.sampled_from([0.2, 1.0, 5.0]))))
    cells = [pool[i] for i in rng.choice(len(pool), size=rows, p=weights)]
    level = draw(st.sampled_from([None, None, "TIE", "EVEN", "n.s."]))
    if level:  # a word level in a few cells, as in a score margin
        for i in rng.choice(rows, size=max(1, rows // 20), replace=False):
            cells[i] = level
    name = draw(st.sampled_from(["value", "order_date", "amount"]))
    return pd.Series(cells, dtype="str", name=name), name, draw(st.booleans())


def _fixed(cells: list[str], name: str = "value") -> tuple[pd.Series, str, bool]:
    return pd.Series(cells, dtype="str", name=name), name, False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(column=_column())
@example(column=_fixed([f"{i % 97:+d}" if i % 13 else "TIE" for i in range(900)], "margin"))  # levels past the sample
@example(column=_fixed([f"{i * 37 % 5000 + 1000:,}".replace(",", "\t") for i in range(900)] + ["12"]))  # tab groups
@example(column=_fixed(["-" if i % 50 == 7 else f"{i % 28 + 1}/{i % 12 + 1}/2{i % 10}" for i in range(900)], "date"))
@example(column=_fixed([str(i % 40) for i in range(700)] + ["12 (est.)"] * 3))  # reported: junk past the sample
def test_distinct_values_path_decides_as_every_cell(column: tuple[pd.Series, str, bool]) -> None:
    raw, name, decimal_comma = column
    cells = coerce_column(raw, name, decimal_comma=decimal_comma, distinct=False)
    distinct = coerce_column(raw, name, decimal_comma=decimal_comma, distinct=True)
    pd.testing.assert_series_equal(distinct.series, cells.series, check_exact=True)
    assert (distinct.unit_hint, distinct.numeric_text) == (cells.unit_hint, cells.numeric_text)
    assert (distinct.text_levels, distinct.notice) == (cells.text_levels, cells.notice)


_NUMBER_TEXT = st.from_regex(r"\A[+-]?(?:\d{0,20}\.?\d{0,20})(?:[eE][+-]?\d{1,3})?\Z").filter(_NUM_RE.fullmatch)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(_NUMBER_TEXT, min_size=1, max_size=30))
def test_fast_number_cast_reads_as_pandas(values: list[str]) -> None:
    text = pd.Series(values, dtype="str")
    fast, slow = _to_numbers(text), pd.to_numeric(text, errors="coerce")
    assert fast.dtype == slow.dtype
    fast_values, slow_values = fast.to_numpy(dtype="float64"), slow.to_numpy(dtype="float64")
    assert np.array_equal(fast_values, slow_values, equal_nan=True)
    assert np.array_equal(np.signbit(fast_values), np.signbit(slow_values))
