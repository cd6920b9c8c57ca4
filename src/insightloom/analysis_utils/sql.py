"""SQL builders for checks over many columns, which DuckDB can parse however wide the table is.

A check such as "missing cells in every analysed column" adds one term per column. Written as ``a + b + c + ...``
it nests one level per term, and DuckDB refuses expressions nested deeper than 1,000 levels, so a 2,000-column
table gets a check that can never run. These builders nest the terms as a balanced tree instead (depth about
log2 of the number of terms: 11 for 2,000 columns).
"""

from __future__ import annotations

from collections.abc import Sequence


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
