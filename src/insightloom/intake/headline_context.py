"""What a column's name and its neighbours say about whether it should lead a report.

The headline ranking in :mod:`insightloom.intake.semantics` scores each measure on its own (a unit, an outcome
name, a total of others). Some columns only show what they are beside the rest of the table: ``re74, re75, re78``
are one amount at three dates, so the latest is the outcome and the earlier ones its baselines; ``Lag1..Lag5`` are
shifted copies of another column; ``open, high, low, close`` are one price, read at the close; ``item_01..item_27``
are a questionnaire's parts. Background columns (income, age, education, distance, the weather) usually explain
the measure an analyst cares about rather than being it. Each rule returns points with a reason, the same for every
model.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from insightloom.intake.roles import field_name, normalize_name

#: ``re78``, ``BILLS104``, ``earn_98``, ``item_07``: a stem and a 1..4 digit number.
_NUMBERED_RE = re.compile(r"^(?P<stem>.*?[a-z])[ _.]?(?P<number>\d{1,4})$")
_LAG_RE = re.compile(r"(^| )(lag|lagged)( |$|\d)|(^| )lag\d*$")
_OHLC = ("open", "high", "low", "close")
#: How many observations stand behind a row's value, or how complete it is: data-quality metadata.
_METADATA_RE = re.compile(
    r"(^| )(obs|observations?|nobs|n obs|num obs|number of observations|sample size)( count| n| num)?$"
    r"|(^| )(percent|pct) complete$|(^| )completeness$|관측 ?수"
)
#: A position within a group (``childNum``, ``oscar_no``, ``case nr``): it orders the rows, it measures nothing.
_POSITION_RE = re.compile(r"^[a-z]+ (num|no|nr)$")
#: Who or what the rows are, and their conditions: usually what explains the measure, not the measure.
_BACKGROUND_RE = re.compile(
    r"^(income|inc|hh ?income|household income|family income|faminc|age|ages|educ|education|educatn|edu|"
    r"schooling|years of education|distance|dist)$|^(소득|나이|연령|학력|거리)$"
)
#: The size of what the rows are (a chick's weight, a child's height): in a table of organisms, the response.
_SIZE_RE = re.compile(r"(^| )(weight|height|length)$|(체중|몸무게|길이)$|^키$")
_WEATHER_RE = re.compile(
    r"^(temp|temperature|wind|wind speed|humidity|rain|rainfall|precip|solar r?)$|^(기온|풍속|습도)$"
)
_WEATHER_TABLE_RE = re.compile(r"weather|climate|temp|storm|wind|rain|기상|날씨|기온")
#: A numbered family this long from 0 or 1 is a set of parts (``item_01..item_27``, ``Q1..Q5``), not dates.
_PARTS_MIN = 3
_PERIODS_MAX = 4

Points = dict[str, list[tuple[float, str | None]]]


def _norm(name: str) -> str:
    return normalize_name(field_name(name))


def _numbered_families(names: Iterable[str]) -> dict[str, list[tuple[int, str]]]:
    families: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for name in names:
        match = _NUMBERED_RE.match(_norm(name))
        if match:
            families[match["stem"].strip()].append((int(match["number"]), name))
    return {stem: sorted(members) for stem, members in families.items() if len(members) >= 2}


def _family_points(names: list[str], points: Points) -> None:
    """The latest of a few dated copies leads (``re78`` over ``re74``); a long 1..k family of parts does not."""
    for members in _numbered_families(names).values():
        numbers = [number for number, _ in members]
        from_one = numbers[0] in (0, 1) and numbers == list(range(numbers[0], numbers[-1] + 1))
        if from_one and len(members) >= _PARTS_MIN:
            for _, name in members:
                points[name].append((-20, None))  # one part of a numbered set: the set's total or another measure leads
        elif len(members) <= _PERIODS_MAX:
            latest = members[-1][1]
            points[latest].append((10, f"the latest of {', '.join(n for _, n in members)}"))
            for _, name in members[:-1]:
                points[name].append((-15, None))  # an earlier reading of the same measure: a baseline


def _ohlc_points(names: list[str], points: Points) -> None:
    """A price read at open, high, low and close: the close is the one reported."""
    by_word = {_norm(name): name for name in names}
    present = [word for word in _OHLC if word in by_word]
    if "close" in present and len(present) >= 3:
        points[by_word["close"]].append((20, "the closing price of open/high/low/close"))
        for word in present:
            if word != "close":
                points[by_word[word]].append((-20, None))


def context_points(names: list[str], table_name: str = "") -> Points:
    """Points and reasons for each column from its name among the table's columns; columns with no rule are absent."""
    points: Points = defaultdict(list)
    weather_table = bool(_WEATHER_TABLE_RE.search(normalize_name(table_name)))
    for name in names:
        norm = _norm(name)
        if _LAG_RE.search(norm):
            points[name].append((-40, None))  # another column shifted in time: never the subject
        if _METADATA_RE.search(norm):
            points[name].append((-40, None))
        if _POSITION_RE.match(norm):
            points[name].append((-30, None))
        if _BACKGROUND_RE.match(norm):
            points[name].append((-45, None))  # outweighs income's money-like points: a covariate, unless it is all
        if _SIZE_RE.search(norm):
            points[name].append((15, "the size of what the rows are"))
        if _WEATHER_RE.match(norm) and not weather_table:
            points[name].append((-25, None))
    _family_points(names, points)
    _ohlc_points(names, points)
    return dict(points)
