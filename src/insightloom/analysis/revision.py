"""Reviewer feedback on a plan: which requests it makes, which can apply, and the revised plan.

:func:`plan_requests` is the one rule book. It reads the feedback clause by clause into requests to add or remove
analyses (breakdowns, trends, correlations, distributions and filtered KPIs; the headline KPIs and the overview can
only be removed) on columns named loosely ("ship-state", "Ship State", "gender"). Each request is structured
(:class:`Asked`): its measure, its grain ("monthly"), its breakdown ("by Category"), its filter ("for `Region` =
'West'", "only Gender F", "in the last month") and its statistic ("average", "median"). The rules decide from the
data profile whether each can apply: a column that does not exist (the closest ones named), personal data, an
identifier, a code that cannot be aggregated, a part the catalog cannot do for that kind of analysis (a median trend,
a filtered breakdown, a monthly grain over a year column: the part and the reason are named), or an analysis already
in the plan is refused with its reason. "Already in the plan" means an item with the same kind, measure, grain,
breakdown, filter and statistic; a request is never matched to a coarser or different item, and no part of it is
dropped without a word. An addition adds an item and keeps the others (a monthly trend beside the plan's daily one;
"replace the daily trend with a monthly one" is a removal and an addition). The hosted Planner gets the same list in
its revise prompt (:func:`requests_markdown`); the offline Planner applies it with :func:`revise_plan`. Either way the
revision notes name every request, its parts and its outcome. The Validator, Reporter and Auditor steps are never
removed, and the Coder section always keeps at least one item.
"""

from __future__ import annotations

import difflib
import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from insightloom.analysis import choices as selection
from insightloom.analysis import time_logic
from insightloom.analysis.catalog import AnalysisSpec, item_language, parse_item_text, quote_value
from insightloom.analysis.planning import trend_spec

logger = logging.getLogger(__name__)

APPLIED = "applied"
NOT_APPLIED = "not_applied"
#: Kinds a request may add; the headline KPIs and the overview are in every plan already, and may only be trimmed (a
#: filtered KPI, "the total of `Amount` for `Region` = 'West'", may be added).
ADDABLE = ("breakdown", "trend", "correlation", "distribution")
#: The splits of a trend the catalog draws (the largest groups; the others are named as left out).
SPLIT_TOP = 5

_REMOVE = re.compile(
    r"\b(remove|skip|drop|exclude|omit|delete|without|leave out|get rid of|no need|not needed|unnecessary|"
    r"don'?t|do not|no)\b|제거|빼|삭제|제외|생략|필요\s*없|불필요|하지\s*마",
    re.I,
)
_ADD = re.compile(
    r"\b(add|adding|include|plus|also|show|analy[sz]e|compare|break\s+(?:it\s+|this\s+)?down|want|need|"
    r"would like|like to|see|could you|please do)\b|추가|포함|넣|보여|분석해",
    re.I,
)
_KEEP = re.compile(r"\b(keep|focus)\b|유지", re.I)
_KIND_WORDS = {
    "overview": r"overview|data quality|missing|개요|품질|결측",
    "kpi": r"\bkpis?\b|headline|핵심\s*지표",
    "breakdown": r"break\s*downs?|breakdowns?|\bsplit\b|그룹별|분해",
    "trend": r"trends?|over time|time series|monthly|weekly|daily|yearly|추이|시계열|트렌드",
    "correlation": r"correlat\w*|scatter|상관",
    "distribution": r"distributions?|outliers?|histograms?|분포|이상치|히스토그램",
}
_PERIOD_WORDS = {
    "day": r"\bdaily\b|\bper day\b|\bby day\b|일별",
    "week": r"\bweekly\b|\bper week\b|\bby week\b|주별",
    "month": r"\bmonthly\b|\bper month\b|\bby month\b|월별",
    "year": r"\byearly\b|\bannual\w*|\bper year\b|\bby year\b|연도별|연별",
}
#: Statistics a reviewer may ask for, by the word used; which kinds offer which is :data:`OFFERS`.
_STAT_WORDS = {
    "sum": r"\b(?:totals?|sums?|summed)\b|합계|총합|총액",
    "mean": r"\b(?:averages?|avg|means?)\b|평균",
    "count": r"\b(?:row\s+counts?|(?:counts?|number|how\s+many)(?:\s+of)?\s+(?:rows|orders|records|transactions|items)"
    r"|counts?|how\s+many)\b|건수|개수|횟수",
    "median": r"\bmedians?\b|중앙값|중간값",
    "min": r"\b(?:minimum|minima|min)\b|최솟값|최소값",
    "max": r"\b(?:maximum|maxima|max)\b|최댓값|최대값",
    "std": r"\b(?:std|stdev|standard\s+deviations?|variances?)\b|표준\s*편차|분산",
    "percentile": r"\b(?:percentiles?|quantiles?|quartiles?|p[1-9]\d)\b|백분위|사분위",
    "mode": r"\b(?:mode|most\s+common\s+value)\b|최빈값",
}
STAT_NAMES = {"sum": "total", "mean": "average", "count": "row count", "median": "median", "min": "minimum",
              "max": "maximum", "std": "standard deviation", "percentile": "percentile", "mode": "mode"}  # fmt: skip
#: What each kind of analysis computes, for the reason a statistic it lacks is refused.
OFFERS = {
    "trend": ("sum", "mean", "count"),
    "breakdown": ("sum", "mean", "count"),
    "kpi": ("sum", "mean"),
    "distribution": ("median", "percentile", "std", "min", "max"),
    "correlation": (),
}
_OFFER_WORDS = {
    "trend": "totals, averages or row counts per period",
    "breakdown": "totals, averages or row counts per group",
    "kpi": "a total or an average",
    "distribution": "the median, percentiles, quartiles and the spread",
    "correlation": "Pearson's r of two measures",
}
_ADJECTIVES = {"day": "daily", "week": "weekly", "month": "monthly", "year": "yearly"}
#: "by Category", "per Region", "for each store", "across channels" before a column; ``별`` after one in Korean.
_BY_BEFORE = re.compile(
    r"\b(?:by|per|for\s+each|across|split\s+by|grouped\s+by|broken\s+down\s+by)\s+(?:the\s+|each\s+)?$", re.I
)
_FILTER_BEFORE = re.compile(r"\b(?:for|where|only|among|whose|with|in)\s+(?:the\s+)?$", re.I)
_VALUE = r"'(?:[^']|'')*'|\"[^\"]*\"|[^\s,;.!?'\"()]+"
_OPERATOR = re.compile(
    rf"^\s*(?P<op>==|=|!=|<>|>=|<=|>|<|\bis\s+not\b|\bis\b|\bequals?\b|\bequal\s+to\b)\s*(?P<v>{_VALUE})",
    re.I,
)
_BARE_VALUE = re.compile(rf"^\s+(?P<v>{_VALUE})")
_KO_VALUE = re.compile(r"^(?:이|가|은|는|이\s*|가\s*)?\s*(?P<v>'(?:[^']|'')*')")
_LAST = re.compile(
    r"\b(?:in|for|over|during|of)?\s*(?:the\s+)?(?:last|latest|most\s+recent|past)\s+(?P<p>day|week|month|year)\b"
    r"|(?:마지막|최근)\s*(?:한\s*)?(?P<k>날|일|주|달|개월|월|해|년)",
    re.I,
)
_KO_LAST = {"날": "day", "일": "day", "주": "week", "달": "month", "개월": "month", "월": "month", "해": "year",
            "년": "year"}  # fmt: skip
