"""The lint's column rules: a code value read as data, a column the report forgets, a count printed as a fraction.

From the analyst's side: a sentinel code is found in the job's own copy of the input (``data/*.csv``) by the lint's
rule (a 9s value far above every other value, or a lone negative code under non-negative values), beside any the
product's profile lists as ``sentinel_values``; a column is "named" when the report's prose, an analysis table, a
heading or a chart title says its name (a missing-cells table alone does not count).

Each rule takes the lint's ``Report`` (and what it read of the input) and returns ``(kind, subject, detail)``
triples. Kinds: ``sentinel_as_extreme``, ``unanalysed_column``, ``count_with_decimals`` (counts in table cells and
prose, and totals or extremes of a whole-number column printed with ``.00``).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

Triple = tuple[str, str, str]

NINES = frozenset({99.0, 999.0, 9999.0, 99999.0, 999999.0, 9999999.0})
NEGATIVE_CODES = frozenset({-1.0, -9.0, -99.0, -999.0, -9999.0})
#: A 9s code stands this many times above every other value of its column.
NINES_GAP = 3.0
#: A lone negative code needs this many distinct non-negative values beside it to read as a code.
MIN_OTHER_VALUES = 5
_MISSING_GRID = re.compile(r"missing|결측|empty cells|blank", re.I)
_COUNT_HEADER = re.compile(r"^(?:count|n|rows|number(?: of \w+)?|records|observations|건수|개수|행 수)$", re.I)
_COUNT_NOUNS = (
    r"rows|records|observations|tables|columns|groups|categories|people|persons|cases|items|years|건|개|명|행"
)
_COUNT_IN_TEXT = re.compile(rf"(?<![\d.,])(\d[\d,]*\.0+)\s+(?:{_COUNT_NOUNS})\b", re.I)
_WHOLE_WITH_DECIMALS = re.compile(r"^[-−]?\d[\d,]*\.0+$")


def _numbers(values: list[Any]) -> list[float]:
    out = []
    for value in values:
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if number == number:  # not NaN
            out.append(number)
    return out


def code_values(values: list[Any]) -> set[float]:
    """Codes hiding in a numeric column: its maximum a 9s value (99..9999999) standing NINES_GAP times above every
    other value, or its minimum a negative code (-1, -9, -99, ...) under at least MIN_OTHER_VALUES non-negative ones."""
    numbers = _numbers(values)
    if len(numbers) < MIN_OTHER_VALUES + 1:
        return set()
    codes = set()
    top, bottom = max(numbers), min(numbers)
    if top in NINES:
        rest = [v for v in numbers if v != top]
        if rest and max(abs(v) for v in rest) * NINES_GAP <= top:
            codes.add(top)
    if bottom in NEGATIVE_CODES:
        rest = [v for v in numbers if v != bottom]
        if rest and min(rest) >= 0 and len(set(rest)) >= MIN_OTHER_VALUES:
            codes.add(bottom)
    return codes


def _profile_codes(column: dict[str, Any]) -> set[float]:
    """The profile's own ``sentinel_values`` for a column (numbers, or objects with a ``value``/``code``)."""
    listed = column.get("sentinel_values") or []
    raw = [v.get("value", v.get("code")) if isinstance(v, dict) else v for v in listed]
    return set(_numbers(raw))


def input_columns(job: Path) -> dict[str, list[float]]:
    """The numeric columns of the job's copy of its input (``data/*.csv``), as their non-missing values."""
    files = sorted((job / "data").glob("*.csv"))
    if not files:
        return {}
    import pandas as pd  # the product's own dependency; loaded late, only when a job has its input copy

    found: dict[str, list[float]] = {}
    for path in files:
        try:
            frame = pd.read_csv(path, low_memory=False)
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        for name in map(str, frame.columns):
            if str(frame[name].dtype).startswith(("int", "float")):
                found[name] = _numbers(frame[name].dropna().tolist())
    return found


def data_codes(numeric: dict[str, list[float]], report: Any) -> dict[str, tuple[set[float], list[float]]]:
    """Per numeric input column with a code: the codes (the lint's rule, plus the profile's own ``sentinel_values``
    found in it) and the column's values, to tell a figure computed over a code from one without it."""
    found: dict[str, tuple[set[float], list[float]]] = {}
    for name, numbers in numeric.items():
        listed = _profile_codes(report.columns.get(name, {}))
        codes = code_values(numbers) | (listed & set(numbers))
        if codes:
            found[name] = (codes, numbers)
    for name, column in report.columns.items():  # no input copy of the column: the profile's word alone
        if name not in numeric and _profile_codes(column):
            found[name] = (_profile_codes(column), [])
    return found


def whole_number_columns(numeric: dict[str, list[float]]) -> set[str]:
    """Input columns whose every value is a whole number (counts, even when a missing cell made them floats)."""
    return {name for name, numbers in numeric.items() if numbers and all(v.is_integer() for v in numbers)}


