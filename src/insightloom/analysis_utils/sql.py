"""SQL for checks: identifier and literal quoting, ``{{calc:id}}`` references, and builders for wide tables.

A check such as "missing cells in every analysed column" adds one term per column. Written as ``a + b + c + ...``
it nests one level per term, and DuckDB refuses expressions nested deeper than 1,000 levels, so a 2,000-column
table gets a check that can never run. These builders nest the terms as a balanced tree instead (depth about
log2 of the number of terms: 11 for 2,000 columns).
"""

from __future__ import annotations

from collections.abc import Sequence

from insightloom.analysis_utils.calculations import to_python_type


def _balanced(terms: Sequence[str], operator: str) -> str:
    if len(terms) == 1:
        return terms[0]
    middle = len(terms) // 2
    return f"({_balanced(terms[:middle], operator)} {operator} {_balanced(terms[middle:], operator)})"


def sql_sum(terms: Sequence[str], empty: str = "0") -> str:
    """``t1 + t2 + ...`` as a balanced expression (``empty`` when there are no terms)."""
    return _balanced(list(terms), "+") if terms else empty


def sql_all(conditions: Sequence[str], empty: str = "TRUE") -> str:
    """``c1 AND c2 AND ...`` as a balanced expression (``empty`` when there are no conditions)."""
    return _balanced(list(conditions), "AND") if conditions else empty


def qi(name: object) -> str:
    """Quote an identifier for DuckDB: ``qi('매출 금액')`` -> ``"매출 금액"`` (Korean names and spaces are fine)."""
    return '"' + str(name).replace('"', '""') + '"'


def ql(value: object) -> str:
    """A SQL literal for a group key, typed like the column so the comparison needs no cast.

    Numbers stay numbers (``3``, ``2.5``), booleans become ``TRUE``/``FALSE``, anything else a quoted string.
    """
    plain = to_python_type(value)
    if isinstance(plain, bool):
        return "TRUE" if plain else "FALSE"
    if isinstance(plain, (int, float)):
        return repr(plain)
    return "'" + str(plain).replace("'", "''") + "'"


def dbl(column: object) -> str:
    """``CAST("column" AS DOUBLE)``: sums and averages in DOUBLE, like pandas, whatever the stored type."""
    return f"CAST({qi(column)} AS DOUBLE)"


def ref(calc_id: str) -> str:
    """The reference a finding cites a tracked number by: ``ref('revenue_total')`` -> ``{{calc:revenue_total}}``."""
    return "{{calc:" + calc_id + "}}"