#: The trend named as such, not only by a grain word ("monthly").
_TREND_NAMED = re.compile(r"trends?|over time|time series|추이|시계열|트렌드", re.I)
_VALIDATOR_WORDS = re.compile(r"validat\w*|verif\w*|citations?|검증|인용", re.I)
_FIXED_STEPS = re.compile(r"\b(reports?|reporter|audit\w*)\b|보고서|감사", re.I)
_SENTENCES = re.compile(r"[.;!?\n。]+")
_CONNECTORS = re.compile(r",|\b(?:and|but|then)\b|그리고|하지만|(?<=빼고)\s|(?<=하고)\s|(?<=넣고)\s", re.I)
_TOKEN = re.compile(r"`[^`]+`|[^\W_]+(?:['’-][^\W_]+)*", re.U)
_KO_PARTICLE = re.compile(r"(으로|에서|에는|은|는|이|가|을|를|도|만|별|의|로|에|과|와|들)$")
#: Words of feedback that name neither a column nor an analysis (what is left over names a missing column).
_FILLER_EN = (
    "a an the of by per for on in over across between with vs versus to from as well too please pls thanks thank and "
    "or but then break down split i'd i'm we'd let's "
    "you i we us me my our it its this that these those them they is are be been was were would could can should "
    "will shall may might like let lets let's just only more less instead rather than some any all each every both "
    "one ones other another new extra additional also analysis analyses analyse analyze analysing analyzing chart "
    "charts bar line plot plots graph table tables section item items step steps plan task tasks total totals sum "
    "average averages mean count counts share group groups top view data column columns field fields so do does "
    "see look looking at into about how what which why there here not really very much many useful interesting "
    "important relevant fine good ok okay great nice maybe perhaps thing things value values separate own part "
    "month months week weeks day days year years time period periods level where whose equal equals among"
)
_FILLER_KO = "분석 주세요 해주세요 해 줘 좀 및 차트 그래프 항목 계획 추가 제외 대한 관련 기준 각 전체 합계 평균 건수 수"
_STOPWORDS = frozenset(_FILLER_EN.split()) | frozenset(_FILLER_KO.split())

#: Reasons, worded once (the notes and the hosted Planner's prompt use the same words).
REASONS = {
    "no_column": "no such column {name}",
    "personal": "personal data: `{name}` is never analysed",
    "identifier": "not analysable: `{name}` is an identifier",
    "no_aggregate": "not analysable: `{name}` is a {what} (aggregation: none), it cannot be summed or averaged",
    "not_measure": "`{name}` is not a measure",
    "too_many": "`{name}` has a different value on almost every row ({distinct}): its groups would be single rows",
    "one_group": "`{name}` has a single value: the breakdown shows one group",
    "many_groups": "`{name}` has {distinct} values: the breakdown shows the largest groups",
    "": "",
    "no_time": "the data has no date or year column for a trend",
    "cohort": "`{name}` is a cohort date (when each row started), not a time axis",
    "two_measures": "a correlation needs two distinct measures",
    "no_by": "no column to break down by",
    "present": "already in the plan",
    "absent": "not in the plan",
    "validator": "the Validator step cannot be removed: every number must be verified before it is cited",
    "fixed": "the report and audit steps are part of every plan",
    "kind": "only breakdowns, trends, correlations, distributions and filtered KPIs (a total or an average of some "
    "rows: \"add the total of `Amount` for `Region` = 'West'\") can be added; the headline KPIs are in every plan",
    "last": "the Coder section keeps at least one item",
    # a part of a request the catalog cannot do: "<part>: <why>"
    "part": "{part}: {why}",
    "grain_kind": 'a {kind} has no time grain (a trend has one: "add a {adjective} trend of ...")',
    "grain_year": "`{name}` holds whole years, so a trend over it runs per year",
    "grain_step": "`{name}` counts time steps, not dates, so a trend over it runs per step",
    "grain_wide": "a wide table's year columns hold one value per year, so its trend runs per year",
    "grain_decimal": "`{name}` holds decimal years read as the month they start, so a trend over it runs per month "
    "at the finest",
    "grain_two": "two grains ({grains}) in one request: ask for each trend on its own",
    "one_period": "`{name}` spans a single {period} ({low} to {high}): the trend has one period and no change",
    "by_kind": "the catalog has no {kind} per group (a breakdown or a trend by `{name}` has one)",
    "by_kpi": "a KPI is one number, not split by group (a breakdown by `{name}` is)",
    "by_role": "`{name}` is a {role}, not a category to split the trend by",
    "by_two": "a trend splits by one category, and {names} were named: ask for each split trend on its own",
    "by_wide": "a wide table's year columns have no rows per period to split by `{name}`",
    "split_many": "`{name}` has {distinct} values: the trend shows the {top} largest, the rest named as left out",
    "split_one": "`{name}` has a single value: the split shows one series",
    "filter_kind": 'the catalog has no filtered {kind} (a filtered total or average can be added: "add the total '
    'of `{m}` for {where}")',
    "filter_op": "only a filter on equal values (`{name}` = 'value') can apply, not `{name}` {op} {value}",
    "filter_role": "`{name}` is a {role}: a filter keeps the rows where a category equals a value",
    "filter_value": "`{name}` has no value {value} (its values: {values})",
    "filter_unlisted": "{value} is not among the values the profile lists for `{name}`, whose rows are counted as "
    "they are",
    "filter_same": "`{name}` cannot equal two values ({values}) at once",
    "filter_date": "the data has no date column for the last {period}",
    "stat_kind": "a {kind} gives {offers}, not a {stat}",
    "stat_two": "two statistics ({stats}) in one request: ask for each on its own",
    "stat_sum": "`{name}` is averaged, never summed (aggregation: mean), so it has no total",
    "count_measure": "a row count counts rows: `{name}` is not used",
    "stat_wide": "a wide table's trend gives the {agg} of its year columns",
}


@dataclass(frozen=True)
class Asked:
    """What one clause asks for, part by part; a part left empty was not said (the catalog's default applies).

    Attributes:
        measure: The measure named first (``Amount``).
        grain: The trend grain named: ``day``, ``week``, ``month`` or ``year`` ("monthly", "per week", "월별").
        by: The columns named as a breakdown ("by Category", "per Region", "카테고리별").
        where: Equality filters ("for `Region` = 'West'", "only Gender F", "where Gender is F").
        last: The last period of the time axis as a filter ("in the last month").
        statistic: The statistic named (``sum``, ``mean``, ``count``, ``median``, ... keys of :data:`STAT_NAMES`).
        problems: Why a part cannot apply whatever the kind, each naming the part (a filter on a value the column
            does not have, two grains, ...).
        filtered: Every column named in a filter, applicable or not (none of them is a measure or a group).
        notes: Caveats of parts that apply (a filter value the profile does not list).
    """

    measure: str | None = None
    grain: str | None = None
    by: tuple[str, ...] = ()
    where: tuple[tuple[str, str], ...] = ()
    last: str | None = None
    statistic: str | None = None
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    filtered: tuple[str, ...] = ()

    def filter_text(self) -> str:
        """The filter in words, e.g. ``Region = 'West' and the last month`` (empty without one)."""
        parts = [f"`{c}` = {quote_value(v)}" for c, v in self.where]
        parts += [f"the last {self.last}"] if self.last else []
        return " and ".join(parts)

    def parts(self) -> list[str]:
        """The parts the reviewer said, in words: ``grain: month``, ``by: `Category```, ..."""
        out = [f"measure: `{self.measure}`"] if self.measure else []
        out += [f"grain: {self.grain}"] if self.grain else []
        out += [f"by: {', '.join(f'`{b}`' for b in self.by)}"] if self.by else []
        out += [f"filter: {self.filter_text()}"] if self.where or self.last else []
        out += [f"statistic: {STAT_NAMES[self.statistic]}"] if self.statistic else []
        return out


