"""Reviewer feedback on a plan: which requests it makes, which can apply, and the revised plan.

:func:`plan_requests` is the one rule book. It reads the feedback clause by clause into requests to add or remove
analyses (breakdowns, trends, correlations, distributions; KPIs and the overview can be removed) on columns named
loosely ("ship-state", "Ship State", "gender"), and decides from the data profile whether each can apply: a column
that does not exist (the closest ones named), personal data, an identifier, a code that cannot be aggregated, or an
analysis already in the plan is refused with its reason. The hosted Planner gets the same list in its revise prompt
(:func:`requests_markdown`); the offline Planner applies it with :func:`revise_plan`. Either way the revision notes
name every request and its outcome. The Validator, Reporter and Auditor steps are never removed, and the Coder
section always keeps at least one item.
"""

from __future__ import annotations

import difflib
import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any

from insightloom.analysis import choices as selection
from insightloom.analysis import time_logic
from insightloom.analysis.catalog import AnalysisSpec, item_language, parse_item_text
from insightloom.analysis.planning import trend_spec

logger = logging.getLogger(__name__)

APPLIED = "applied"
NOT_APPLIED = "not_applied"
#: Kinds a request may add; KPIs and the overview are in every plan already, and may only be trimmed.
ADDABLE = ("breakdown", "trend", "correlation", "distribution")

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
    "month months week weeks day days year years time period periods level"
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
    "kind": "only breakdowns, trends, correlations and distributions can be added",
    "last": "the Coder section keeps at least one item",
}


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
    """

    action: str
    text: str
    kinds: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    outcome: str = APPLIED
    reason: str = ""
    specs: tuple[AnalysisSpec, ...] = ()
    removed: tuple[str, ...] = field(default=())

    def head(self) -> str:
        """The request in words: ``remove breakdown on `Gender` ("drop the gender breakdown")``."""
        cols = ", ".join(f"`{c}`" for c in self.columns)
        return (
            f"{self.action} {' '.join(self.kinds) or 'analyses'}"
            + (f" on {cols}" if cols else "")
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
        """Columns named in ``text`` (order of mention) and the spans they cover."""
        found: list[tuple[int, str]] = []
        spans: list[tuple[int, int]] = []
        for name, _col, _table in self.entries:
            for match in _name_pattern(name).finditer(text):
                if not any(a < match.end() and match.start() < b for a, b in spans):
                    spans.append(match.span())
                    found.append((match.start(), name))
                    break
        return [n for _, n in sorted(found)], spans

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
        def key(s: AnalysisSpec) -> tuple[Any, ...]:
            return (s.kind, s.view, s.measure, s.by, frozenset(s.measures))

        return any(key(s) == key(spec) for s in [*self.plan_specs, *self.added])

    def decide(self, clause: _Clause) -> list[Request]:
        names, spans = self.columns.find(clause.text)
        unknown = _unknown_names(clause.text, spans)
        action = clause.action or ""
        if action == "remove" and _VALIDATOR_WORDS.search(clause.text) and not names and not clause.kinds:
            return [Request("remove", clause.text, outcome=NOT_APPLIED, reason=REASONS["validator"])]
        if _FIXED_STEPS.search(clause.text) and not names and not clause.kinds:
            return [Request(action, clause.text, outcome=NOT_APPLIED, reason=REASONS["fixed"])] if action else []
        requests = [self._unknown(action, clause, phrase) for phrase in unknown if action in ("add", "remove")]
        if action == "remove" and (names or clause.kinds) and not (unknown and not names):
            requests.insert(0, Request("remove", clause.text, tuple(clause.kinds), tuple(names)))
        elif action == "add" and (names or clause.kinds):
            requests[:0] = self._additions(clause, names, bool(unknown))
        return requests

    def _unknown(self, action: str, clause: _Clause, phrase: str) -> Request:
        close = ", ".join(f"`{n}`" for n in self.columns.closest(phrase))
        reason = REASONS["no_column"].format(name=f"`{phrase}`") + (f" (closest columns: {close})" if close else "")
        return Request(action, clause.text, tuple(clause.kinds), (), NOT_APPLIED, reason)

    def _additions(self, clause: _Clause, names: list[str], has_unknown: bool) -> list[Request]:
        kinds = [k for k in clause.kinds if k in ADDABLE] or ([] if clause.kinds else [self._kind_for(names)])
        if not kinds:
            return [Request("add", clause.text, tuple(clause.kinds), tuple(names), NOT_APPLIED, REASONS["kind"])]
        for name in names:
            refused = _refusal(name, self.columns.entry(name)[0])
            if refused:
                return [Request("add", clause.text, tuple(kinds), tuple(names), NOT_APPLIED, refused)]
        out: list[Request] = []
        for kind in kinds:
            out += getattr(self, f"_add_{kind}")(clause, names, has_unknown)
        return out

    def _kind_for(self, names: list[str]) -> str:
        roles = {self.columns.entry(n)[0].get("role") for n in names}
        return "trend" if roles == {"date"} else "distribution" if roles == {"measure"} else "breakdown"

    def _table(self, names: list[str]) -> dict[str, Any]:
        return self.columns.entry(names[0])[1] if names else self.columns.tables[0]

    def _result(
        self, clause: _Clause, kind: str, names: list[str], specs: list[AnalysisSpec], note: str = ""
    ) -> Request:
        fresh = [s for s in specs if not self._present(s)]
        if not fresh:
            return Request("add", clause.text, (kind,), tuple(names), NOT_APPLIED, REASONS["present"])
        self.added += fresh
        return Request("add", clause.text, (kind,), tuple(names), APPLIED, note, tuple(fresh))

    def _measure_agg(self, table: dict[str, Any], measure: str | None) -> tuple[str, str | None]:
        """(agg, refusal) for aggregating ``measure`` per group or period; no measure means row counts."""
        if measure is None:
            return "count", None
        col = selection.column(table, measure) or {}
        verdict = _aggregation(col)
        if verdict == "none":
            what = str(col.get("semantic") or "code")
            return "", REASONS["no_aggregate"].format(name=measure, what=what)
        return verdict, None

    def _split(self, table: dict[str, Any], names: list[str], has_unknown: bool) -> tuple[str | None, list[str]]:
        """(measure, grouping columns): the first measure named is aggregated when another column is named too (or
        a name of no column, which then was the grouping column)."""
        roles = {n: (selection.column(table, n) or {}).get("role") for n in names}
        measure = next((n for n in names if roles[n] == "measure"), None)
        others = [n for n in names if n != measure]
        if measure and not others and not has_unknown:
            return None, names  # "a breakdown by Qty": Qty is the grouping column
        return measure, others

    def _add_breakdown(self, clause: _Clause, names: list[str], has_unknown: bool) -> list[Request]:
        table = self._table(names)
        measure, bys = self._split(table, names, has_unknown)
        if not bys:
            if has_unknown:
                return []  # the unknown name was the grouping column; its own request says so
            return [Request("add", clause.text, ("breakdown",), tuple(names), NOT_APPLIED, REASONS["no_by"])]
        measure = measure or self._primary(table)
        agg, refused = self._measure_agg(table, measure)
        if refused:
            return [Request("add", clause.text, ("breakdown",), tuple(names), NOT_APPLIED, refused)]
        out = []
        for by in bys:
            col = selection.column(table, by) or {}
            distinct = int(col.get("distinct") or 0)
            rows = int(table.get("rows") or 0)
            if distinct > selection.MAX_GROUPS and distinct >= 0.9 * rows:
                reason = REASONS["too_many"].format(name=by, distinct=distinct)
                out.append(Request("add", clause.text, ("breakdown",), (by,), NOT_APPLIED, reason))
                continue
            spec = AnalysisSpec("breakdown", self._view(table), measure=measure, by=by, agg=agg)
            note = REASONS["one_group" if distinct == 1 else "many_groups" if distinct > selection.MAX_GROUPS else ""]
            note = note.format(name=by, distinct=distinct)
            out.append(self._result(clause, "breakdown", [c for c in (measure, by) if c], [spec], note))
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

    def _add_trend(self, clause: _Clause, names: list[str], _unknown: bool) -> list[Request]:
        table = self._table(names)
        axis, refused = self._time_axis(table, names)
        if axis is None:
            return [Request("add", clause.text, ("trend",), tuple(names), NOT_APPLIED, refused)]
        roles = {n: (selection.column(table, n) or {}).get("role") for n in names}
        measure = next((n for n in names if roles[n] == "measure" and n != axis.column), None) or self._primary(table)
        agg, refused_agg = self._measure_agg(table, measure)
        if refused_agg:
            return [Request("add", clause.text, ("trend",), tuple(names), NOT_APPLIED, refused_agg)]
        asked = next((p for p, words in _PERIOD_WORDS.items() if re.search(words, clause.text, re.I)), None)
        if asked and axis.kind == "date":
            axis = replace(axis, period=asked)
        spec = trend_spec(table, self._view(table), axis, measure, agg)
        return [self._result(clause, "trend", [c for c in (spec.measure, spec.by) if c], [spec])]

    def _measures_named(self, table: dict[str, Any], names: list[str]) -> tuple[list[str], str | None]:
        for name in names:
            col = selection.column(table, name) or {}
            if col.get("role") != "measure":
                return [], REASONS["not_measure"].format(name=name)
            if _aggregation(col) == "none":
                return [], REASONS["no_aggregate"].format(name=name, what=col.get("semantic") or "code")
        return names, None

    def _add_correlation(self, clause: _Clause, names: list[str], _unknown: bool) -> list[Request]:
        table = self._table(names)
        ms, refused = self._measures_named(table, names)
        primary = self._primary(table)
        pair = ms if len(ms) >= 2 else [m for m in dict.fromkeys([primary, *ms]) if m]
        if refused or len(pair) < 2:
            reason = refused or REASONS["two_measures"]
            return [Request("add", clause.text, ("correlation",), tuple(names), NOT_APPLIED, reason)]
        spec = AnalysisSpec("correlation", self._view(table), measures=(pair[0], pair[1]))
        return [self._result(clause, "correlation", pair[:2], [spec])]

    def _add_distribution(self, clause: _Clause, names: list[str], _unknown: bool) -> list[Request]:
        table = self._table(names)
        ms, refused = self._measures_named(table, names)
        ms = ms or ([] if refused or names else [m for m in [self._primary(table)] if m])
        if refused or not ms:
            reason = refused or REASONS["not_measure"].format(name=", ".join(names) or "-")
            return [Request("add", clause.text, ("distribution",), tuple(names), NOT_APPLIED, reason)]
        specs = [AnalysisSpec("distribution", self._view(table), measure=m) for m in ms]
        return [self._result(clause, "distribution", ms, specs)]


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


def _drop(spec: AnalysisSpec, req: Request) -> AnalysisSpec | None:
    """The spec after one removal: unchanged, trimmed (a KPI losing a measure) or None (dropped)."""
    if req.kinds and spec.kind not in req.kinds:
        return spec
    if req.columns and not set(spec.columns()) & set(req.columns):
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