def whole_figures_with_decimals(report: Any, whole: set[str], aggregated: Any) -> list[Triple]:
    """A total, minimum or maximum of a whole-number column printed with zero decimals ("43,107.00 listings")."""
    found: list[Triple] = []
    for number, calc in report.cited:
        shown = report.printed.get(number, "")
        if not _WHOLE_WITH_DECIMALS.match(shown) or calc.get("unit") == "%":
            continue
        columns = [c for c in aggregated(calc, ("sum", "min", "max")) if c in whole]
        if len(columns) == 1 and not aggregated(calc, ("avg", "median")):
            found.append(("count_with_decimals", columns[0], f"{calc.get('id')} as {shown}"))
    return found


def _close(a: float, b: float) -> bool:
    return abs(a - b) < 0.01 + 1e-6 * abs(b)


def _figure_over_code(value: float, function: str, numbers: list[float], code: float) -> bool:
    """Whether ``value`` is the column's whole-table mean, total or median with the code counted, not without it."""
    rest = [v for v in numbers if v != code]
    if not rest or len(rest) == len(numbers):
        return False
    picks: dict[str, Callable[[list[float]], float]] = {"avg": statistics.fmean, "sum": math.fsum}
    pick = picks.get(function, statistics.median)
    with_code, without = float(pick(numbers)), float(pick(rest))
    return _close(value, with_code) and not _close(value, without)


def sentinel_extremes(report: Any, codes: dict[str, tuple[set[float], list[float]]], aggregated: Any) -> list[Triple]:
    """A printed maximum or minimum equal to a column's code, or a printed mean, total or median that is the
    column's figure with the code counted as a value. ``aggregated(calc, functions)`` names the columns a
    calculation aggregates (the lint's reading of its check and formula)."""
    found: list[Triple] = []
    for _, calc in report.cited:
        value = calc.get("value")
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        for column in aggregated(calc, ("max", "min")):
            if float(value) in codes.get(column, (set(), []))[0]:
                detail = f"{calc.get('id')} prints the code {value:g} as an extreme"
                found.append(("sentinel_as_extreme", column, detail))
        for function in ("avg", "sum", "median"):
            for column in aggregated(calc, (function,)):
                column_codes, numbers = codes.get(column, (set(), []))
                leaked = [c for c in sorted(column_codes) if _figure_over_code(float(value), function, numbers, c)]
                if leaked:
                    detail = f"{calc.get('id')} counts the code {leaked[0]:g} as a value of {column}"
                    found.append(("sentinel_as_extreme", column, detail))
    return found


def _year_ranges(text: str) -> list[tuple[int, int]]:
    spans = re.findall(r"\b(1[89]\d\d|20\d\d)\s*(?:[-–—~]|\.\.|to|through|until)\s*[Xy]?(1[89]\d\d|20\d\d)\b", text)
    return [(int(a), int(b)) for a, b in spans]


def unanalysed_columns(report: Any, year_name: re.Pattern[str], named: Callable[[str, str], bool]) -> list[Triple]:
    """Profiled columns the report names nowhere: not in its prose, headings, chart titles or an analysis table (a
    missing-cells table does not count). A wide table's year column (``year_name``) counts as named inside a year
    range; ``named(column, text)`` is the lint's reading of a column name in text."""
    grids = [g for g in report.grids if not (g and _MISSING_GRID.search(" ".join(g[0])))]
    titles = [f"{s.get('title', '')} {s.get('caption', '')}" for s in report.charts.values()]
    text = "\n".join([*report.paragraphs, *report.headings, *titles, *(c for g in grids for r in g for c in r)])
    if not text.strip():
        return []
    ranges = _year_ranges(text)
    found: list[Triple] = []
    for name, column in report.columns.items():
        label = str(column.get("label") or column.get("display_name") or "")
        if named(name, text) or (label and named(label, text)):
            continue
        year = year_name.match(name)
        if year and any(a <= int(year.group(1)) <= b for a, b in ranges):
            continue
        found.append(("unanalysed_column", name, "profiled but named nowhere in the report, with no reason given"))
    return found


def _count_column_header(header: str, count_columns: set[str]) -> bool:
    plain = re.sub(r"^(?:total|sum of|number of)\s+", "", header.strip(), flags=re.I)
    return bool(_COUNT_HEADER.match(header.strip())) or plain in count_columns


def count_cells(report: Any, count_columns: set[str]) -> list[Triple]:
    """Counts printed with decimals outside the cited figures: a whole number with ``.00`` in a table column headed
    as a count (or as a count column), and ``1,204.00 rows`` in prose."""
    found: list[Triple] = []
    for grid in report.grids:
        if len(grid) < 2:
            continue
        for index, header in enumerate(grid[0]):
            if not _count_column_header(header, count_columns):
                continue
            shown = [
                row[index] for row in grid[1:] if index < len(row) and _WHOLE_WITH_DECIMALS.match(row[index].strip())
            ]
            if shown:
                found.append(("count_with_decimals", header.strip(), f"table cells {', '.join(shown[:2])}"))
    for match in _COUNT_IN_TEXT.finditer("\n".join(report.paragraphs)):
        found.append(("count_with_decimals", match.group(0), "a count printed with decimals in prose"))
    return found