@dataclass(frozen=True)
class Request:
    """One request of the feedback and whether it can apply.

    Attributes:
        action: ``add`` or ``remove``.
        text: The clause as the reviewer wrote it.
        kinds: Analysis kinds the clause names (empty: any kind, for a removal).
        columns: Profile column names the clause names, as the profile spells them.
        outcome: ``applied`` or ``not_applied``.
        reason: Why a request is not applied (empty when applied), or a caveat of an applied one.
        specs: The analyses an applied addition adds.
        removed: Plan items an applied removal drops or trims (filled by :func:`revise_plan`).
        asked: The parts of the request (measure, grain, breakdown, filter, statistic) as the reviewer said them.
    """

    action: str
    text: str
    kinds: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    outcome: str = APPLIED
    reason: str = ""
    specs: tuple[AnalysisSpec, ...] = ()
    removed: tuple[str, ...] = field(default=())
    asked: Asked = Asked()

    def head(self) -> str:
        """The request in words: ``add trend on `Amount`, `Date` [grain: month; by: `Category`] ("...")``."""
        cols = ", ".join(f"`{c}`" for c in self.columns)
        parts = [p for p in self.asked.parts() if not p.startswith("measure:")]
        return (
            f"{self.action} {' '.join(self.kinds) or 'analyses'}"
            + (f" on {cols}" if cols else "")
            + (f" [{'; '.join(parts)}]" if parts else "")
            + f' ("{self.text}")'
        )

    def note(self, language: str = "en") -> str:
        """One line for the revision notes: the request, its outcome and its reason or effect."""
        head = self.head()
        if self.outcome == NOT_APPLIED:
            return f"not applied: {head}: {self.reason}"
        effect = [f"added: {s.item_text(language)}" for s in self.specs] + [f"removed: {r}" for r in self.removed]
        extra = f" ({self.reason})" if self.reason else ""
        return f"applied: {head}{extra}" + "".join(f"; {e}" for e in effect)


def _norm(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.casefold()).strip()


def _name_pattern(name: str) -> re.Pattern[str]:
    """Loose match of a column name: any case, spaces, hyphens or underscores between its words."""
    words = [re.escape(w) for w in _norm(name).split(" ") if w]
    body = r"[\s_\-]*".join(words)
    if name.isascii():
        return re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])", re.I)
    return re.compile(body, re.I)  # Korean particles attach to the name: no word boundary after it


@dataclass
class _Clause:
    text: str
    action: str | None
    kinds: list[str]


def _clauses(feedback: str) -> list[_Clause]:
    """Feedback split into clauses; a piece naming no action and no kind continues the previous clause."""
    clauses: list[_Clause] = []
    for sentence in _SENTENCES.split(feedback):
        action: str | None = None
        for piece in (p.strip() for p in _CONNECTORS.split(sentence) if p and p.strip()):
            kinds = [k for k, words in _KIND_WORDS.items() if re.search(words, piece, re.I)]
            said = "remove" if _REMOVE.search(piece) else "keep" if _KEEP.search(piece) else None
            said = said or ("add" if _ADD.search(piece) else None)
            if said is None and not kinds and clauses and clauses[-1].action and action:
                clauses[-1].text += f" and {piece}"
                continue
            action = said or action
            clauses.append(_Clause(piece, action, kinds))
    return clauses


class _Columns:
    """The profile's columns, matched loosely in feedback text."""

    def __init__(self, profile: dict[str, Any]) -> None:
        self.profile = profile
        self.tables = selection.tables(profile)
        self.entries: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
            (str(c.get("name")), c, t) for t in self.tables for c in t.get("columns", [])
        ]
        self.entries.sort(key=lambda e: len(_norm(e[0])), reverse=True)

    def find(self, text: str) -> tuple[list[str], list[tuple[int, int]]]:
        """Columns named in ``text`` (order of first mention, once each) and the spans they cover."""
        found = self.mentions(text)
        return list(dict.fromkeys(n for n, _a, _b in found)), [(a, b) for _n, a, b in found]

    def mentions(self, text: str) -> list[tuple[str, int, int]]:
        """``(column, start, end)`` of every mention of a column in ``text``, in order (longer names first, so
        ``ship-state`` is not also ``state``)."""
        found: list[tuple[str, int, int]] = []
        for name, _col, _table in self.entries:
            for match in _name_pattern(name).finditer(text):
                if not any(a < match.end() and match.start() < b for _n, a, b in found):
                    found.append((name, match.start(), match.end()))
        return sorted(found, key=lambda m: m[1])

    def entry(self, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        _n, col, table = next(e for e in self.entries if e[0] == name)
        return col, table

    def closest(self, phrase: str, limit: int = 3) -> list[str]:
        names = {_norm(n): n for n, c, _t in self.entries if selection.usable(c)}
        close = difflib.get_close_matches(_norm(phrase), list(names), n=limit, cutoff=0.0)
        return [names[n] for n in close]


def _unknown_names(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """Runs of words that are neither a column, a kind, an action nor a filler word: names of no column."""
    runs: list[list[re.Match[str]]] = [[]]
    for token in _TOKEN.finditer(text):
        word = token.group(0).strip("`")
        plain = _KO_PARTICLE.sub("", word) if not word.isascii() else word
        inside = any(a <= token.start() < b for a, b in spans)
        filler = plain.casefold() in _STOPWORDS or word.casefold() in _STOPWORDS or not plain
        # Korean endings attach to the word (빼고, 상관관계), so there a kind or verb word only has to occur in it.
        hit = re.fullmatch if word.isascii() else re.search
        vocab = any(hit(words, word, re.I) for words in _KIND_WORDS.values())
        verb = any(hit(p.pattern, word, re.I) for p in (_REMOVE, _ADD, _KEEP))
        if inside or filler or vocab or verb or word.isdigit() and not token.group(0).startswith("`"):
            runs.append([])
        else:
            runs[-1].append(token)
    return [text[run[0].start() : run[-1].end()].strip("`") for run in runs if run]


def _aggregation(col: dict[str, Any]) -> str:
    """``sum``, ``mean`` or ``none``: the profile's verdict, or the name rule for an older profile."""
    verdict = col.get("aggregation")
    if verdict in ("sum", "mean", "none"):
        return str(verdict)
    return "sum" if selection.is_additive(col) else "mean"


def _refusal(name: str, col: dict[str, Any]) -> str | None:
    role = col.get("role")
    if role == "pii":
        return REASONS["personal"].format(name=name)
    if role == "identifier":
        return REASONS["identifier"].format(name=name)
    return None


def _known_values(col: dict[str, Any]) -> tuple[list[str], bool]:
    """The values the profile lists for a column (top values, then samples) and whether they are all of them."""
    listed = [str(tv.get("value")) for tv in col.get("top_values") or [] if isinstance(tv, dict)]
    listed = list(dict.fromkeys([*listed, *(str(v) for v in col.get("samples") or [])]))
    distinct = int(col.get("distinct") or 0)
    return listed, bool(listed) and 0 < distinct <= len(listed)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def _is_word(value: str) -> bool:
    """Whether a bare token after a column is a word of the feedback rather than a value ("by Category please")."""
    plain = value.casefold()
    vocab = [*_KIND_WORDS.values(), *_STAT_WORDS.values(), *_PERIOD_WORDS.values()]
    verbs = (_REMOVE, _ADD, _KEEP)
    return (
        plain in _STOPWORDS
        or any(re.fullmatch(w, value, re.I) for w in vocab)
        or any(v.fullmatch(value) for v in verbs)
    )


class _Parts:
    """Reads one clause's parts (:class:`Asked`) around the columns it names."""

    def __init__(self, columns: _Columns, text: str) -> None:
        self.columns = columns
        self.text = text
        self.mentions = columns.mentions(text)
        self.spans: list[tuple[int, int]] = [(a, b) for _n, a, b in self.mentions]
        self.where: list[tuple[str, str]] = []
        self.filtered: set[str] = set()
        self.problems: list[str] = []
        self.notes: list[str] = []

    def _free(self, start: int, end: int) -> bool:
        return not any(a < end and start < b for a, b in self.spans)

    def _value(self, name: str, typed: str) -> None:
        """Record ``name = typed``, matched to the profile's spelling, or the problem with it."""
        col = self.columns.entry(name)[0]
        self.filtered.add(name)
        role = str(col.get("role") or "")
        value = _unquote(typed)
        self.filtered.add(name)
        if role in selection.EXCLUDED_ROLES:
            return  # the personal-data / identifier refusal names it
        if role != "category":
            what = {"measure": "measure", "date": "date", "rate": "rate", "text": "free-text column"}.get(role, role)
            self.problems.append(
                REASONS["part"].format(
                    part=f"filter `{name}` = {quote_value(value)}",
                    why=REASONS["filter_role"].format(name=name, role=what),
                )
            )
            return  # fmt: skip
        listed, complete = _known_values(col)
        same = next((v for v in listed if v.casefold() == value.casefold()), None)
        part = f"filter `{name}` = {quote_value(same or value)}"
        if same is None and complete:
            values = ", ".join(quote_value(v) for v in listed[:12])
            why = REASONS["filter_value"].format(name=name, value=quote_value(value), values=values)
            self.problems.append(REASONS["part"].format(part=part, why=why))
            return
        if same is None and listed:
            self.notes.append(REASONS["filter_unlisted"].format(name=name, value=quote_value(value)))
        self.where.append((name, same or value))

    def _named_filters(self) -> None:
        """``Region = 'West'``, ``Gender is F``, ``only Gender F``, ``for Region West``, ``지역 = '서울'``."""
        for name, start, end in self.mentions:
            after, before = self.text[end:], self.text[:start]
            match = _OPERATOR.match(after)
            if match:
                op, typed = match.group("op"), match.group("v")
                if _is_word(typed) and not typed.startswith(("'", '"')):
                    continue
                if op[0].isalpha() and self.columns.entry(name)[0].get("role") != "category":
                    continue  # "Amount is wrong" says something about the column, not a filter on it
                self.spans.append((end, end + match.end()))
                if op.lower() in ("=", "==", "is", "equal", "equals", "equal to"):
                    self._value(name, typed)
                else:
                    self.filtered.add(name)
                    why = REASONS["filter_op"].format(name=name, op=op, value=typed)
                    self.problems.append(REASONS["part"].format(part=f"filter `{name}` {op} {typed}", why=why))
                continue
            korean = _KO_VALUE.match(after) if not name.isascii() or not after[:1].isascii() else None
            bare = _BARE_VALUE.match(after) if _FILTER_BEFORE.search(before) else None
            match = korean or bare
            if match and not (bare and (_is_word(match.group("v")) or self._is_column(match.group("v")))):
                self.spans.append((end, end + match.end()))
                self._value(name, match.group("v"))

    def _is_column(self, token: str) -> bool:
        return bool(self.columns.find(token)[0])

    def _value_filters(self) -> None:
        """``only F``, ``for West``, ``F만``: a value the profile lists for exactly one category column."""
        for name, col, _table in self.columns.entries:
            if col.get("role") != "category" or name in self.filtered:
                continue
            for value in _known_values(col)[0]:
                if not value.strip() or _is_word(value) or len(value) > 60:
                    continue
                body = re.escape(value)
                lead = rf"(?:\b(?:for|only|where|among)\s+(?:the\s+)?)(?P<q>['\"]?){body}(?P=q)(?![\w'])"
                korean = rf"(?<![\w]){body}\s*만"
                match = re.search(lead, self.text, re.I) or re.search(korean, self.text)
                if match and self._free(match.start(), match.end()):
                    self.spans.append(match.span())
                    self._value(name, value)

    def _statistic(self) -> str | None:
        found: list[tuple[int, str]] = []
        for key, words in _STAT_WORDS.items():
            for match in re.finditer(words, self.text, re.I):
                if self._free(*match.span()):
                    found.append((match.start(), key))
                    self.spans.append(match.span())
        keys = list(dict.fromkeys(k for _i, k in sorted(found)))
        if len(keys) > 1:
            stats = ", ".join(STAT_NAMES[k] for k in keys)
            self.problems.append(REASONS["part"].format(part="statistic " + stats,
                                                        why=REASONS["stat_two"].format(stats=stats)))  # fmt: skip
        return keys[0] if keys else None

    def _grain(self) -> str | None:
        grains = []
        for period, words in _PERIOD_WORDS.items():
            for match in re.finditer(words, self.text, re.I):
                if self._free(*match.span()):
                    grains.append((match.start(), period))
                    self.spans.append(match.span())
        ordered = list(dict.fromkeys(p for _i, p in sorted(grains)))
        if len(ordered) > 1:
            self.problems.append(
                REASONS["part"].format(
                    part="grain " + ", ".join(ordered), why=REASONS["grain_two"].format(grains=", ".join(ordered))
                )
            )
        return ordered[0] if ordered else None  # fmt: skip

    def _last(self) -> str | None:
        match = _LAST.search(self.text)
        if not match or not self._free(*match.span()):
            return None
        self.spans.append(match.span())
        return match.group("p").lower() if match.group("p") else _KO_LAST[match.group("k")]

    def read(self) -> Asked:
        self._named_filters()
        self._value_filters()
        last = self._last()
        statistic = self._statistic()
        grain = self._grain()
        by = tuple(dict.fromkeys(
            n for n, a, b in self.mentions
            if n not in self.filtered and (_BY_BEFORE.search(self.text[:a]) or self.text[b:].startswith("별"))
        ))  # fmt: skip
        pairs: dict[str, list[str]] = {}
        for col, value in self.where:
            pairs.setdefault(col, []).append(value)
        for col, values in pairs.items():
            if len(set(values)) > 1:
                listed = ", ".join(quote_value(v) for v in values)
                self.problems.append(
                    REASONS["part"].format(
                        part=f"filter on `{col}`", why=REASONS["filter_same"].format(name=col, values=listed)
                    )
                )
        where = tuple(dict.fromkeys(self.where))  # fmt: skip
        roles = {n: self.columns.entry(n)[0].get("role") for n, _a, _b in self.mentions}
        measure = next((n for n, _a, _b in self.mentions if roles[n] == "measure" and n not in (*by, *self.filtered)),
                       None)  # fmt: skip
        filtered = tuple(dict.fromkeys(n for n, _a, _b in self.mentions if n in self.filtered))
        return Asked(measure, grain, by, where, last, statistic, tuple(self.problems), tuple(self.notes), filtered)


def _spec_key(spec: AnalysisSpec) -> tuple[Any, ...]:
    """What makes two analyses the same: kind, table, measure(s), axis or group column, statistic, grain, split and
    filter; a request matches an item "already in the plan" only when all of them are equal."""
    return (spec.kind, spec.view, spec.measure, spec.by, frozenset(spec.measures), spec.agg, spec.period, spec.split,
            frozenset(spec.where), spec.last_period, frozenset(spec.rates))  # fmt: skip


def _part_refusal(kind: str, asked: Asked, measure: str | None) -> str | None:
    """Why a part the reviewer named cannot apply to an analysis of ``kind`` (None when every part can)."""
    if asked.grain and kind != "trend":
        why = REASONS["grain_kind"].format(kind=kind, adjective=_ADJECTIVES[asked.grain])
        return REASONS["part"].format(part=f"grain {asked.grain}", why=why)
    if asked.by and kind in ("distribution", "correlation", "kpi"):
        key = "by_kpi" if kind == "kpi" else "by_kind"
        why = REASONS[key].format(kind=kind, name=asked.by[0])
        return REASONS["part"].format(part=f"by `{asked.by[0]}`", why=why)
    if (asked.where or asked.last) and kind != "kpi":
        where = asked.filter_text()
        why = REASONS["filter_kind"].format(kind=kind, m=measure or "...", where=where)
        return REASONS["part"].format(part=f"filter {where}", why=why)
    if asked.statistic and asked.statistic not in OFFERS[kind]:
        stat = STAT_NAMES[asked.statistic]
        why = REASONS["stat_kind"].format(kind=kind, offers=_OFFER_WORDS[kind], stat=stat)
        return REASONS["part"].format(part=f"statistic {stat}", why=why)
    return None


def _periods_between(low: Any, high: Any, period: str) -> int | None:
    """How many periods of ``period`` the dates from ``low`` to ``high`` touch (None when they do not read)."""
    try:
        first, last = pd.Timestamp(low), pd.Timestamp(high)
    except (TypeError, ValueError):
        return None
    if pd.isna(first) or pd.isna(last):
        return None
    keys = time_logic.bucket(pd.Series([first, last]), period)
    if period == "day":
        return int((keys.iloc[1] - keys.iloc[0]).days) + 1
    if period == "week":
        return int((keys.iloc[1] - keys.iloc[0]).days // 7) + 1
    if period == "month":
        return (last.year - first.year) * 12 + last.month - first.month + 1
    return last.year - first.year + 1


class _Decider:
    """Turns one clause into requests, deciding each from the profile and the plan's current analyses."""

    def __init__(self, columns: _Columns, plan_specs: list[AnalysisSpec]) -> None:
        self.columns = columns
        self.plan_specs = plan_specs
        self.added: list[AnalysisSpec] = []

    def _primary(self, table: dict[str, Any]) -> str | None:
        kpi = next((s for s in self.plan_specs if s.kind == "kpi" and s.measures), None)
        if kpi and selection.column(table, kpi.measures[0]):
            return kpi.measures[0]
        return next(iter(selection.measures(table)), None)

    def _view(self, table: dict[str, Any]) -> str | None:
        return None if table is self.columns.tables[0] else table.get("view")

    def _present(self, spec: AnalysisSpec) -> bool:
        return any(_spec_key(s) == _spec_key(spec) for s in [*self.plan_specs, *self.added])

    def decide(self, clause: _Clause) -> list[Request]:
        parts = _Parts(self.columns, clause.text)
        asked = parts.read()
        names = list(dict.fromkeys(n for n, _a, _b in parts.mentions))
        unknown = _unknown_names(clause.text, parts.spans)
        action = clause.action or ""
        if action == "remove" and _VALIDATOR_WORDS.search(clause.text) and not names and not clause.kinds:
            return [Request("remove", clause.text, outcome=NOT_APPLIED, reason=REASONS["validator"])]
        if _FIXED_STEPS.search(clause.text) and not names and not clause.kinds:
            return [Request(action, clause.text, outcome=NOT_APPLIED, reason=REASONS["fixed"])] if action else []
        requests = [self._unknown(action, clause, phrase) for phrase in unknown if action in ("add", "remove")]
        if action == "remove" and (names or clause.kinds) and not (unknown and not names):
            requests.insert(0, Request("remove", clause.text, tuple(clause.kinds), tuple(names), asked=asked))
        elif action == "add" and (names or clause.kinds or asked.where or asked.last):
            requests[:0] = self._additions(clause, names, bool(unknown), asked)
        return requests

    def _unknown(self, action: str, clause: _Clause, phrase: str) -> Request:
        close = ", ".join(f"`{n}`" for n in self.columns.closest(phrase))
        reason = REASONS["no_column"].format(name=f"`{phrase}`") + (f" (closest columns: {close})" if close else "")
        return Request(action, clause.text, tuple(clause.kinds), (), NOT_APPLIED, reason)

    def _kinds(self, clause: _Clause, names: list[str], asked: Asked) -> list[str]:
        """The kinds to add: those named (a breakdown named with a trend is the trend's split, "a monthly breakdown
        by `Category`"; a grain word beside another kind is that kind's grain, "a monthly correlation"), else the one
        the columns and parts suggest (a filter alone asks for a filtered KPI, a total or an average alone for a
        KPI, a grain alone for a trend)."""
        filtered = bool(asked.where or asked.last or asked.filtered)
        if clause.kinds:
            kinds = [k for k in clause.kinds if k in ADDABLE or (k == "kpi" and filtered)]
            if "trend" in kinds and "breakdown" in kinds:
                kinds.remove("breakdown")
            others = [k for k in clause.kinds if k not in ("trend", "breakdown")]
            if "trend" in kinds and others and not _TREND_NAMED.search(clause.text):
                kinds.remove("trend")  # only a grain word said "trend": it is the other kind's grain
            return kinds
        if filtered:
            return ["kpi"]
        if asked.grain:
            return ["trend"]  # "a row count per week by `Gender`"
        plain = [n for n in names if n not in asked.filtered]
        if asked.statistic in ("sum", "mean") and not asked.by and self._kind_for(plain) == "distribution":
            return ["kpi"]  # "add the total of `Amount`": the headline KPIs
        return [self._kind_for(plain)]

    def _additions(self, clause: _Clause, names: list[str], has_unknown: bool, asked: Asked) -> list[Request]:
        kinds = self._kinds(clause, names, asked)
        if not kinds:
            return [Request("add", clause.text, tuple(clause.kinds), tuple(names), NOT_APPLIED, REASONS["kind"],
                            asked=asked)]  # fmt: skip
        for name in names:
            refused = _refusal(name, self.columns.entry(name)[0])
            if refused:
                return [Request("add", clause.text, tuple(kinds), tuple(names), NOT_APPLIED, refused, asked=asked)]
        if asked.problems:
            reason = "; ".join(asked.problems)
            return [Request("add", clause.text, tuple(kinds), tuple(names), NOT_APPLIED, reason, asked=asked)]
        out: list[Request] = []
        for kind in kinds:
            refused = _part_refusal(kind, asked, asked.measure or self._primary(self._table(names)))
            if refused:
                out.append(Request("add", clause.text, (kind,), tuple(names), NOT_APPLIED, refused, asked=asked))
                continue
            out += getattr(self, f"_add_{kind}")(clause, names, has_unknown, asked)
        return out

    def _kind_for(self, names: list[str]) -> str:
        roles = {self.columns.entry(n)[0].get("role") for n in names}
        return "trend" if roles == {"date"} else "distribution" if roles == {"measure"} else "breakdown"

    def _table(self, names: list[str]) -> dict[str, Any]:
        return self.columns.entry(names[0])[1] if names else self.columns.tables[0]

    def _refused(self, clause: _Clause, kind: str, names: list[str], reason: str, asked: Asked) -> Request:
        return Request("add", clause.text, (kind,), tuple(names), NOT_APPLIED, reason, asked=asked)

    def _result(
        self, clause: _Clause, kind: str, names: list[str], specs: list[AnalysisSpec], note: str = "",
        asked: Asked = Asked(),
    ) -> Request:  # fmt: skip
        fresh = [s for s in specs if not self._present(s)]
        if not fresh:
            return Request("add", clause.text, (kind,), tuple(names), NOT_APPLIED, REASONS["present"], asked=asked)
        self.added += fresh
        note = "; ".join(n for n in (note, *asked.notes) if n)
        return Request("add", clause.text, (kind,), tuple(names), APPLIED, note, tuple(fresh), asked=asked)

    def _measure_agg(
        self, table: dict[str, Any], measure: str | None, statistic: str | None = None
    ) -> tuple[str, str | None]:
        """(agg, refusal) for aggregating ``measure`` per group or period (or over a filter's rows) with the
        statistic asked for (default: the profile's aggregation); no measure means row counts."""
        if measure is None or statistic == "count":
            return "count", None
        col = selection.column(table, measure) or {}
        verdict = _aggregation(col)
        if verdict == "none":
            what = str(col.get("semantic") or "code")
            return "", REASONS["no_aggregate"].format(name=measure, what=what)
        if statistic == "sum" and verdict != "sum":
            why = REASONS["stat_sum"].format(name=measure)
            return "", REASONS["part"].format(part=f"statistic {STAT_NAMES['sum']}", why=why)
        return statistic or verdict, None

    def _split(self, table: dict[str, Any], names: list[str], has_unknown: bool) -> tuple[str | None, list[str]]:
        """(measure, grouping columns): the first measure named is aggregated when another column is named too (or
        a name of no column, which then was the grouping column)."""
        roles = {n: (selection.column(table, n) or {}).get("role") for n in names}
        measure = next((n for n in names if roles[n] == "measure"), None)
        others = [n for n in names if n != measure]
        if measure and not others and not has_unknown:
            return None, names  # "a breakdown by Qty": Qty is the grouping column
        return measure, others

    def _add_breakdown(self, clause: _Clause, names: list[str], has_unknown: bool, asked: Asked) -> list[Request]:
        table = self._table(names)
        if asked.by:  # "by X" names the groups; the measure is another column named
            bys = list(asked.by)
            measure = next((n for n in names if n not in bys and n == asked.measure), None)
        else:
            measure, bys = self._split(table, names, has_unknown)
        if not bys:
            if has_unknown:
                return []  # the unknown name was the grouping column; its own request says so
            return [self._refused(clause, "breakdown", names, REASONS["no_by"], asked)]
        measure = measure or self._primary(table)
        agg, refused = self._measure_agg(table, measure, asked.statistic)
        if refused:
            return [self._refused(clause, "breakdown", names, refused, asked)]
        note = REASONS["count_measure"].format(name=asked.measure) if agg == "count" and asked.measure else ""
        measure = None if agg == "count" else measure
        out = []
        for by in bys:
            col = selection.column(table, by) or {}
            distinct = int(col.get("distinct") or 0)
            rows = int(table.get("rows") or 0)
            if distinct > selection.MAX_GROUPS and distinct >= 0.9 * rows:
                reason = REASONS["too_many"].format(name=by, distinct=distinct)
                out.append(self._refused(clause, "breakdown", [by], reason, asked))
                continue
            spec = AnalysisSpec("breakdown", self._view(table), measure=measure, by=by, agg=agg)
            caveat = REASONS["one_group" if distinct == 1 else "many_groups" if distinct > selection.MAX_GROUPS else ""]
            caveat = "; ".join(c for c in (caveat.format(name=by, distinct=distinct), note) if c)
            out.append(self._result(clause, "breakdown", [c for c in (measure, by) if c], [spec], caveat, asked))
        return out

    def _time_axis(self, table: dict[str, Any], names: list[str]) -> tuple[time_logic.TimeAxis | None, str]:
        """(axis, refusal): the axis of a named date or year column, else the table's own time axis."""
        full = selection.annotated(table)
        for name in names:
            col = selection.column(full, name) or {}
            if time_logic.is_cohort_date(col):
                return None, REASONS["cohort"].format(name=name)
            if col.get("role") == "date" or col.get("semantic") == "year":
                try:
                    return time_logic.axis_for(full, name), ""
                except ValueError:
                    break
        axis = time_logic.trend_axis(full)
        return (axis, "") if axis is not None and axis.column else (None, REASONS["no_time"])

    def _grain(self, table: dict[str, Any], axis: time_logic.TimeAxis, grain: str) -> tuple[str | None, str]:
        """(refusal, caveat) of the grain asked for on ``axis``."""
        name = str(axis.column)
        key = {"wide_years": "grain_wide", "year": "grain_year", time_logic.INDEX: "grain_step"}.get(axis.kind)
        if axis.kind == "date" and axis.encoding == time_logic.DECIMAL_YEAR and grain in ("day", "week"):
            key = "grain_decimal"
        if key and not (axis.kind in ("year", "wide_years") and grain == "year"):
            return REASONS["part"].format(part=f"grain {grain}", why=REASONS[key].format(name=name)), ""
        col = selection.column(table, axis.column) or {}
        count = _periods_between(col.get("min"), col.get("max"), grain) if axis.kind == "date" else None
        if count == 1:
            return None, REASONS["one_period"].format(name=name, period=grain, low=col.get("min"), high=col.get("max"))
        return None, ""

    def _trend_split(
        self, table: dict[str, Any], axis: time_logic.TimeAxis, names: list[str], asked: Asked
    ) -> tuple[str | None, str | None, str]:
        """(split column, refusal, caveat): the category the trend is split by ("by `Category`", or a category
        named with the trend), checked like a breakdown's groups."""
        roles = {n: (selection.column(table, n) or {}).get("role") for n in names}
        wrong = [n for n in asked.by if n != axis.column and roles[n] != "category" and roles[n] != "date"]
        if wrong:
            role = {"measure": "measure", "rate": "rate", "text": "free-text column"}.get(str(roles[wrong[0]]))
            why = REASONS["by_role"].format(name=wrong[0], role=role or "column")
            return None, REASONS["part"].format(part=f"by `{wrong[0]}`", why=why), ""
        filtered = set(asked.filtered)
        splits = [n for n in names if roles[n] == "category" and n not in filtered]
        if not splits:
            return None, None, ""
        if len(splits) > 1:
            listed = ", ".join(f"`{n}`" for n in splits)
            why = REASONS["by_two"].format(names=listed)
            return None, REASONS["part"].format(part=f"by {listed}", why=why), ""
        split = splits[0]
        if axis.kind == "wide_years":
            return None, REASONS["part"].format(part=f"by `{split}`", why=REASONS["by_wide"].format(name=split)), ""
        col = selection.column(table, split) or {}
        distinct, rows = int(col.get("distinct") or 0), int(table.get("rows") or 0)
        if distinct > selection.MAX_GROUPS and distinct >= 0.9 * rows:
            why = REASONS["too_many"].format(name=split, distinct=distinct)
            return None, REASONS["part"].format(part=f"by `{split}`", why=why), ""
        caveat = REASONS["split_one"] if distinct == 1 else REASONS["split_many"] if distinct > SPLIT_TOP else ""
        return split, None, caveat.format(name=split, distinct=distinct, top=SPLIT_TOP)

    def _add_trend(self, clause: _Clause, names: list[str], _unknown: bool, asked: Asked) -> list[Request]:
        table = self._table(names)
        axis, refused = self._time_axis(table, names)
        if axis is None:
            return [self._refused(clause, "trend", names, refused, asked)]
        caveats: list[str] = []
        if asked.grain:
            refused_grain, caveat = self._grain(table, axis, asked.grain)
            if refused_grain:
                return [self._refused(clause, "trend", names, refused_grain, asked)]
            caveats.append(caveat)
            if axis.kind == "date":
                axis = replace(axis, period=asked.grain)
        split, refused_split, caveat = self._trend_split(table, axis, names, asked)
        if refused_split:
            return [self._refused(clause, "trend", names, refused_split, asked)]
        caveats.append(caveat)
        roles = {n: (selection.column(table, n) or {}).get("role") for n in names}
        named = [n for n in names if roles[n] == "measure" and n != axis.column]
        measures: list[str | None] = [None] if asked.statistic == "count" else list(named) or [self._primary(table)]
        if asked.statistic == "count" and named:
            caveats.append(REASONS["count_measure"].format(name=named[0]))
        out = []
        for measure in measures:
            agg, refused_agg = self._measure_agg(table, measure, asked.statistic)
            if refused_agg:
                out.append(self._refused(clause, "trend", names, refused_agg, asked))
                continue
            spec = trend_spec(table, self._view(table), axis, measure, agg)
            if axis.kind == "wide_years" and asked.statistic and asked.statistic != spec.agg:
                why = REASONS["stat_wide"].format(agg=STAT_NAMES[spec.agg])
                part = REASONS["part"].format(part=f"statistic {STAT_NAMES[asked.statistic]}", why=why)
                out.append(self._refused(clause, "trend", names, part, asked))
                continue
            spec = replace(spec, split=split)
            cols = [c for c in (spec.measure, spec.by, spec.split) if c]
            out.append(self._result(clause, "trend", cols, [spec], "; ".join(c for c in caveats if c), asked))
        return out

    def _add_kpi(self, clause: _Clause, names: list[str], _unknown: bool, asked: Asked) -> list[Request]:
        """A filtered KPI: the total or average of one measure over the rows the filter keeps. Without a filter,
        the headline KPIs of every plan give a measure's total or average."""
        table = self._table(names)
        if not (asked.where or asked.last or asked.filtered):
            headline = {m for s in self.plan_specs if s.kind == "kpi" and not s.filtered for m in s.measures}
            named = [n for n in names if n in headline]
            reason = REASONS["present"] if named and len(named) == len(names) else REASONS["kind"]
            return [self._refused(clause, "kpi", names, reason, asked)]
        filtered = set(asked.filtered)
        if any(self.columns.entry(c)[1] is not table for c in filtered):
            table = self.columns.entry(next(iter(filtered)))[1]
        roles = {n: (selection.column(table, n) or {}).get("role") for n in names}
        measure = next((n for n in names if roles[n] == "measure" and n not in filtered), None) or self._primary(table)
        if measure is None:
            return [self._refused(clause, "kpi", names, REASONS["not_measure"].format(name="-"), asked)]
        agg, refused = self._measure_agg(table, measure, asked.statistic)
        if refused:
            return [self._refused(clause, "kpi", names, refused, asked)]
        date = None
        if asked.last:
            axis = time_logic.trend_axis(selection.annotated(table))
            if axis is None or axis.kind != "date" or not axis.column:
                why = REASONS["filter_date"].format(period=asked.last)
                return [self._refused(clause, "kpi", names, REASONS["part"].format(part="filter " + asked.filter_text(),
                                                                                   why=why), asked)]  # fmt: skip
            date = axis.column
        spec = AnalysisSpec("kpi", self._view(table), measure=measure, by=date, agg=agg, where=asked.where,
                            last_period=asked.last)  # fmt: skip
        return [self._result(clause, "kpi", [measure, *asked.filtered], [spec], asked=asked)]

    def _measures_named(self, table: dict[str, Any], names: list[str]) -> tuple[list[str], str | None]:
        for name in names:
            col = selection.column(table, name) or {}
            if col.get("role") != "measure":
                return [], REASONS["not_measure"].format(name=name)
            if _aggregation(col) == "none":
                return [], REASONS["no_aggregate"].format(name=name, what=col.get("semantic") or "code")
        return names, None

    def _add_correlation(self, clause: _Clause, names: list[str], _unknown: bool, asked: Asked) -> list[Request]:
        table = self._table(names)
        ms, refused = self._measures_named(table, names)
        primary = self._primary(table)
        pair = ms if len(ms) >= 2 else [m for m in dict.fromkeys([primary, *ms]) if m]
        if refused or len(pair) < 2:
            reason = refused or REASONS["two_measures"]
            return [self._refused(clause, "correlation", names, reason, asked)]
        spec = AnalysisSpec("correlation", self._view(table), measures=(pair[0], pair[1]))
        return [self._result(clause, "correlation", pair[:2], [spec], asked=asked)]

    def _add_distribution(self, clause: _Clause, names: list[str], _unknown: bool, asked: Asked) -> list[Request]:
        table = self._table(names)
        ms, refused = self._measures_named(table, names)
        ms = ms or ([] if refused or names else [m for m in [self._primary(table)] if m])
        if refused or not ms:
            reason = refused or REASONS["not_measure"].format(name=", ".join(names) or "-")
            return [self._refused(clause, "distribution", names, reason, asked)]
        specs = [AnalysisSpec("distribution", self._view(table), measure=m) for m in ms]
        return [self._result(clause, "distribution", ms, specs, asked=asked)]


_CODER_HEADING = re.compile(r"^###\s*\d+\.\s*Coder\s*:", re.I)
_ITEM = re.compile(r"^\s*-\s*\[( |x|X)\]\s+(.*?)\s*$")


def _coder_items(lines: list[str]) -> list[tuple[int, str]]:
    items, inside = [], False
    for index, line in enumerate(lines):
        if line.startswith("### "):
            inside = bool(_CODER_HEADING.match(line))
            continue
        match = _ITEM.match(line)
        if inside and match:
            items.append((index, match.group(2)))
    return items


def _plan_profile(specs: list[AnalysisSpec]) -> dict[str, Any]:
    """A stand-in profile when none is given: the plan's own columns (removals only; nothing can be added)."""
    cols = [{"name": c, "role": "measure" if c in {m for s in specs for m in s.measures} else "category"}
            for c in dict.fromkeys(c for s in specs for c in s.columns())]  # fmt: skip
    return {"tables": [{"view": "data", "columns": cols}], "aliases": {"data": "data"}}


def plan_requests(feedback: str, profile: dict[str, Any] | None, plan: str) -> list[Request]:
    """The requests of a reviewer's feedback, each with its outcome.

    Args:
        feedback: The reviewer's words, in English or Korean.
        profile: The data profile (``DataProfile.to_dict()`` or the prompt's compact form); None decides from the
            plan's own columns, so only removals can apply.
        plan: The plan the feedback is about (its Coder items are what a removal can drop and an addition repeats).

    Returns:
        The requests in the order of the feedback. A removal is ``applied`` here when the rules allow it; whether it
        matches an item is decided when :func:`revise_plan` applies it.
    """
    specs = [s for _i, text in _coder_items(plan.splitlines()) if (s := parse_item_text(text))]
    columns = _Columns(profile if profile and profile.get("tables") else _plan_profile(specs))
    decider = _Decider(columns, specs)
    requests = [r for clause in _clauses(feedback) for r in decider.decide(clause)]
    logger.debug("feedback read as %d request(s)", len(requests))
    return requests


def requests_markdown(requests: list[Request], language: str = "en") -> str:
    """The requests as bullets for the hosted Planner's revise prompt (``(none found)`` when there are none)."""
    lines = []
    for req in requests:
        adds = "".join(f"; item: {s.item_text(language)}" for s in req.specs)
        lines.append(f"- {req.outcome}: {req.head()}" + (f": {req.reason}" if req.reason else "") + adds)
    return "\n".join(lines) or "(none found)"


def _parts_differ(spec: AnalysisSpec, asked: Asked) -> bool:
    """Whether the parts a removal names (grain, statistic, filter, split) rule this item out: "remove the monthly
    trend" keeps the daily one, "remove the average breakdowns" keeps the totals."""
    if asked.grain and spec.kind == "trend" and spec.period != asked.grain:
        return True
    if asked.statistic and spec.kind in ("trend", "breakdown", "kpi") and spec.agg and spec.agg != asked.statistic:
        return True
    if (asked.where or asked.last) and (set(spec.where) != set(asked.where) or spec.last_period != asked.last):
        return True
    return bool(asked.by) and spec.kind == "trend" and spec.split not in asked.by and spec.by not in asked.by


def _drop(spec: AnalysisSpec, req: Request) -> AnalysisSpec | None:
    """The spec after one removal: unchanged, trimmed (a KPI losing a measure) or None (dropped)."""
    if req.kinds and spec.kind not in req.kinds:
        return spec
    if req.columns and not set(spec.columns()) & set(req.columns):
        return spec
    if _parts_differ(spec, req.asked):
        return spec
    if spec.kind == "kpi" and req.columns and not req.kinds:
        kept = tuple(m for m in spec.measures if m not in req.columns)
        return replace(spec, measures=kept) if kept else None
    return None


def _apply_removals(lines: list[str], requests: list[Request]) -> tuple[list[str], list[Request]]:
    """Lines with the applied removals done ("" for a dropped item), and each request with what it removed."""
    items = _coder_items(lines)
    current = dict(items)
    done = []
    for req in requests:
        if req.action != "remove" or req.outcome != APPLIED:
            done.append(req)
            continue
        removed: dict[int, str] = {}
        for index, text in list(current.items()):
            spec = parse_item_text(text)
            revised = _drop(spec, req) if spec else spec
            if spec is None or revised == spec:
                continue
            if revised is None:
                removed[index] = current.pop(index)
            else:
                current[index] = revised.item_text(item_language(text))
                removed[index] = f"{text} -> {current[index]}"
        if items and not current:  # never an empty Coder section: the first item dropped comes back
            first = min(removed)
            current[first] = removed.pop(first)
            req = replace(req, reason=REASONS["last"])
        outcome = (APPLIED, req.reason) if removed else (NOT_APPLIED, REASONS["absent"])
        done.append(replace(req, outcome=outcome[0], reason=outcome[1], removed=tuple(removed.values())))
    kept = [f"- [ ] {current[i]}" if i in current else "" for i, _t in items]
    new_lines = list(lines)
    for (index, _t), line in zip(items, kept, strict=True):
        new_lines[index] = line
    return new_lines, done


def _apply_additions(lines: list[str], requests: list[Request], language: str) -> list[str]:
    """The added items, after the last Coder item."""
    new = [f"- [ ] {s.item_text(language)}" for r in requests if r.outcome == APPLIED for s in r.specs]
    items = _coder_items(lines)
    if not new or not items:
        return lines
    at = items[-1][0] + 1
    return lines[:at] + new + lines[at:]


def _split_notes(lines: list[str]) -> tuple[list[str], list[str]]:
    """Old ``## revision_notes`` body, and the plan lines without header and notes."""
    notes: list[str] = []
    rest: list[str] = []
    in_notes = False
    for line in lines[1:] if lines and lines[0].startswith("# Plan") else lines:
        if line.strip().lower() == "## revision_notes":
            in_notes = True
            continue
        if in_notes and line.startswith("## "):
            in_notes = False
        (notes if in_notes else rest).append(line)
    return notes, rest


def revise_plan(plan_md: str, feedback: str, revision: int, profile: dict[str, Any] | None = None) -> str:
    """Revise a plan after reviewer feedback.

    Args:
        plan_md: The current plan (``# Plan`` or an earlier ``# Plan (Revised)``).
        feedback: The reviewer's words, quoted into ``## revision_notes``.
        revision: The revision number this produces (1 for the first revision).
        profile: The data profile; without it only removals of the plan's own columns can apply.

    Returns:
        ``# Plan (Revised)`` with ``## revision_notes`` (earlier notes kept, then one line per request naming its
        outcome), the removals and additions applied to the Coder section and every other section unchanged.
    """
    old_notes, rest = _split_notes(plan_md.splitlines())
    items = _coder_items(rest)
    language = item_language(items[0][1]) if items else "en"
    requests = plan_requests(feedback, profile, "\n".join(rest))
    rest, requests = _apply_removals(rest, requests)
    rest = _apply_additions([line for line in rest if line != ""], requests, language)
    notes = [line for line in old_notes if line.strip()]
    notes.append(f"- Revision {revision}: reviewer feedback:")
    notes += [f"  > {line.strip()}" for line in feedback.strip().splitlines() if line.strip()] or ["  > (empty)"]
    notes += [f"  - {req.note(language)}" for req in requests]
    if not requests:
        notes.append("  - no request to add or remove an analysis was found; items kept")
    logger.debug("revision %d: %d request(s)", revision, len(requests))
    return "\n".join(["# Plan (Revised)", "## revision_notes", *notes, *rest]).rstrip("\n") + "\n"
