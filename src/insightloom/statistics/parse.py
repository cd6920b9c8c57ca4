"""A statistics question read into a :class:`StatRequest` over the data profile, or refused naming why.

Columns are matched through the profile (their names, with ``_`` read as a space, in backticks or not, a Korean
particle allowed after), category values through the profile's top values (quoted, or next to their column), and
operations through the lexicon (:mod:`.lexicon`). Everything the question constrains must be read: a period, a
number or a quoted value the request cannot express refuses the question instead of being dropped, since a verified
number that answers another question is a wrong answer.
"""

from __future__ import annotations

import difflib
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from insightloom.statistics import lexicon as lx
from insightloom.statistics.operations import OPERATIONS, operation
from insightloom.statistics.operations import input_columns as ops_columns
from insightloom.statistics.request import Filter, StatRequest, Step

#: Refusal kinds: an operation the catalog lacks, a column the data lack, a name two columns match, or a
#: constraint the catalog cannot express (a period, a number) that another route may still answer.
logger = logging.getLogger(__name__)
UNSUPPORTED = "unsupported_operation"
MISSING_COLUMN = "missing_column"
AMBIGUOUS = "ambiguous_column"
UNEXPRESSED = "unexpressed"
#: A part of the question the parser could not read (a number, a yes/no comparison): the question is refused,
#: never answered as the question without it.
UNREAD = "unread_constraint"
_NUMERIC_DTYPES = ("int", "float", "uint")
_FEW_LEVELS = 10  # a numeric column with at most this many values can group (a t-test's 0/1, a χ² test's grade)
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"|‘([^’]+)’|“([^”]+)”")
#: A number of the question; one with a unit or a Korean counter on it ("300km", "1700년", "1.5배") is a number too.
_NUMBER = re.compile(
    r"(?<![\w.^])[-−]?\d+(?:,\d{3})*(?:\.\d+)?(?:(?![\w])|(?=[\uac00-\ud7a3])|(?=(?:km|kg|cm|mm|lbs?|mph|ms|[smhgkx])\b))"
)
_COLUMN_WORD = re.compile(
    r"[`'\"]?((?:[\w.-]+ ){0,2}[\w.-]+)[`'\"]? (?:column|variable|field|feature)\b|"
    r"\b(?:column|variable|field) [`'\"]?([\w][\w.-]{0,40})[`'\"]?|"
    r"[`'\"]?(\S{1,40}?)[`'\"]? ?(?:열|컬럼|칼럼|변수)(?:의|은|는|이|가|을|를|에서)?(?=\s|$|[,.?])"
)
_OF_PHRASE = re.compile(
    r"\b(?:what|calculate|compute|find|determine|report|give|get|estimate|show)\b(?:\s+(?:is|are|was|were|me))?"
    r"\s+(?:the\s+)?(?P<op>[a-z][a-z' -]{1,40}?)\s+(?:of|for|between|in)\b"
)
_GENERIC = frozenset(
    "value values data dataset table rows row records record observations entries column columns variable variables "  # noqa: SIM905
    "people cases items the a an this that these those each all every of for in on by and or with to from at as is "
    "are was were be been it its what which how many much have has had contain contains include includes do "
    "does".split()
)


@dataclass(frozen=True)
class Refusal:
    """Why a question is no catalog request: ``kind``, the reason (a sentence fragment naming the operation or the
    column), the names it refuses and, for a column, the candidates."""

    kind: str
    reason: str
    named: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()


@dataclass
class _Text:
    """The question, lowered, with the spans already read blanked out (so no word is read twice)."""

    original: str
    text: str

    def take(self, start: int, end: int) -> None:
        self.text = self.text[:start] + " " * (end - start) + self.text[end:]

    def find(self, pattern: str | re.Pattern[str]) -> list[re.Match[str]]:
        return list(re.finditer(pattern, self.text))


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    name: str


def _normal(question: str) -> str:
    table = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "−": "-", "×": "x", "≥": ">=", "≤": "<=", "`": "`"})
    return question.translate(table).lower()


def _columns(table: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [c for c in table.get("columns", []) if c.get("role") != "pii"]


def is_numeric(col: Mapping[str, Any]) -> bool:
    """Whether the profile holds the column as numbers."""
    return str(col.get("dtype", "")).startswith(_NUMERIC_DTYPES)


def _name_pattern(name: str, *, plural: bool = False) -> str:
    parts = re.split(r"[\s_.]+", name)
    words = r"[\s_.]+".join(_camel_words(p) for p in parts if p) + (r"(?:e?s)?" if plural else "")
    # "state-years" names no `state`; "|r|" is an absolute value, not a column `R`
    return rf"(?<![\w|-]){words}(?:{lx.KO_PARTICLES})?(?![\w|-])"


def _camel_words(word: str) -> str:
    """One word of a name, its camel-case parts optionally apart ("HomeGoals" reads as "home goals" too)."""
    pieces = re.split(r"(?<=[a-z])(?=[A-Z][a-z])", word)
    return r"[\s_.]?".join(re.escape(p.lower()) for p in pieces)


def _inflected(name: str) -> tuple[str, ...]:
    """The name's past tense ("denied" for `deny`, "smoked" for `smoke`): a word that holds the column though
    not its exact spelling."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z ]{2,}", name) or " " in name.strip():
        return ()
    low = name.lower()
    # past tenses only: "departments" for `Department` names the rows counted, "report" for `reports` a verb
    if low.endswith("s"):
        return ()
    forms = [low[:-1] + "ied"] if low.endswith("y") else [low + "d"] if low.endswith("e") else [low + "ed"]
    return tuple(rf"(?<![\w-]){re.escape(f)}(?![\w-])" for f in forms)


_PLURAL_AFTER = re.compile(
    r"(?:distinct|unique|different|highest|lowest|largest|smallest|oldest|youngest|tallest|shortest|heaviest|"
    r"lightest|longest|maximum|minimum)\s+(?:and\s+(?:the\s+)?\w+\s+)?$"
)
#: "latitudes above 20 degrees": a numeric column's plural compared to a number.
_PLURAL_COMPARED = re.compile(
    r"\s+(?:above|below|over|under|greater\s+than|less\s+than|more\s+than|at\s+least|at\s+most)\s+\d"
)
#: "differ across the Schools": a category's groups; "across the years" of a numeric Year means every row.
_PLURAL_GROUPS = re.compile(
    r"\b(?:across|among|between)\s+(?:the\s+)?(?:different\s+|various\s+)?(?:[^\W\d_]+\s+)?$"
)  # "across the oil classes": one word of the table's own noun may stand before the plural


def _plural_mentions(text: _Text, columns: list[dict[str, Any]]) -> list[_Mention]:
    """A column named in the plural right after "distinct" or a superlative ("how many distinct subjects", "the
    youngest and the oldest ages"): there the plural names the column's values, not the rows counted."""
    found = []
    for col in columns:
        name = str(col["name"])
        low = name.lower()
        if not re.fullmatch(r"[A-Za-z]{3,}", name) or (low.endswith("s") and not low.endswith("ss")):
            continue  # `reports` is a plural already; `class` takes "classes"
        ending = "es" if low.endswith(("ss", "x", "ch", "sh")) else "(?:s|es)"
        for match in text.find(rf"(?<![\w-]){re.escape(low)}{ending}(?![\w-])"):
            before = text.text[max(0, match.start() - 40) : match.start()]
            compared = is_numeric(col) and _PLURAL_COMPARED.match(text.text, match.end())
            if _PLURAL_AFTER.search(before) or (_PLURAL_GROUPS.search(before) and not is_numeric(col)) or compared:
                found.append(_Mention(match.start(), match.end(), name))
                text.take(*match.span())
    return found


def _adjective_mentions(text: _Text, columns: list[dict[str, Any]], mentions: list[_Mention]) -> list[_Mention]:
    """ "Which star is the hottest?", "mice that weigh more than 50 g": a superlative or a verb that names its
    measure, when the table has exactly one numeric measure the word reads as (`temp` for "hottest", `body_weight`
    for "weigh") and the question does not name that column already."""
    named = {m.name for m in mentions}
    found = []
    words = [(rf"\b{word}\b", names) for word, names in lx.MEASURE_ADJECTIVES.items()]
    words += [(rf"\b{verb}\b", names) for verb, names in lx.MEASURE_VERBS.items()]
    for pattern, names in words:
        fits = [c for c in columns if is_numeric(c) and c.get("role") == "measure" and _reads_as(str(c["name"]), names)]
        if len(fits) != 1 or fits[0]["name"] in named:
            continue
        found += [_Mention(m.start(), m.end(), str(fits[0]["name"])) for m in text.find(pattern)]
    return found


def _reads_as(name: str, words: tuple[str, ...]) -> bool:
    """`body_weight` reads as "weight": the whole name or one of its words (snake, dotted or camel case)."""
    parts = [p.lower() for p in re.split(r"[_.\s-]+|(?<=[a-z])(?=[A-Z])", name)]
    return name.lower() in words or any(p in words for p in parts)


def _count_phrase(name: str) -> tuple[str, ...]:
    """A count column named in the plural (`seats`) read as "seat count"."""
    if not re.fullmatch(r"[A-Za-z]{3,}s", name) or name.lower().endswith("ss"):
        return ()
    return (rf"(?<![\w-]){re.escape(name.lower()[:-1])}\s+count(?![\w-])",)


def _weak_mentions(text: _Text, columns: list[dict[str, Any]]) -> list[_Mention]:
    """Words that hold a column's word in another form ("denied" for `deny`), where no mention was read: never an
    operand, but a request that leaves such a column unread answers another question."""
    found = []
    for col in columns:
        for pattern in _inflected(str(col["name"])) + _agent_nouns(col):
            found += [_Mention(m.start(), m.end(), str(col["name"])) for m in text.find(pattern)]
    return found


def _agent_nouns(col: Mapping[str, Any]) -> tuple[str, ...]:
    """ "smokers" for a yes/no column `smoke`: the rows where it holds (a yes/no column only, so "players" never
    reads a column `play` of other values)."""
    name = str(col["name"]).lower()
    values = {str(v).lower() for v in _category_values(col)}
    if not re.fullmatch(r"[a-z]{3,}", name) or not any(values == p for p in _YES_NO):
        return ()
    stem = name + ("r" if name.endswith("e") else "er")
    return (rf"(?<![\w-]){stem}s?(?![\w-])",)


_YES_NO = ({"yes", "no"}, {"true", "false"}, {"y", "n"})


def _verb_filters(text: _Text, weak: list[_Mention], by_name: Mapping[str, Any], filters: list[Filter]) -> list[Filter]:
    """ "were denied" for a yes/no column `deny`: the rows where it holds (``not denied``: where it does not)."""
    found = []
    for m in weak:
        col = by_name[m.name]
        values = {v.lower(): v for v in _category_values(col)}
        pair = next((p for p in _YES_NO if set(values) == p), None)
        if pair is None or any(f.column == m.name for f in filters):
            continue
        negated = re.search(r"\b(?:not|never|n't)\s+(?:been\s+)?$", text.text[: m.start])
        yes, no = sorted(pair, key=lambda v: v not in ("yes", "true", "y"))
        found.append(Filter(m.name, "=", values[no if negated else yes]))
        text.take(m.start, m.end)
    return found


def _unread_weak(text: _Text, weak: list[_Mention], request: StatRequest) -> Refusal | None:
    used = {c for step in request.steps for c in ops_columns(step)} | {f.column for f in request.filters}
    for m in weak:
        if m.name not in used and text.text[m.start : m.end].strip():
            word = text.original[m.start : m.end]
            return Refusal(UNREAD, f"the question says '{word}' (`{m.name}`?), which the request does not read",
                           (word,))  # fmt: skip
    return None


def _value_spans(text: _Text, columns: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Where the question names a category value of several words right after its column and an equals sign
    ("happy = very happy", "Remote = Not remote"). Said bare ("a share of very happy respondents"), such a value may
    only describe the measure asked, so it filters nothing and its words stay column names."""
    spans = []
    for col in columns:
        name = re.escape(str(col["name"]).lower())
        for value in (v.lower() for v in _category_values(col) if len(v.split()) > 1):
            pattern = rf"(?<![\w])`?{name}`?\s*(?:==|=|:)\s*['\"]?(?P<v>{re.escape(value)})(?![\w])"
            spans += [m.span("v") for m in text.find(pattern)]
    return spans


def _column_mentions(text: _Text, columns: list[dict[str, Any]]) -> tuple[list[_Mention], list[Refusal]]:
    found: list[_Mention] = []
    values = _value_spans(text, columns)
    for col in sorted(columns, key=lambda c: -len(str(c["name"]))):
        name = str(col["name"])
        for pattern in (rf"`{re.escape(name.lower())}`", _name_pattern(name), *_count_phrase(name)):
            for match in text.find(pattern):
                if any(s <= match.start() and match.end() <= e and (s, e) != match.span() for s, e in values):
                    continue  # "happy" in "very happy": a word of a value, not its column
                same = [m for m in found if (m.start, m.end) == match.span()]
                if same and all(m.name != name for m in same):
                    found.append(_Mention(match.start(), match.end(), name))  # two columns, one name: ambiguous
                elif not any(match.start() < m.end and m.start < match.end() for m in found):
                    found.append(_Mention(match.start(), match.end(), name))
    refusals = []
    by_span: dict[tuple[int, int], list[str]] = {}
    for m in found:
        by_span.setdefault((m.start, m.end), []).append(m.name)
    for names in by_span.values():
        if len(set(names)) > 1:
            refusals.append(Refusal(AMBIGUOUS, f"the name matches more than one column ({_listed(names)})",
                                    tuple(names), tuple(names)))  # fmt: skip
    found = _values_not_columns(text.text, found, {str(c["name"]): c for c in columns})
    for m in found:
        text.take(m.start, m.end)
    return sorted(found, key=lambda m: (m.start, m.name)), refusals


_EQUALS = re.compile(r"\s*(?:==|=|is|equals?|:)\s*")


def _values_not_columns(lowered: str, found: list[_Mention], by_name: Mapping[str, Any]) -> list[_Mention]:
    """ "cause = inbed" where `inbed` is also a column: right after its column and an equals sign, a name that is
    one of that column's values is the value, not the other column."""
    kept = []
    for m in found:
        before = [o for o in found if o.end <= m.start and _EQUALS.fullmatch(lowered[o.end : m.start])]
        values = {v.lower() for o in before for v in _category_values(by_name.get(o.name, {}))}
        if lowered[m.start : m.end].strip("`") not in values:
            kept.append(m)
    return kept


_HEAD_NOUNS = re.compile(
    r"[\w'-]*(?:\s+(?:coefficient|effects?|tests?|index|ratio|rate|model|analysis|statistic|smoothing|mean|"
    r"average|regression|interval|error|component|decomposition|rank))?",
    re.IGNORECASE,
)


def _whole_term(question: str, start: int, end: int) -> str:
    """The whole term a match starts ("Kruskal" -> "Kruskal-Wallis", "Gini" -> "Gini coefficient", "지니" ->
    "지니계수"), so a refusal names what was asked in the asker's words."""
    tail = _HEAD_NOUNS.match(question, end)
    head = re.search(r"(?<![\w'-])(?P<w>[A-Za-z][A-Za-z-]*)\s+$", question[:start])  # English word order only
    if head and head.group("w").lower() not in _NOT_MODIFIERS:  # "hierarchical clustering", "multinomial logit"
        start = head.start("w")
    term = question[start : tail.end() if tail else end].strip()
    stem = re.sub(rf"(?<=[\uac00-\ud7a3])(?:{lx.KO_PARTICLES})$", "", term)  # "기하평균은" names "기하평균"
    return stem if len(stem) >= 2 else term


#: Words before a method's name that are no part of it ("run a k-means", "fit the logit").
_NOT_MODIFIERS = frozenset(
    "a an the run fit use do compute calculate perform estimate report give apply with of for to and or by using on "  # noqa: SIM905
    "in my this that these its their make build train conduct please what which is are was any some each via from "
    "at as".split()
)


_DESCRIBED = re.compile(r"((?:[^\W\d_][\w'-]*|\d+(?:\.\d+)?)\s+){0,4}\(\s*$")
_DESCRIBED_LONG = re.compile(r"((?:[^\W\d_][\w'-]*|\d+(?:\.\d+)?)\s+){0,6}\(\s*$")


def _described(
    text: _Text, mentions: list[_Mention], numeric: set[str] | frozenset[str] = frozenset()
) -> list[_Mention]:
    """Read "the mean net time (`net`)" and "a 65 mph speed limit (`speed65` = 'yes')" as the asker's words for the
    column in parentheses: another column's bare name among them ("time") is no mention, and a number among them
    ("65") no constraint."""
    dropped: set[tuple[int, int]] = set()
    for m in mentions:
        quoted = text.original[m.start : m.start + 1] == "`"
        if not quoted and not text.original[: m.start].rstrip().endswith("("):
            continue
        words = (_DESCRIBED if quoted else _DESCRIBED_LONG).search(text.original[: m.start])
        if words is None or words.start() == words.end():
            continue
        start, end = words.start(), words.end()
        if quoted:  # "the 2004 fate of a gall (Fate04)": a bare name in parentheses reads its words' numbers only
            dropped |= {(o.start, o.end) for o in mentions if o.name != m.name and start <= o.start < end
                        and text.original[o.start : o.start + 1] != "`"}  # fmt: skip
        elif re.match(r"\s*\)", text.original[m.end :]):  # "item types (type)", "career hits (CHits)": a gloss
            last = re.search(r"(?:\S+\s+){0,2}\(\s*$", text.original[: m.start])
            near = last.start() if last else start
            dropped |= {(o.start, o.end) for o in mentions if o.name != m.name and near <= o.start < end}
        for number in re.finditer(r"\d+(?:\.\d+)?", text.text[start:end]):
            text.take(start + number.start(), start + number.end())
    return [m for m in mentions if (m.start, m.end) not in dropped]


def _listed(names: list[str] | tuple[str, ...]) -> str:
    return ", ".join(f"`{n}`" for n in dict.fromkeys(names))


def _missing_column(text: _Text, columns: list[dict[str, Any]]) -> Refusal | None:
    """A column the question names ("the temperature column", `temp`) that the data lack."""
    names = [str(c["name"]) for c in columns]
    for match in [*text.find(r"`([^`]+)`"), *text.find(_COLUMN_WORD)]:
        index = next((i for i, g in enumerate(match.groups(), 1) if g), 0)
        phrase = text.original[match.start(index) : match.end(index)].strip(" .,'\"`") if index else ""
        words = [w for w in phrase.split() if w.lower() not in _GENERIC]
        if not words:
            continue
        phrase = " ".join(words)
        if len(phrase) < 2 or phrase.isdigit():
            continue
        close = difflib.get_close_matches(phrase.lower(), [n.lower() for n in names], n=3, cutoff=0.6)
        candidates = tuple(n for n in names if n.lower() in close)
        return Refusal(MISSING_COLUMN, f"the data have no column '{phrase}'", (phrase,), candidates)
    return None


_GLOSS = re.compile(r"(?P<ko>[\uac00-\ud7a3]+(?:\s+[\uac00-\ud7a3]+)?)\s*\((?P<en>[A-Za-z][A-Za-z0-9 _.-]*)\)")


def _glossed(text: _Text, columns: list[dict[str, Any]]) -> Refusal | None:
    """A Korean term glossed in English, "임신 주수(gestational age)", that no column's name is: the data lack it,
    even when a column's name ("age") is a word of the gloss."""
    for match in _GLOSS.finditer(text.original):
        gloss = match.group("en").strip()
        taken = [text.text[a:b] for a, b in (match.span("ko"), match.span("en"))]
        if any(not t.strip() for t in taken):  # "왜도(skewness)", "t-검정(Student)": an operation named
            continue
        if any(re.search(p, gloss.lower()) for patterns in lx.OPERATION_WORDS.values() for p in patterns):
            continue  # "모표준편차(population standard deviation)": an operation glossed
        if any(re.fullmatch(_name_pattern(str(c["name"])), gloss.lower()) for c in columns):
            continue
        ko = re.sub(f"(?:{lx.KO_PARTICLES})$", "", match.group("ko"))
        close = difflib.get_close_matches(gloss.lower(), [str(c["name"]).lower() for c in columns], n=3, cutoff=0.6)
        candidates = tuple(str(c["name"]) for c in columns if str(c["name"]).lower() in close)
        return Refusal(MISSING_COLUMN, f"the data have no column '{ko} ({gloss})'", (ko, gloss), candidates)
    return None


def _category_values(col: Mapping[str, Any]) -> list[str]:
    return [str(v["value"]) for v in col.get("top_values") or [] if str(v.get("value", "")).strip()]


_HANGUL = re.compile(r"[\uac00-\ud7a3]")
#: The words that exclude the value named next ("excluding Seoul") or, in Korean, just before ("서울을 제외한").
_EXCLUDING = (
    r"\b(?:excluding|except(?:\s+for)?|other\s+than|apart\s+from|not\s+counting|leaving\s+out|besides|but\s+not)"
)
_EXCLUDED_BEFORE = re.compile(_EXCLUDING + r"(?:\s+(?:the|a|an))?\s*[`'\"(]?\s*$")
_EXCLUDED_UNREAD = re.compile(_EXCLUDING + r"\s+[^\W\d_]")  # "excluding returns": a word no filter read
_EXCLUDED_AFTER = re.compile(
    r"\s*[`'\")]?\s*(?:을|를|은|는)?\s*(?:제외(?:한|하고|하면|하여)?|빼고|뺀|외의|이외의?|말고)"
)
#: An operation word ("slope", "mean"): said bare, it asks for that statistic, never for the value it spells.
_OPERATION_WORD = re.compile("|".join(f"(?:{p})" for patterns in lx.OPERATION_WORDS.values() for p in patterns))
#: The endings that make a category value an adjective or a plural: "northern" of North, "Asian" of Asia.
_DERIVED = r"(?:ern|erly|ian|an|n|ese|ish|s|es)"


def _value_filters(text: _Text, columns: list[dict[str, Any]], mentions: list[_Mention]) -> list[Filter]:
    """``column = value`` for each category value the question names (quoted, or right after its column), in the
    order the question names them (a t-test's first group is the one named first). A value several columns hold
    goes to the one named nearest before it; with none named, it stays unread (and refuses the question)."""
    spans: dict[tuple[int, int], list[tuple[str, str, bool]]] = {}
    for col in columns:
        near = [m for m in mentions if m.name == col["name"]]
        for value in sorted(_category_values(col), key=len, reverse=True):
            v = re.escape(value.lower())
            beside = re.compile(  # "Gender F", "Gender = F", "Gender가 F인"
                rf"\)?(?:{lx.KO_PARTICLES})?\s*(?:=|==|is|of|equals?|equal\s+to|:)?\s*{v}(?:(?![\w])|(?=(?:인|이고|이며|이면|일)(?![\w])))"
            )
            hits = [(h.span(), True) for h in (beside.match(text.text, m.end) for m in near) if h]
            hits += [(h.span(), False) for h in text.find(rf"(?:'{v}'|\"{v}\"|\(\s*{v}\s*\))")]  # "males (M)"
            bare = len(value) >= 3 or (len(value) == 2 and _HANGUL.search(value) is not None)  # "서울" is a word
            if not hits and bare and not value.isdigit() and not _OPERATION_WORD.fullmatch(value.lower()):
                hits += [(h.span(), False) for h in text.find(rf"(?<![\w]){v}(?:{lx.KO_PARTICLES}){{0,2}}(?![\w])")]
            if not hits and len(value) >= 4 and value.isalpha():  # "northern towns" (North), "Asian" (Asia)
                hits += [(h.span(), False) for h in text.find(rf"(?<![\w]){v}{_DERIVED}(?![\w])")]
            elif not hits and len(value) == 2 and value.isupper() and value.isalpha():  # "mean len for OJ"
                exact = re.compile(rf"(?<![\w]){re.escape(value)}(?:{lx.KO_PARTICLES})?(?![\w])")
                hits += [(h.span(), False) for h in exact.finditer(text.original) if text.text[h.start()] != " "]
            for span, adjacent in hits[:1]:
                spans.setdefault(span, []).append((str(col["name"]), value, adjacent))
    found: list[tuple[int, Filter]] = []
    read: list[tuple[int, int]] = []
    for (start, end), owners in sorted(spans.items(), key=lambda item: (item[0][0], -item[0][1])):
        if any(start < e and s < end for s, e in read):
            continue  # "Student = Yes" read beside its column: the bare "yes" inside it is no other column's
        owner = _owner(owners, start, mentions)
        if owner is not None:
            before = _EXCLUDED_BEFORE.search(text.text[:start])
            after = _EXCLUDED_AFTER.match(text.text, end)
            op = "!=" if before or after else "="  # "excluding Seoul", "서울을 제외한": every other row
            start, end = (before.start() if before else start), (after.end() if after else end)
            found.append((start, Filter(owner[0], op, owner[1])))
            text.take(start, end)
            read.append((start, end))
    return [f for _pos, f in found]


def _owner(owners: list[tuple[str, str, bool]], start: int, mentions: list[_Mention]) -> tuple[str, str] | None:
    if len(owners) == 1:
        return owners[0][0], owners[0][1]
    adjacent = [o for o in owners if o[2]]
    if len(adjacent) == 1:
        return adjacent[0][0], adjacent[0][1]
    named = {o[0]: o for o in owners}
    before = [m for m in mentions if m.end <= start and m.name in named]
    if before:
        return named[before[-1].name][0], named[before[-1].name][1]
    anywhere = {m.name for m in mentions if m.name in named}  # "Bayern and Dortmund at home (HomeTeam)"
    return (named[next(iter(anywhere))][0], named[next(iter(anywhere))][1]) if len(anywhere) == 1 else None


_NUM = r"-?\d+(?:,\d{3})*(?:\.\d+)?"
#: "10 million passengers", "2.5 billion": a number with its scale word is one number.
_SCALES = {"thousand": 1e3, "million": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9}
_SCALED = _NUM + r"(?:\s*(?:thousand|million|mn|billion|bn)(?![\w]))?"
#: A gloss right after a name ("`checks`(경찰 조회 건수)가 0"): skipped before the comparison is read.
_GLOSS_AFTER = re.compile(r"\)?\s*\([^()]{0,60}\)")
#: Between a name and its comparison: "is", "a rating of", and one word of the name's gloss before such a noun
#: ("eicosenoic acid level above 0.5").
_FILLER = (
    r"\)?(?:\s+[^\W\d_]+(?=\s+(?:level|levels|content|value|values|score|scores|rating)\b))?"
    r"(?:\s+(?:is|are|was|were|of|with|a|an|value|values|rating|score|scores|level|levels|content|count))*\s*\(?"
)
#: "a rating of 5", "education level 5": a bare number after such a word is the value itself.
_NOT_A_VALUE = (
    r"(?![\d.]|\s*(?:or\s+(?:more|less|higher|lower|fewer|greater|above|below|over|under|later|earlier|older|younger)|"
    r"and\s+(?:above|up|over|higher|below|under|lower)|%|decimal|places|d\.p))"
)  # "5 or more", "2 decimals": no value
_BARE_AFTER = re.compile(
    rf"\s+(?:(?:a|an)\s+)?(?:(?:rating|score|level|grade|value)(?:\s+of)?|of|=)\s+(?P<n>{_NUM}){_NOT_A_VALUE}"
)
#: "5.5 or higher", "10 and above": the comparison written after the number.
_AFTER_NUMBER = (
    (
        r"or\s+(?:higher|more|greater|above|over|larger|bigger|later|older)|and\s+(?:above|up|over|higher|older)|\+",
        ">=",
    ),
    (r"or\s+(?:lower|less|fewer|below|under|smaller|earlier|younger)|and\s+(?:below|under|lower|younger)", "<="),
)
_UNIT = r"(?:mph|km|kg|cm|mm|lbs?|g|m|s|ms|h|kelvin|degrees?|years?|days?|points?|inches|units?|percent|%)"
_KO_UNIT = r"(?:[a-z%°℃]{1,3}|개|명|건|회|번|점|세|살|년|원|달러|시간|분|초|일|권|편|도|배)?"
_KO_COMPARE = re.compile(
    rf"\)?\s*(?:이|가|은|는|을|를|이가|의\s*값이|\s*값\s*(?:이|가|은|는)?)?\s*(?P<n>{_NUM})\s*{_KO_UNIT}\s*"
    r"(?:을|를)?\s*(?P<w>이상|이하|초과|미만|보다\s*(?:많|크|큰|높|길)\S*|보다\s*(?:적|작|낮|짧)\S*|넘\S*|"
    r"인(?=\s|$)|이면서|이고|이며|이면|으로|로(?=\s))"
)
_BEFORE_OPS = {"more than": ">", "over": ">", "at least": ">=", "fewer than": "<", "less than": "<", "at most": "<=",
               "under": "<"}  # fmt: skip
_BEFORE_WORDS = "|".join(w.replace(" ", r"\s+") for w in _BEFORE_OPS)
_BEFORE = re.compile(
    rf"(?P<w>exactly|with|having|have|has|had|scored|scoring|scores|got|rated|published|{_BEFORE_WORDS})\s+"
    rf"(?P<n>{_SCALED}|zero)\s*(?:(?:points?|on|for|in)\s+)?$"
)


_YEAR_NAME = re.compile(r"^(?:year|yr|years|연도|년도|년)$", re.IGNORECASE)
#: A year bound written about the rows' year ("1700년 이후", "since 1700", "1990 or later", "before 1650").
_YEAR_BOUNDS = (
    (re.compile(r"(?P<n>\d{4})\s*년\s*(?P<w>이후|부터|이상|이전|까지|이하|초과|미만)"), None),
    (
        re.compile(r"\b(?:since|from)\s+(?P<n>\d{4})(?:\s+(?:on(?:wards?)?|forward))?\b|\b(?P<m>\d{4})\s+or\s+later\b"),
        ">=",
    ),
    (re.compile(r"\b(?:up\s+to|through|until)\s+(?P<n>\d{4})\b|\b(?P<m>\d{4})\s+or\s+earlier\b"), "<="),
    (re.compile(r"\bafter\s+(?P<n>\d{4})\b"), ">"),
    (re.compile(r"\bbefore\s+(?P<n>\d{4})\b"), "<"),
)
_KO_YEAR_OPS = {
    "이후": ">=",
    "부터": ">=",
    "이상": ">=",
    "이전": "<=",
    "까지": "<=",
    "이하": "<=",
    "초과": ">",
    "미만": "<",
}


def _year_filters(text: _Text, by_name: Mapping[str, Any]) -> list[Filter]:
    """A year bound on the table's one year column (an integer column named Year or 연도), as a filter; with no
    such column the number stays unread, and the question is refused naming it."""
    years = [n for n, c in by_name.items() if _YEAR_NAME.match(n.strip()) and is_numeric(c)]
    if len(years) != 1:
        return []
    found = []
    for pattern, op in _YEAR_BOUNDS:
        for match in text.find(pattern):
            number = match.group("n") or match.groupdict().get("m")
            word = match.groupdict().get("w")
            found.append(Filter(years[0], op or _KO_YEAR_OPS[str(word)], float(str(number))))
            text.take(*match.span())
    return found


_COMPARATIVE = re.compile(
    rf"\b(?P<w>older|younger|taller|shorter|heavier|lighter|faster|slower|richer|poorer)\s+than\s+(?P<n>{_NUM})"
)
_SUPERLATIVE_OF = {"older": "oldest", "younger": "youngest", "taller": "tallest", "shorter": "tallest",
                   "heavier": "heaviest", "lighter": "lightest", "faster": "fastest", "slower": "slowest",
                   "richer": "richest", "poorer": "poorest"}  # fmt: skip
_BELOW = frozenset(["younger", "shorter", "lighter", "slower", "poorer"])


def _comparative_filters(text: _Text, by_name: Mapping[str, Any]) -> list[Filter]:
    """ "older than 65": a comparison whose adjective names the measure (`age`), when one column fits it."""
    found = []
    for match in text.find(_COMPARATIVE):
        names = lx.MEASURE_ADJECTIVES[_SUPERLATIVE_OF[match.group("w")]]
        fits = [n for n, c in by_name.items() if is_numeric(c) and n.lower() in names]
        if len(fits) == 1:
            op = "<" if match.group("w") in _BELOW else ">"
            found.append(Filter(fits[0], op, _number(match.group("n"))))
            text.take(*match.span())
    return found


def _ko_op(word: str) -> str:
    if word in lx.KO_COMPARISONS:
        return lx.KO_COMPARISONS[word]
    if word.startswith("보다"):
        return ">" if re.search("많|크|큰|높|길", word) else "<"
    if word.startswith("넘"):  # "60일을 넘는": more than
        return ">"
    return "="  # 인, 이면서, 이고, 으로: the value itself


def _number(text: str) -> float:
    if text == "zero":
        return 0.0
    match = re.fullmatch(rf"({_NUM})\s*([a-z]*)", text.strip())
    digits, scale = match.groups() if match else (text, "")
    return float(digits.replace(",", "")) * _SCALES.get(scale, 1.0)


def _numeric_filters(
    text: _Text, mentions: list[_Mention], numeric: set[str], by_name: Mapping[str, Any] | None = None
) -> list[Filter]:
    """``column <op> number`` for each numeric column the question compares to a number, in English ("at least 15
    for Colour", "magnitude of 5.5 or higher", "a rating of 5", "zero articles", "a negative magnitude") and Korean
    ("`age`가 30세 이상", "0이면서")."""
    found = []
    for m in mentions:
        if m.name not in numeric:
            continue
        gloss = _GLOSS_AFTER.match(text.text, m.end)
        end = gloss.end() if gloss else m.end
        rest = text.text[end:]
        for words, op in lx.COMPARISONS:
            match = re.match(rf"{_FILLER}\s*(?:{words})\s*(?P<n>{_SCALED})", rest)
            if match:
                found.append(Filter(m.name, op, _number(match.group("n"))))
                text.take(m.end, end + match.end())
                break
        else:
            after = _after_number(rest)
            if after is not None:
                op, value, length = after
                found.append(Filter(m.name, op, value))
                text.take(m.end, end + length)
                continue
            before = _BEFORE.search(text.text[: m.start])
            if before:
                word = " ".join(before.group("w").split())
                found.append(Filter(m.name, _BEFORE_OPS.get(word, "="), _number(before.group("n"))))
                text.take(before.start(), m.start)
                continue
            sign = re.search(r"\b(?:a\s+)?(?P<s>negative|positive)\s+$", text.text[: m.start])
            if sign:  # "stars with a negative magnitude"
                found.append(Filter(m.name, "<" if sign.group("s") == "negative" else ">", 0.0))
                text.take(sign.start(), m.start)
                continue
            ko = _KO_COMPARE.match(rest)
            if ko:
                found.append(Filter(m.name, _ko_op(ko.group("w")), _number(ko.group("n"))))
                text.take(m.end, end + ko.end())
                continue
            bare = _BARE_AFTER.match(rest) or (
                re.match(rf"\s+(?P<n>{_NUM}){_NOT_A_VALUE}", rest)
                if by_name is not None and _coded(by_name[m.name])
                else None
            )  # "gender 1 and gender 2": a coded column's level
            if bare:
                found.append(Filter(m.name, "=", _number(bare.group("n"))))
                text.take(m.end, end + bare.end())
    return found


def _after_number(rest: str) -> tuple[str, float, int] | None:
    """ "of 5.5 or higher" after a name: the comparison, the number and the length read."""
    for words, op in _AFTER_NUMBER:
        match = re.match(rf"{_FILLER}\s*(?P<n>{_SCALED})\s*(?:{_UNIT}\s+)?(?:{words})", rest)  # "55 mph or more"
        if match:
            return op, _number(match.group("n")), match.end()
    return None


@dataclass
class _Ops:
    """The operation words found, by position."""

    found: list[tuple[int, str, dict[str, str]]] = field(default_factory=list)

    def names(self) -> list[str]:
        return [name for _pos, name, _g in self.found]

    def has(self, *names: str) -> bool:
        return any(n in self.names() for n in names)

    def drop(self, *names: str) -> None:
        self.found = [f for f in self.found if f[1] not in names]


def _operation_words(text: _Text) -> _Ops:
    ops = _Ops()
    for name, patterns in lx.OPERATION_WORDS.items():
        for pattern in patterns:
            for match in text.find(pattern):
                groups = {k: v for k, v in match.groupdict().items() if v}
                ops.found.append((match.start(), name, groups))
                text.take(match.start(), match.end())
                if name == "quantile":
                    _restated(text, match.end(), _quantile(groups))
    if re.search(r"\bhow\s+many\s+different\b", text.original.lower()):  # "how many different types": distinct
        ops.found = [(pos, "distinct" if name == "count" else name, g) for pos, name, g in ops.found]
    ops.found.sort()
    return ops


_SUPERLATIVE = re.compile(
    r"\b(?P<hi>highest|largest|greatest|biggest|longest|tallest|heaviest|oldest|maximum)\b|"
    r"\b(?P<lo>lowest|smallest|shortest|lightest|youngest|minimum)\b|가장\s*(?P<khi>높은|큰|많은|긴)|가장\s*(?P<klo>낮은|작은|적은|짧은)"
)
_SUPERLATIVE_GAP = (
    60  # characters from the word to the measure it describes ("highest theophylline concentration (conc)")
)


def _superlatives(text: _Text, ops: _Ops, measures: list[_Mention]) -> None:
    """ "the highest and lowest prestige", "the youngest and the oldest ages", "가장 높은 conc": a maximum or a
    minimum of the measure named next, when no other operation word stands between (so "the highest average" of a
    group question stays a group question)."""
    taken = [pos for pos, _name, _g in ops.found]
    for match in text.find(_SUPERLATIVE):
        after = [m for m in measures if 0 <= m.start - match.end() <= _SUPERLATIVE_GAP]
        if not after or any(match.end() <= pos < after[0].start for pos in taken):
            continue
        between = text.text[match.end() : after[0].start]
        if re.search(r"\d", between):  # "the top 5", "the largest 10 values": not one extreme
            continue
        high = bool(match.group("hi") or match.group("khi"))
        ops.found.append((match.start(), "max" if high else "min", {}))
        text.take(*match.span())
    ops.found.sort()


def _restated(text: _Text, end: int, q: float) -> None:
    """Read "the first quartile (25%)" or "(q = 0.25)": the quantile restated right after its name."""
    restated = r"\s*\(\s*(?:q\s*=\s*)?(?P<n>\d+(?:\.\d+)?)\s*(?P<pct>%|th\s+percentile)?\s*"
    restated += r"(?:분위수|분위|백분위수?|quantile|percentile)?\s*\)"  # "3사분위수(75% 분위수)"
    match = re.compile(restated).match(text.text, end)
    if match is not None:
        number = float(match.group("n"))
        if math.isclose(number / 100 if match.group("pct") or number > 1 else number, q):
            text.take(*match.span())


def _quantile(groups: dict[str, str]) -> float:
    if groups.get("first") or groups.get("ko1"):
        return 0.25
    if groups.get("third") or groups.get("ko3"):
        return 0.75
    for key in ("pct", "pct2", "pct3"):
        if groups.get(key):
            return float(groups[key]) / 100
    return float(groups.get("share") or groups.get("share2") or 0.5)


def _alpha(question: str) -> float | None:
    match = lx.ALPHA_RE.search(question)
    if not match:
        return None
    text = next(g for g in match.groups() if g).replace(" ", "")
    return float(text[:-1]) / 100 if text.endswith("%") else float(text)


def _first_number(pattern: re.Pattern[str], question: str) -> float | None:
    match = pattern.search(question)
    return float(next(g for g in match.groups() if g)) if match else None


_IMPLIED_DECIMALS = re.compile(
    r"\bto\s+(?P<n>[0-6])(?!\d|\.\d|%)(?!\s*(?:decimal|places|d\.p|dp|percent))(?=\s*(?:[.,;)]|$|and\b))"
)


def _decimals(question: str) -> tuple[int | None, dict[str, int], list[tuple[int, int]]]:
    """The rounding asked: the first phrase's decimals, and per part when several phrases each follow a part
    ("the slope (3 decimals), the intercept (2 decimals)")."""
    respectively = _respectively(question)
    if respectively is not None:
        return respectively
    found: list[tuple[int, int, int]] = []
    for pattern, fixed in lx.DECIMALS_PATTERNS:
        for match in pattern.finditer(question):
            if not any(match.start() < end and start < match.end() for start, end, _d in found):
                found.append((match.start(), match.end(), fixed if fixed is not None else lx.decimals_word(match)))
    if found:  # "the slope to 4 decimals and the intercept to 3": a later part's rounding, the word left out
        for match in _IMPLIED_DECIMALS.finditer(question):
            before = question[max(0, match.start() - 30) : match.start()]
            named = any(re.search(rf"(?:{pattern})\s*$", before) for _part, pattern in lx.PART_WORDS)
            if named and not any(match.start() < end and start < match.end() for start, end, _d in found):
                found.append((match.start(), match.end(), int(match.group("n"))))
    found.sort()
    if not found:
        return None, {}, []
    per_part: dict[str, int] = {}
    if len(found) > 1:
        previous = 0
        for start, end, decimals in found:
            before = question[max(previous, start - 80) : start]
            last = max(((m.end(), part) for part, pattern in lx.PART_WORDS for m in re.finditer(pattern, before)),
                       default=None)  # fmt: skip
            if last is not None:
                per_part.setdefault(last[1], decimals)
            previous = end
    return found[0][2], per_part, [(start, end) for start, end, _d in found]


_RESPECTIVELY = re.compile(r"(?P<a>\d+)\s+and\s+(?P<b>\d+)\s+decimals?(?:\s+places)?,?\s+respectively")


def _respectively(question: str) -> tuple[int | None, dict[str, int], list[tuple[int, int]]] | None:
    """ "the slope b and R² to 2 and 4 decimals respectively": each number to the part named in that order."""
    match = _RESPECTIVELY.search(question)
    if match is None:
        return None
    sentence = question[: match.start()].rsplit(".", 1)[-1]
    named = sorted((m.start(), part) for part, pattern in lx.PART_WORDS for m in re.finditer(pattern, sentence))
    order = list(dict.fromkeys(part for _pos, part in named))
    if len(order) != 2:
        return None
    first, second = int(match.group("a")), int(match.group("b"))
    return first, {order[0]: first, order[1]: second}, [match.span()]


@dataclass
class _Parts:
    """What the question names, sorted by role."""

    measures: list[str]
    categories: list[str]
    filters: list[Filter]
    levels: dict[str, list[str]]
    numeric: list[str] = field(default_factory=list)


def parse_question(question: str, profile: Mapping[str, Any], view: str | None = None) -> StatRequest | Refusal | None:
    """The catalog request ``question`` makes over the profile's table (the first, or ``view``).

    A question that reads as no request is read once more with each word that spells out an abbreviated column
    name ("magnitude" for `mag`, "concentration" for `conc`) as that column; only a request from that second
    reading counts.

    Returns:
        The request; a :class:`Refusal` naming what the catalog or the data lack; or None when the question asks
        for no statistic at all (it is left to retrieval).
    """
    try:
        found = _parse(question, profile, view)
    except (KeyError, ValueError, IndexError) as exc:  # a reading this parser has no rule for: refused, never a crash
        logger.warning("question not read into a request (%s): %r", exc, question[:200])
        return Refusal(UNREAD, "the question could not be read into a statistics request", (question[:80],))
    if isinstance(found, StatRequest) or (isinstance(found, Refusal) and found.kind == UNSUPPORTED):
        return found
    spelled = _abbreviations_named(question, profile, view)
    if spelled != question:
        again = _parse(spelled, profile, view)
        if isinstance(again, StatRequest):
            return again
    return found


_ABBREVIATION = re.compile(r"^[A-Za-z]{3,6}$")


def _abbreviations_named(question: str, profile: Mapping[str, Any], view: str | None) -> str:
    """``question`` with each word that extends exactly one short column name by three letters or more written as
    that column (`` `temp` `` for "temperature")."""
    tables = [t for t in profile.get("tables", []) if view is None or t.get("view") == view]
    if not tables:
        return question
    names = [str(c["name"]) for c in _columns(tables[0])]
    short = [n for n in names if _ABBREVIATION.match(n)]
    lowered = {n.lower() for n in names}

    def spelled(match: re.Match[str]) -> str:
        word = match.group(0).lower()
        fits = [n for n in short if word.startswith(n.lower()) and len(word) - len(n) >= 3]
        return f"`{fits[0]}`" if len(fits) == 1 and word not in lowered else match.group(0)

    return re.sub(r"(?<![`\w])[A-Za-z]{6,}(?![`\w])", spelled, question)


#: The words before a column that names the rows' unit, not a measure: "max accidents on a single day".
_UNIT_OF_ROWS = re.compile(r"\b(?:on|in|during|within)\s+(?:a\s+single|one|any\s+(?:one|single|given)|a\s+given)\s+$")
#: "일본 차만", "서울 지역만의": a Korean word the particle 만 ("only") restricts; a number's 만 ("1만") is no word.
_KO_ONLY = re.compile(r"(?<!까)[\uac00-\ud7a3]만(?:의|을|를|으로|이|은|는)?(?=[\s)?.,!]|$)")
#: A restriction of the rows said in words ("northern towns only"): with no filter read, the request would drop it.
_RESTRICTED = re.compile(
    r"\b(?:only|solely|exclusively|excluding|except)\b"
    r"(?!\s+(?:to\s+)?(?:\d+|one|two|three|four)\s+(?:decimal|dp\b|d\.p|places?|digits?|sig))"  # "only 2 decimals"
)


def _parse(question: str, profile: Mapping[str, Any], view: str | None) -> StatRequest | Refusal | None:
    tables = [t for t in profile.get("tables", []) if view is None or t.get("view") == view]
    if not tables:
        return None
    table = tables[0]
    columns = _columns(table)
    language = "ko" if re.search(r"[\uac00-\ud7a3]", question) else "en"
    text = _Text(question, _normal(question))
    mentions, ambiguous = _column_mentions(text, columns)
    mentions = _described(text, mentions, {str(c["name"]) for c in columns if is_numeric(c)})
    mentions = sorted(mentions + _plural_mentions(text, columns), key=lambda m: (m.start, m.name))
    mentions = sorted(mentions + _adjective_mentions(text, columns, mentions), key=lambda m: (m.start, m.name))
    lowered = _normal(question)
    mentions = [m for m in mentions if not _UNIT_OF_ROWS.search(lowered[: m.start])]
    _take_measure_periods(text, mentions, table)
    weak = _weak_mentions(text, columns)
    terms = sorted((m.span() for p in lx.UNSUPPORTED_WORDS for m in text.find(p)), key=lambda span: span[0])
    if re.search(r"\bregress|회귀", text.text):  # "a regression predicting Y from X", "one predictor": its roles
        terms = [t for t in terms if not re.match(r"predict|예측", text.text[t[0] : t[1]])]
    if terms:
        found = [_whole_term(question, *span) for span in terms]
        named = tuple({t.casefold(): t for t in reversed(found)}[k] for k in dict.fromkeys(t.casefold() for t in found))
        listed = ", ".join(f"'{n}'" for n in named)
        return Refusal(UNSUPPORTED, f"the statistics catalog has no operation for {listed}", named)
    if ambiguous:
        return ambiguous[0]
    decimals, per_part, spans = _decimals(text.text)
    for start, end in spans:
        text.take(start, end)
    by_name = {str(c["name"]): c for c in columns}
    numeric = {n for n, c in by_name.items() if is_numeric(c)}
    filters = list(
        dict.fromkeys(_numeric_filters(text, mentions, numeric, by_name) + _value_filters(text, columns, mentions))
    )
    filters += _year_filters(text, by_name) + _comparative_filters(text, by_name)
    filters += _verb_filters(text, weak, by_name, filters)
    for pattern in (lx.ZTHRESHOLD_RE, lx.IQR_FACTOR_RE, lx.ALPHA_RE, lx.STRONG_RE, lx.IGNORE_MISSING_RE, lx.DDOF_RE):
        for match in text.find(pattern):
            text.take(*match.span())
    ops = _operation_words(text)
    groups = {m.name for m in mentions if not is_numeric(by_name[m.name]) or by_name[m.name].get("role") == "category"}
    asks_which = _asks_which(_normal(question), mentions, groups)
    extreme = asks_which and (lx.HIGH_RE.search(text.text) or lx.LOW_RE.search(text.text))
    grouping = groups - {f.column for f in filters}  # "(status = A)" filters, it groups nothing
    if not asks_which or not (grouping or re.search(r"\b(?:which|who)\b|어느|어떤|누구", text.original.lower())):
        _superlatives(text, ops, [m for m in mentions if m.name in numeric])  # "what's the highest conc"
    missing = _glossed(text, columns) or _missing_column(text, columns)
    if missing is not None:
        return missing
    if not ops.found and not extreme:
        plain = _plain_measure(_normal(question), mentions, filters, by_name)
        if plain is not None:
            parts = _roles(mentions, filters, by_name)
            return _finish(question, text, [plain], parts, decimals, "value", language, table)
        return _no_operation(text, mentions)
    if not mentions and filters and ops.names() == ["count"] and _counts_rows(text, table, anywhere=True):
        return _finish(question, text, [Step("count", ())], _roles([], filters, by_name), decimals, "value",
                       language, table)  # fmt: skip
    if not mentions:  # "how many were Category 5": a number no column reads names what the data lack
        if ops.names() == ["count"] and not filters and _counts_rows(text, table):
            return _finish(question, text, [Step("count", ())], _roles([], [], by_name), decimals, "value",
                           language, table)  # fmt: skip
        return _unknown_operand(text, ops) or (_leftover(text, _known_numbers([], filters)) if ops.found else None)
    built = _build(question, text, ops, mentions, filters, by_name, decimals, language, table)
    if isinstance(built, StatRequest):  # every path, tests and correlations too: no number left unread
        known = _known_numbers(built.steps, built.filters, int(table.get("rows") or 0))
        built = (
            _leftover(text, known)
            or _unread_restriction(text, built.steps, built.filters)
            or _grouped_measure(lowered, mentions, built)
            or _against_a_statistic(lowered)
            or _unread_weak(text, weak, built)
            or built
        )
    if isinstance(built, StatRequest) and per_part:
        return replace(built, part_decimals=tuple(sorted(per_part.items())))
    return built


_MEASURE_PERIOD = re.compile(r"\b(?:daily|weekly|monthly|quarterly|yearly|annual)\s+`?$")


def _take_measure_periods(text: _Text, mentions: list[_Mention], table: Mapping[str, Any]) -> None:
    """ "average annual passengers" in a table with no time axis: the period is the unit the column is stored in
    (each row's passengers a year), not a filter or a grain, since no column could make one."""
    if table.get("time_axis"):
        return
    for m in mentions:
        period = _MEASURE_PERIOD.search(text.text[: m.start])
        if period:
            text.take(period.start(), period.end())


_ROW_NOUNS = frozenset(["row", "record", "entry", "observation", "case", "sample"])
_COUNTED = re.compile(r"\b(?:how\s+many|number\s+of)\s+(?:the\s+)?(?P<n>[^\W\d_][\w-]*)|몇\s*행|행\s*수")
_KO_COUNTED = re.compile(r"몇\s*(?:명|개|건|곳|가구)")  # with a condition: "1970년 이후 수술받은 환자는 몇 명"
_THERE = re.compile(
    r"^\s*(?:are\s+there|(?:does|do|is)\s+(?:the|this)\s+(?:table|data(?:set)?)\s+(?:have|hold|contain)|"
    r"(?:in|does)\s+(?:the|this)\s+(?:table|data(?:set)?)|(?:were|are)\s+(?:recorded|listed))?\s*\??\s*$"
)


def _counts_rows(text: _Text, table: Mapping[str, Any], *, anywhere: bool = False) -> bool:
    """Whether a count that names no column counts the table's rows: "how many rows are there", "몇 행", or "how many
    trainees are there" where the table names its rows so (a column "Trainee ID", the file "trainees.csv").
    ``anywhere``: the count has a condition ("how many records are older than 65"), so nothing need follow."""
    q = _normal(text.original)  # the count words are read (blanked) by now
    match = _COUNTED.search(q)
    if match is None:
        return anywhere and _KO_COUNTED.search(q) is not None
    noun = match.group("n")
    if noun is None:
        return True
    if not anywhere and not _THERE.match(q[match.end() :]):
        return False  # "how many trainees passed": a condition the catalog cannot read
    singular = {noun, noun[:-1], noun[:-2], noun[:-3] + "y"} if noun.endswith("s") else {noun}
    if singular & _ROW_NOUNS:
        return True
    names = [str(table.get(k) or "") for k in ("view", "file", "sheet")] + [str(c.get("name")) for c in _columns(table)]
    words = {w for name in names for w in re.findall(r"[a-z]+", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).lower())}
    return any(len(word) >= 3 and word in words for word in singular)


def _plain_measure(q: str, mentions: list[_Mention], filters: list[Filter], by_name: Mapping[str, Any]) -> Step | None:
    """ "What is the Amount for Gender F?", "Amount는 얼마?": an additive measure asked with no operation word is its
    total (the profile's aggregation says so); any other measure is left to the report's words."""
    filtered = {f.column for f in filters}
    asked = [m for m in mentions if m.name not in filtered]
    if len({m.name for m in asked}) != 1 or by_name[asked[0].name].get("aggregation") != "sum":
        return None
    m = asked[0]
    before = re.search(r"(?:\bwhat\s+(?:is|was|were|are)|\bwhat's|\bhow\s+much(?:\s+(?:is|was))?)\s+(?:the\s+)?$",
                       q[: m.start])  # fmt: skip
    after = re.match(r"\s*(?:은|는|이|가|의)?\s*(?:모두\s*)?얼마", q[m.end :])
    return Step("sum", (m.name,)) if before or after else None


def _no_operation(text: _Text, mentions: list[_Mention]) -> Refusal | None:
    match = _OF_PHRASE.search(text.text)
    if match and mentions:
        words = match.group("op").split()
        while words and (words[0] in _GENERIC or not re.search(r"[a-z]{3}", words[0])):
            words.pop(0)
        while words and (words[-1] in _GENERIC or not re.search(r"[a-z]{3}", words[-1])):
            words.pop()
        phrase = " ".join(words)  # "distance from earth": the inner words kept
        if phrase:  # unknown to the lexicon: another route (the analysis catalog) may still express it
            return Refusal(UNEXPRESSED, f"the statistics catalog has no operation for '{phrase}'", (phrase,))
    return None


_STOPS = r"(?:for|of|in|per|by|with|among|across|where|when|at|from|to|and|or|is|are|was|were|has|have)"


def _unknown_operand(text: _Text, ops: _Ops) -> Refusal | None:
    """The name after an operation word ("the mean of temperature") when the question names no column at all."""
    korean = re.search(r"[\uac00-\ud7a3]", text.original) is not None
    for pos, name, _groups in ops.found:
        if name in ("count",):
            continue
        if korean:  # "환자들의 CD4 세포 수 평균": the operand comes before the operation word, or after it
            operand = _ko_operand(text.original[:pos]) or _ko_operand_after(text.original[pos:])
            if operand:
                return Refusal(MISSING_COLUMN, f"the data have no column '{operand}'", (operand,))
            continue
        match = re.compile(r"\s*(?:of|for|in)\s+(?:the\s+)?(?P<n>[^\W\d][\w-]*(?:\s+[^\W\d][\w-]*)?)").match(
            text.text, pos + 1
        )
        if match is None:
            match = re.compile(r"\S*\s*(?:of|for|in)\s+(?:the\s+)?(?P<n>[^\W\d][\w-]*)").match(text.text, pos)
        if match is None:  # "the average player salary for each team": the words up to a preposition
            match = re.compile(rf"\S*\s+(?P<n>[^\W\d][\w-]*(?:\s+(?:to\s+)?(?!{_STOPS}\b)[a-z][\w-]*){{0,2}})").match(
                text.text, pos
            )
        if match:
            words = text.original[match.start("n") : match.end("n")].split()
            while words and words[0].lower() in _GENERIC:  # "days on market" keeps its inner words
                words.pop(0)
            while words and words[-1].lower() in _GENERIC:
                words.pop()
            if words:
                phrase = " ".join(words)
                return Refusal(MISSING_COLUMN, f"the data have no column '{phrase}'", (phrase,))
    return None


def _ko_operand(before: str) -> str:
    """The words naming what a Korean operation word applies to: up to three words before it, after the last one
    that owns them ("환자들의 CD4 세포 수" -> "CD4 세포 수"), its particle dropped."""
    words = before.split()[-3:]
    owner = max((i for i, w in enumerate(words) if w.endswith("의")), default=-1)
    words = [w for w in words[owner + 1 :] if w not in _GENERIC]
    if words:
        words[-1] = re.sub(rf"(?:{lx.KO_PARTICLES})$", "", words[-1]) or words[-1]
    return " ".join(words).strip()


def _ko_operand_after(rest: str) -> str:
    """ "평균 FICO 신용점수는": the words after the operation word, up to the one a particle ends."""
    words = rest.split()[1:4]
    for i, word in enumerate(words):
        stripped = re.sub(r"(?:은|는|이|가|을|를)$", "", word)
        if stripped != word:
            return " ".join([*words[:i], stripped]).strip()
    return ""


def _roles(mentions: list[_Mention], filters: list[Filter], by_name: Mapping[str, Any]) -> _Parts:
    filtered = {f.column for f in filters}
    seen = list(dict.fromkeys(m.name for m in mentions))
    measures = [n for n in seen if is_numeric(by_name[n]) and n not in filtered]
    categories = [n for n in seen if not is_numeric(by_name[n]) and n not in filtered]
    levels: dict[str, list[str]] = {}
    for f in filters:
        if f.op == "=" and isinstance(f.value, str):
            levels.setdefault(f.column, []).append(f.value)
        elif f.op == "=" and _coded(by_name[f.column]):  # "smoke = 1 minus smoke = 0": groups of a 0/1 column
            label = _level_label(float(f.value), by_name[f.column])
            if label not in levels.get(f.column, []):
                levels.setdefault(f.column, []).append(label)
    return _Parts(measures, categories, filters, levels, [n for n in seen if is_numeric(by_name[n])])


def _coded(col: Mapping[str, Any]) -> bool:
    """Whether a numeric column codes a few groups (0/1, grades 1-3) rather than measuring."""
    return is_numeric(col) and 0 < int(col.get("distinct") or 99) <= _FEW_LEVELS


def _level_label(value: float, col: Mapping[str, Any]) -> str:
    """A numeric group's label as the data's text reads it (an integer column's 1 is "1", a float's "1.0")."""
    return (
        str(int(value)) if str(col.get("dtype", "")).startswith(("int", "uint")) and value.is_integer() else str(value)
    )


def _build(
    question: str, text: _Text, ops: _Ops, mentions: list[_Mention], filters: list[Filter],
    by_name: Mapping[str, Any], decimals: int | None, language: str, table: Mapping[str, Any],
) -> StatRequest | Refusal | None:  # fmt: skip
    q = _normal(question)
    parts = _roles(mentions, filters, by_name)
    asking = _verdict_sentence(q, language)
    verdict = asking is not None
    steps: list[Step] = []
    group_cols = [c for c in parts.categories] + [m for m in parts.measures if by_name[m].get("role") == "category"]
    group_cols += _which_coded(q, mentions, parts, by_name) if not group_cols else []
    which = _asks_which(q, mentions, set(group_cols)) and bool(lx.HIGH_RE.search(q) or lx.LOW_RE.search(q))
    if which and not group_cols and ops.has("max", "min"):
        which = False  # "what are the highest and lowest prestige scores": the extremes themselves
    if ops.has("outliers") or ops.has("zscore_outliers"):
        op = "zscore_outliers" if ops.has("zscore_outliers") else "iqr_outliers"
        ops.drop("outliers", "zscore_outliers", "iqr", "count", "std")
        params = {"threshold": _first_number(lx.ZTHRESHOLD_RE, q)} if op == "zscore_outliers" else {
            "k": _first_number(lx.IQR_FACTOR_RE, q)}  # fmt: skip
        steps += [Step(op, (m,)).with_params(**params) for m in parts.measures[:1]]
    coded = [m for m in parts.measures if _coded(by_name[m]) and m not in group_cols]  # smoke (0/1) × low (0/1)
    if ops.has("ttest", "anova") or (ops.has("chi2") and len(group_cols) + len(parts.levels) + len(coded) >= 2):
        return _test(q, text, ops, parts, decimals, language, verdict, table)
    if ops.has("pearson", "spearman", "kendall", "correlation"):
        return _correlation(q, ops, parts, decimals, language, verdict, table)
    if ops.has("regression"):
        return _regression(q, parts, decimals, language, table)
    if ops.has("normality") and not steps:
        show = ["verdict"] + (["p_value"] if lx.P_VALUE_RE.search(q) else [])
        show += ["statistic"] if lx.STATISTIC_RE.search(q) else []
        alpha = _alpha(q)
        steps += [Step("normality", (m,), show=tuple(show)).with_params(alpha=alpha) for m in parts.measures[:1]]
        if not steps:
            return None
        ops.drop("normality")  # "the sample variance to 3 decimals, and is it normal?": every part asked
        others = [s for s in _simple_steps(q, ops, parts, text, by_name) if s.op != "normality"]
        return _request(others + steps, parts, decimals, "verdict", language, table)
    if which and group_cols:
        _column_words(q, ops, parts.numeric)
        group_cols = _head_group(group_cols, mentions, q)
        return _group_extreme(q, text, ops, parts, group_cols, decimals, language, table)
    if which:
        unnamed = _unnamed_group(text)
        if unnamed is not None:  # "which class type has the highest ...": never the measure's own statistic
            return unnamed
        asked = re.search(r"\b(?:which|who)\b(?:\s+(?P<n>[^\W\d][\w'-]*(?:\s+[^\W\d][\w'-]*)?))?|어느|어떤|누구", q)
        if asked:  # "which party's voters give ... the highest": a group no column makes; never a value instead
            noun = " ".join(w for w in (asked.group("n") or "").split() if w not in _GENERIC) or "group"
            return Refusal(MISSING_COLUMN, f"the question asks which {noun}, but no column of the data makes those "
                                           "groups", (noun,))  # fmt: skip
    steps += _simple_steps(q, ops, parts, text, by_name)
    if ops.has("iqr", "range") and not any(s.op in ("quantile", "min", "max") for s in steps):
        what = "interquartile range" if ops.has("iqr") else "range"
        return Refusal(UNSUPPORTED, f"the statistics catalog has no operation for the {what} as one number (ask for "
                                    "the quartiles, or the minimum and the maximum)", (what,))  # fmt: skip
    if not steps and not parts.measures and any(operation(n).kind == "one" for n in ops.names() if n in OPERATIONS):
        return _unknown_operand(text, ops)  # "the average player salary for each team": the data lack it
    if not steps:
        return None
    return _finish(question, text, steps, parts, decimals, "verdict" if verdict else "value", language, table)


_WHICH_BEFORE = re.compile(r"\b(?:which|what)\s+(?:[^\W\d][\w-]*\s+){0,2}\(?\s*`?$")


def _which_coded(q: str, mentions: list[_Mention], parts: _Parts, by_name: Mapping[str, Any]) -> list[str]:
    """ "Which generation (gen) has the heaviest mice?": a numeric column of a few levels named right after
    "which" is the groups asked about, not a measure."""
    for m in mentions:
        if m.name in parts.measures and _coded(by_name[m.name]) and _WHICH_BEFORE.search(q[: m.start]):
            parts.measures.remove(m.name)
            return [m.name]
    return []


_NAMED_BEFORE = re.compile(r"\s+(?:with|having|that\s+(?:has|had|have|shows?|gets?|got))\s+(?:the\s+)?$")
_NAMED_AFTER = 8  # "가장 높은 매체": the characters between the extreme word and the group it names


def _asks_which(q: str, mentions: list[_Mention], groups: set[str]) -> bool:
    """Whether the question asks for a group rather than a value: "which"/"what", or a group column named next to
    the extreme word ("the Category with the highest total", "광고비용 합계가 가장 큰 매체는")."""
    if lx.WHICH_RE.search(q):
        return True
    named = [m for m in mentions if m.name in groups]
    for pattern in (lx.HIGH_RE, lx.LOW_RE):
        for hit in pattern.finditer(q):
            if any(0 <= m.start - hit.end() <= _NAMED_AFTER and re.search(r"[\uac00-\ud7a3]", q) for m in named):
                return True
            if any(m.end <= hit.start() and _NAMED_BEFORE.search(q[m.end : hit.start()]) for m in named):
                return True
    return False


_WHICH_NOUN = re.compile(
    r"\b(?:which|what)\s+(?P<n>(?:[^\W\d][\w-]*\s+){0,2}?[^\W\d][\w-]*)\s+(?:has|have|had|is|are|was|were|"
    r"shows?|gets?|got|scores?|records?)\b|(?:어느|어떤)\s*(?P<k>\S+)"
)


def _head_group(group_cols: list[str], mentions: list[_Mention], q: str) -> list[str]:
    """ "which item type has ...": of two group columns named side by side, the last is the head noun (`type`),
    the first modifies it."""
    spans = sorted((m for m in mentions if m.name in group_cols), key=lambda m: m.start)
    for first, second in zip(spans, spans[1:], strict=False):
        if not q[first.end : second.start].strip() and first.name != second.name:
            return [second.name, *(c for c in group_cols if c not in (first.name, second.name))]
    return group_cols


def _unnamed_group(text: _Text) -> Refusal | None:
    """The groups "which <noun>" asks about when no column names them ("which class type", "어느 산업")."""
    match = _WHICH_NOUN.search(text.text)
    if match is None:
        return None
    group = "n" if match.group("n") else "k"
    phrase = text.original[match.start(group) : match.end(group)].strip()
    words = [w for w in phrase.split() if w.lower() not in _GENERIC]
    if not words or not phrase.strip():
        return None
    named = " ".join(words)
    return Refusal(MISSING_COLUMN, f"the data have no column '{named}' to group by", (named,))


def _verdict_sentence(q: str, language: str) -> str | None:
    """The sentence that asks a yes/no ("Is it significant at α = 0.05?"), or None. Of several, the one asking
    significance: "Test whether A and B are independent ... Is it significant?" is answered yes when it is."""
    asking: list[str] = []
    for pieces in (r"(?<=[?.!])\s+|(?<=[?])", r"(?<=[?.!])\s+|(?<=[?])|,\s+"):  # then "얼마이며(…), 유의한가요?"
        asking = [s for s in re.split(pieces, q)
                  if lx.VERDICT_RE.search(s) and not (language == "ko" and lx.KO_AMOUNT_RE.search(s))]  # fmt: skip
        if asking or language != "ko":
            break
    return next((s for s in asking if lx.SIGNIFICANT_RE.search(s)), asking[0] if asking else None)


def _inverted(q: str, language: str) -> bool:
    """Whether the yes/no asks the other way round ("are they independent?": yes means not significant)."""
    sentence = _verdict_sentence(q, language) or ""
    return bool(lx.INVERTED_RE.search(sentence)) and not lx.SIGNIFICANT_RE.search(sentence)


def _column_words(q: str, ops: _Ops, measures: list[str], compared: set[str] | None = None) -> None:
    """Drop "share of `women`" and "number of `Suicides`": words that name a numeric column, not an operation. A
    count of a column compared with a value ("how many smokers (smoke = 1)") counts rows."""
    for pos, name, _groups in list(ops.found):
        if name in ("share", "count"):
            named_here = [m for m in measures if name != "count" or m not in (compared or set())]
            after = q[pos:]
            unit = name == "share" and re.search(r"\d\s*$", q[:pos])  # "above 50 percent": a unit, not a share
            words = r"(?:\s+(?!rows?\b|records?\b|entries\b|cases\b|with\b|where\b|have\b|has\b)[\w-]+){0,3}?"
            named = rf"\S+(?:\s+of)?(?:\s+the)?{words}\s*\(?\s*`?"
            if unit or any(re.match(named + _name_pattern(m), after) for m in named_here):
                ops.found = [f for f in ops.found if f[0] != pos]


def _simple_steps(q: str, ops: _Ops, parts: _Parts, text: _Text, by_name: Mapping[str, Any]) -> list[Step]:
    """One-column operations (and counts), each applied to the measures named after it (or before it)."""
    _column_words(q, ops, parts.numeric, {f.column for f in parts.filters})
    names = ops.names()
    if "distinct" in names or "missing" in names:
        ops.drop("count")
    together = "share" in names and "count" in names and bool(parts.filters)  # "how many ..., and what share"
    if "share" in names and not together:
        ops.drop("count")
    if ("share" in names or "count" in names) and not parts.filters and not {"distinct", "missing"} & set(names):
        _yes_of_a_yes_no(parts, by_name)  # "what percentage of respondents smoke": `smoke` = Yes
    condition = tuple(parts.filters) if together else None
    steps: list[Step] = []
    for index, (pos, name, groups) in enumerate(ops.found):
        if name not in OPERATIONS:  # "iqr" and "range" are read, never computed as one number
            continue
        nxt = ops.found[index + 1][0] if index + 1 < len(ops.found) else len(q) + 1
        if name in ("count", "share"):
            if not any(step.op == name for step in steps):  # "what share ... (percent)": one share asked
                steps.append(_count_step(name, parts, condition))
            continue
        if name in ("distinct", "missing"):  # "how many distinct subjects, and how many distinct weights (Wt)"
            cols = parts.categories + parts.measures
            named = [c for c in cols if _between(c, text, pos, nxt)]
            prev = ops.found[index - 1][0] if index else 0  # "A와 B의 결측치": the columns named before it
            before = [c for c in cols if _between(c, text, prev, pos)]
            steps += [Step(name, (c,)) for c in (named or before or cols[:1])]
            continue
        cols = [c for c in parts.measures if _between(c, text, pos, nxt)] or parts.measures
        op = name
        params: dict[str, Any] = {}
        if name == "quantile":
            params["q"] = _quantile(groups)
        if name in ("std", "var") and lx.POPULATION_RE.search(q):
            params["ddof"] = 0
        for col in cols:
            steps.append(Step(op, (col,)).with_params(**params))
    return list(dict.fromkeys(steps))


def _yes_of_a_yes_no(parts: _Parts, by_name: Mapping[str, Any]) -> None:
    """A share or count of one yes/no column named bare ("what percentage smoke") counts the rows where it holds."""
    for name in list(parts.categories):
        values = {v.lower(): v for v in _category_values(by_name[name])}
        pair = next((p for p in _YES_NO if set(values) == p), None)
        if pair is not None and len(parts.categories) == 1:
            yes = next(v for v in pair if v in ("yes", "true", "y"))
            parts.filters.append(Filter(name, "=", values[yes]))
            parts.categories.remove(name)


def _between(column: str, text: _Text, start: int, end: int) -> bool:
    original = _normal(text.original)
    plural = _name_pattern(column, plural=True)  # "how many distinct ratings" names `rating`
    return any(start <= m.start() < end for m in re.finditer(plural, original))


def _count_step(name: str, parts: _Parts, shared: tuple[Filter, ...] | None = None) -> Step:
    """A count, or a share of the rows with the question's condition. A count asked with a share
    (``shared``) counts the rows with that same condition, which then filters neither."""
    if shared is not None:
        parts.filters.clear()
        return Step(name, (), params=(("where", tuple(tuple(f.to_json()) for f in shared)),))
    if name == "share":
        condition = tuple(parts.filters)
        parts.filters.clear()
        return Step("share", (), params=(("where", tuple(tuple(f.to_json()) for f in condition)),))
    return Step("count", ())


def _request(steps: list[Step], parts: _Parts, decimals: int | None, form: str, language: str,
             table: Mapping[str, Any]) -> StatRequest:  # fmt: skip
    view = table.get("view")
    return StatRequest(tuple(steps), tuple(parts.filters), decimals, form, str(view) if view else None, language)


def _finish(question: str, text: _Text, steps: list[Step], parts: _Parts, decimals: int | None, form: str,
            language: str, table: Mapping[str, Any]) -> StatRequest | Refusal | None:  # fmt: skip
    leftover = _leftover(text, _known_numbers(steps, parts.filters, int(table.get("rows") or 0)))
    leftover = leftover or _unread_restriction(text, steps, parts.filters)
    if leftover is not None:
        return leftover
    used = {c for step in steps for c in (*step.columns, step.group)} | {f.column for f in parts.filters}
    used |= {c for step in steps for f in step.param("where") or () for c in f[:1]}
    unused = [c for c in [*parts.measures, *parts.categories] if c not in used]
    if unused:  # "the average revenue by channel": a breakdown the request would drop
        named = ", ".join(f"`{c}`" for c in unused)
        return Refusal(UNEXPRESSED, f"the question also names {named}, which no catalog operation uses", tuple(unused))
    for step in steps:
        op = operation(step.op) if step.op in OPERATIONS else None
        if op is not None and op.kind == "one" and not step.columns:
            return None
    if form == "verdict":
        # a yes/no question of a plain statistic ("is the mean above 3?") is beyond the catalog
        return Refusal(UNREAD, "a yes/no comparison of a statistic with a value", ("yes/no comparison",))
    return _request(steps, parts, decimals, form, language, table)


_PERCENT_AFTER = re.compile(r"\s*(?:%|percent\b|per\s+cent\b|퍼센트)")


def _leftover(text: _Text, known: set[float]) -> Refusal | None:
    """A constraint nothing read: a period, a quoted value, a number (other than one a filter already holds)."""
    period = lx.PERIOD_RE.search(text.text)
    if period:
        phrase = text.original[period.start() : period.end()]
        return Refusal(UNEXPRESSED, f"a period filter ('{phrase}') the statistics catalog cannot express", (phrase,))
    quoted = _QUOTED.search(text.text)
    if quoted:
        value = next(g for g in quoted.groups() if g)
        return Refusal(MISSING_COLUMN, f"no column holds the value '{value}'", (value,))
    for number in _NUMBER.finditer(text.text):
        phrase = text.original[number.start() : number.end()]
        value = float(phrase.replace(",", "").replace("−", "-"))
        if value in known:
            continue  # "fewer than 50 murders (`total` < 50)": the filter restated
        if _PERCENT_AFTER.match(text.original, number.end()) and round(value / 100, 12) in known:
            continue  # "more than 30% of the vote (v3 > 0.3)": the same bound as a share
        said = _context(text.original, number.start(), number.end())
        return Refusal(UNREAD, f"the number {phrase} in the question ('{said}'), which the request cannot express",
                       (phrase, said))  # fmt: skip
    return None


#: The words that make the column after them a breakdown: "the average mpg per year", "for each origin".
_GROUPED_BY = re.compile(r"\b(?:per|by|for\s+each|each|every|across)\s+(?:the\s+)?(?:different\s+)?`?$")
#: A threshold that is itself a statistic: "above the mean", "above-average", "평균보다 높은".
_AGAINST_A_STATISTIC = re.compile(
    r"\b(?:above|below|over|under|higher\s+than|lower\s+than|more\s+than|less\s+than|greater\s+than)"
    r"[\s-]+(?:the\s+)?(?:overall\s+)?(?:mean|average|median)\b|\b(?:above|below)-average\b|"
    r"(?:평균|중앙값)\s*(?:보다|이상|이하|초과|미만)"
)


_DESCRIPTIVE = frozenset(["mean", "sum", "median", "std", "var", "min", "max", "quantile", "skew", "kurtosis"])


def _grouped_measure(q: str, mentions: list[_Mention], request: StatRequest) -> Refusal | None:
    """ "the average mpg per year": a number column named as the breakdown is never a second measure."""
    grouped = {m.name for m in mentions if _GROUPED_BY.search(q[: m.start])}
    measured = [c for step in request.steps if step.op in _DESCRIPTIVE for c in step.columns if c in grouped]
    if not measured:
        return None
    return Refusal(UNEXPRESSED, f"a breakdown by `{measured[0]}` (one value per group), which this request does not "
                   "express", (measured[0],))  # fmt: skip


def _against_a_statistic(q: str) -> Refusal | None:
    """ "How many cars have mpg above the mean?": the rows compared with a statistic of their own column."""
    match = _AGAINST_A_STATISTIC.search(q)
    if match is None:
        return None
    said = match.group(0)
    return Refusal(UNREAD, f"a comparison with a statistic ('{said}'), which the request cannot express", (said,))


def _unread_restriction(
    text: _Text, steps: list[Step] | tuple[Step, ...], filters: list[Filter] | tuple[Filter, ...]
) -> Refusal | None:
    """ "mortality std dev, northern towns only" with no filter read, or "excluding retirees" with no filter read
    from it: the rows the question keeps are unread."""
    excluded = _EXCLUDED_UNREAD.search(text.text)
    if excluded is not None:
        said = _context(text.original, excluded.start(), excluded.end())
        return Refusal(UNREAD, f"the question leaves out some rows ('{said}'), which the request does not read",
                       (said,))  # fmt: skip
    if filters or any(step.param("where") for step in steps):
        return None
    match = next((m for m in text.find(_RESTRICTED) if _RESTRICTED.match(_normal(text.original), m.start())), None)
    match = match or _KO_ONLY.search(text.text)
    if match is None:
        return None
    said = _context(text.original, match.start(), match.end())
    return Refusal(UNREAD, f"the question keeps only some rows ('{said}'), which the request does not read", (said,))


def _known_numbers(
    steps: list[Step] | tuple[Step, ...], filters: list[Filter] | tuple[Filter, ...], rows: int = 0
) -> set[float]:
    """The numbers the request holds as filter values (a question may restate one), and the numbers its columns'
    names hold: "2014년 달러 기준 `BaseDam2014`", "2004년 `Gdiam04`" gloss the name, they filter nothing."""
    known = {float(f.value) for f in filters if not isinstance(f.value, str)}
    known |= {float(f[2]) for step in steps for f in step.param("where") or () if not isinstance(f[2], str)}
    known |= {float(rows)} if rows else set()  # "across all 48 samples": the table's own size restated
    names = [c for step in steps for c in (*step.columns, step.group or "")] + [f.column for f in filters]
    for digits in (d for name in names for d in re.findall(r"\d+", name)):
        known.add(float(digits))
        if len(digits) == 2:  # a year by its last two digits
            known |= {1900.0 + int(digits), 2000.0 + int(digits)}
    return known


def _context(question: str, start: int, end: int) -> str:
    """A number with the words either side of it ("were Category 5 on"), as the refusal names it."""
    before = re.search(r"(?:\S+\s+){0,2}$", question[:start])
    after = re.match(r"(?:\s*[^\s,.;?!()]+){0,2}", question[end:])
    head = before.group(0) if before else ""
    return (head + question[start:end] + (after.group(0) if after else "")).strip()


def _group_extreme(q: str, text: _Text, ops: _Ops, parts: _Parts, group_cols: list[str], decimals: int | None,
                   language: str, table: Mapping[str, Any]) -> StatRequest | Refusal | None:  # fmt: skip
    high = lx.HIGH_RE.search(q)
    low = lx.LOW_RE.search(q)
    op = "group_max" if high and (not low or high.start() < low.start()) else "group_min"
    names = ops.names()
    measure = next((m for m in parts.measures if m != group_cols[0]), None)  # the measure is never the group
    if measure is None and {"mean", "sum", "median"} & set(names):  # "the highest average seat count"
        return _unknown_operand(text, ops) or Refusal(MISSING_COLUMN, "the question names no column to aggregate",
                                                      ("column",))  # fmt: skip
    if "mean" in names:
        agg = "mean"
    elif "sum" in names:
        agg = "sum"
    elif "median" in names:
        agg = "median"
    elif measure is None:  # "the most rows" counts; "sells the most" names no measure: the report's words answer
        agg = "count"
        if "count" not in names and not lx.ENTITY_COUNT_RE.search(q):
            return None
    elif _stored_rate(measure, table):
        return None  # a group's ROAS is its total revenue over its total cost, which the report computes
    elif _ONE_ROW.search(q):  # "가장 짧은 잎 하나는 어느 지역", "the single shortest leaf": one row's own value
        agg = "max" if op == "group_max" else "min"
    else:
        agg = _default_agg(op, measure, group_cols[0], table)
    step = Step(op, (measure,) if measure else (), group_cols[0], show=("group", "value")).with_params(agg=agg)
    return _request([step], parts, decimals, "name", language, table)


_ONE_ROW = re.compile(
    r"(?<![가-힣])하나(?:는|가|의)?(?![가-힣])|한\s*(?:개|명|건|그루|마리)(?:는|가|의)?\s|\bsingle\b|\bindividual\b"
)


def _stored_rate(column: str, table: Mapping[str, Any]) -> bool:
    """Whether ``column`` stores a rate the profile knows as a ratio of two columns (``ROAS`` = revenue / cost)."""
    names = {str(pair.get(k) or "").casefold() for pair in table.get("rate_pairs") or () for k in ("key", "label")}
    return column.casefold() in names


def _default_agg(op: str, measure: str, group: str, table: Mapping[str, Any]) -> str:
    """How "which X has the highest Y" aggregates Y when it says not: a row's own value when X names (almost) every
    row ("which state", one row each), else the total of an additive measure ("which category has the lowest
    revenue"), else the average."""
    rows = int(table.get("rows") or 0)
    if rows and int(table_col(table, group).get("distinct") or 0) >= 0.9 * rows:
        return "max" if op == "group_max" else "min"
    return "sum" if table_col(table, measure).get("aggregation") == "sum" else "mean"


def _asks_statistic(q: str, text: _Text) -> bool:
    """Whether the test statistic is asked: by name, or by its symbol ("t and p", "F", "χ²"); a symbol is read
    where values and operation words are blanked, so `sex` = 'F' or "t-test" is no statistic."""
    chi = re.search(r"χ\s*²|\bχ2\b", q) and lx.STATISTIC_SYMBOL_RE.search(q)
    return bool(lx.STATISTIC_RE.search(q) or lx.STATISTIC_SYMBOL_RE.search(text.text) or chi)


def _test(q: str, text: _Text, ops: _Ops, parts: _Parts, decimals: int | None, language: str, verdict: bool,
          table: Mapping[str, Any]) -> StatRequest | Refusal | None:  # fmt: skip
    alpha = _alpha(q)
    show = ["verdict"] if verdict or lx.SIGNIFICANT_RE.search(q) or not lx.P_VALUE_RE.search(q) else []
    show += ["p_value"] if lx.P_VALUE_RE.search(q) else []
    show += ["statistic"] if _asks_statistic(q, text) else []
    invert = _inverted(q, "ko" if re.search(r"[\uac00-\ud7a3]", q) else "en")
    if ops.has("chi2") and not ops.has("ttest", "anova"):
        coded = [m for m in parts.measures if _coded(table_col(table, m))]
        paired = [c for c, levels in parts.levels.items() if len(levels) >= 2]
        # one level named ("for the death records (etype = 2)") filters the rows; it is a variable only when needed
        single = [c for c in parts.levels if c not in paired]
        cats = list(dict.fromkeys([*parts.categories, *paired, *coded, *single]))
        if len(cats) < 2:
            return None
        parts.filters[:] = [f for f in parts.filters if f.column not in cats[:2]]
        show += ["dof"] if lx.DOF_RE.search(q) else []
        step = Step("chi2", (cats[0],), cats[1], show=tuple(show)).with_params(alpha=alpha, invert=invert or None)
        verdict = verdict or bool(lx.SIGNIFICANT_RE.search(q))  # "…, and significance at 5%": a yes/no asked
        return _request([step], parts, decimals, "verdict" if verdict else "value", language, table)
    measure = next(iter(parts.measures), None)
    # two levels named make the groups ("M vs F"); one level filters ("among smokers only, ... by marital_status")
    paired = [c for c, levels in parts.levels.items() if len(levels) >= 2]
    single = [c for c in parts.levels if c not in paired]
    group = next(iter([*paired, *(c for c in parts.categories if c not in single), *single]), None)
    if group is None and len(parts.measures) == 2:  # a numeric column of few levels groups the other
        few = [m for m in parts.measures if int(table_col(table, m).get("distinct") or 99) <= 20]
        lead = r"(?:across|by|among|per|each|between|over|for)\s+(?:the\s+)?(?:different\s+)?"
        ko_lead = r"`?\)?\s*(?:집단|그룹|별|에\s*따라|에\s*따른)"  # "자녀 수(`kids`) 집단에 따라"
        named = [m for m in few if re.search(lead + _name_pattern(m), q) or re.search(_name_pattern(m) + ko_lead, q)]
        if len(named) == 1 or len(few) == 1:
            group = (named or few)[0]
            measure = next(m for m in parts.measures if m != group)
    if measure is None or group is None:  # a test with an operand unread: never a nearby figure in its place
        what = "numeric column to compare" if measure is None else "column that makes the groups"
        return Refusal(MISSING_COLUMN, f"the question names no {what} (the data's columns are named as the profile "
                                       "names them)", ("column",))  # fmt: skip
    levels = _level_order(text, table_col(table, group)) or parts.levels.get(group, [])
    parts.filters[:] = [f for f in parts.filters if f.column != group]
    if ops.has("ttest") or (len(levels) == 2 and not ops.has("anova")):
        equal = False if lx.WELCH_RE.search(q) else (True if lx.POOLED_RE.search(q) else None)
        step = Step("ttest", (measure,), group, show=tuple(show)).with_params(
            alpha=alpha, equal_var=equal, levels=tuple(levels) if len(levels) == 2 else None, invert=invert or None
        )
    else:
        step = Step("anova", (measure,), group, show=tuple(show)).with_params(alpha=alpha, invert=invert or None)
    verdict = verdict or bool(lx.SIGNIFICANT_RE.search(q))  # "…, and significance at 5%": a yes/no asked
    return _request([step], parts, decimals, "verdict" if verdict else "value", language, table)


def _level_order(text: _Text, col: Mapping[str, Any]) -> list[str]:
    """The two groups in the order asked, "M minus F", "1 vs 0", "Y − N" (the t statistic's sign follows it), or
    empty when the question names no such pair of the column's values."""
    values = {v.lower(): v for v in _category_values(col)}
    if _coded(col):
        low, high = col.get("min"), col.get("max")
        if isinstance(low, int | float) and isinstance(high, int | float) and float(low).is_integer():
            values |= {str(int(v)): _level_label(float(v), col) for v in range(int(low), int(high) + 1)}
    pair = r"(?<![\w.])(\w+(?:\.\w+)*)\s*(?:minus|-|vs\.?|versus)\s*(\w+(?:\.\w+)*)(?![\w])"
    order: list[str] = []
    for match in re.finditer(pair, _normal(text.original)):  # a value read beside its column still orders
        a, b = match.group(1), match.group(2)
        if a in values and b in values and a != b and order in ([], [values[a], values[b]]):
            text.take(*match.span())  # "1 vs 0 ... (1 − 0)": each restatement is read
            order = [values[a], values[b]]
    return order


def table_col(table: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return next((c for c in table.get("columns", []) if c.get("name") == name), {})


def _correlation(q: str, ops: _Ops, parts: _Parts, decimals: int | None, language: str, verdict: bool,
                 table: Mapping[str, Any]) -> StatRequest | Refusal:  # fmt: skip
    if len(parts.measures) != 2:  # never the correlation of another pair
        named = tuple(parts.measures)
        return Refusal(UNREAD, f"a correlation of two numeric columns, but the question names {len(named)}"
                               + (f" ({_listed(named)})" if named else ""), named or ("column",))  # fmt: skip
    method = next((m for m in ("spearman", "kendall", "pearson") if ops.has(m)), "pearson")
    show = ["value"] + (["p_value"] if lx.P_VALUE_RE.search(q) else [])
    threshold = _first_number(lx.STRONG_RE, q)
    asking = _verdict_sentence(q, "ko" if re.search(r"[\uac00-\ud7a3]", q) else "en") or ""
    # "is |rho| at least 0.5?": a yes/no on a threshold asks whether it is strong by that threshold
    strong = lx.STRONG_WORD_RE.search(q) or (threshold is not None and lx.STRONG_RE.search(asking))
    significance = bool(lx.SIGNIFICANT_RE.search(asking))
    sign = next((p for p, pattern in lx.SIGN_WORDS if re.search(pattern, asking)), None)
    if verdict and significance:
        show.append("significant")
    elif verdict and sign:
        show.append(sign)
    elif verdict and strong:
        show.append("strong")
    elif lx.STRENGTH_RE.search(q) or strong:
        show.append("strength")
    step = Step(method, tuple(parts.measures[:2]), show=tuple(show)).with_params(strong_r=threshold, alpha=_alpha(q))
    form = "verdict" if verdict and (strong or significance or sign) else "value"
    return _request([step], parts, decimals, form, language, table)


def _regression(q: str, parts: _Parts, decimals: int | None, language: str,
                table: Mapping[str, Any]) -> StatRequest | Refusal | None:  # fmt: skip
    if len(parts.measures) != 2:
        if len(parts.measures) > 2:
            named = tuple(parts.measures)
            return Refusal(UNSUPPORTED, f"a regression on more than one predictor ({_listed(named)})", named)
        return None
    y, x = _regression_roles(q, parts.measures)
    show = [part for part, pattern in (
        ("slope", r"slope|coefficient(?!\s+of\s+determination)|기울기|회귀\s*계수"), ("intercept", r"intercept|절편"),
        ("r_squared", r"r[\s-]*squared|r²|r\^2|\br2\b|coefficient\s+of\s+determination|결정\s*계수"),
        ("p_value", lx.P_VALUE_RE.pattern)) if re.search(pattern, q)]  # fmt: skip
    formula = re.search(r"=\s*(?P<a>[a-z]{1,2})\s*\+\s*(?P<b>[a-z]{1,2})\s*[·*x]", q)
    if formula:  # "loss = a + b·tens ... what are b (3 dp) and R²": the coefficients by their symbols
        rest = q[: formula.start()] + " " + q[formula.end() :]
        show += [part for part, symbol in (("intercept", "a"), ("slope", "b"))
                 if re.search(rf"(?<![\w.]){formula.group(symbol)}(?![\w.])", rest) and part not in show]  # fmt: skip
    asking = _verdict_sentence(q, language) or ""
    verdict = bool(lx.SIGNIFICANT_RE.search(asking))
    if verdict:
        show.append("significant")
    step = Step("regression", (x, y), show=tuple(show or ["slope"])).with_params(alpha=_alpha(q))
    return _request([step], parts, decimals, "verdict" if verdict else "value", language, table)


_RESPONSE = r"(?:response|outcome|dependent|target|종속|반응)"
_PREDICTOR = r"(?:predictor|explanatory|independent|regressor|feature|설명|독립)"


def _named_role(q: str, first: str, second: str) -> tuple[str, str] | None:
    """(y, x) when the question says which is the response ("X as the predictor and Y as the outcome")."""
    for name, other in ((first, second), (second, first)):
        after = rf"{_name_pattern(name)}\W{{0,3}}(?:\s+\w+){{0,2}}?\s*(?:as\s+)?(?:the\s+)?(?:a\s+)?"
        if re.search(after + _RESPONSE, q) or re.search(rf"{_RESPONSE}\s*(?:variable)?\W*{_name_pattern(name)}", q):
            return name, other
        if re.search(after + _PREDICTOR, q) or re.search(rf"{_PREDICTOR}\s*(?:variable)?\W*{_name_pattern(name)}", q):
            return other, name
    return None


def _regression_roles(q: str, measures: list[str]) -> tuple[str, str]:
    """(y, x): "regress Y on X", "Y against X", "predicting Y from X"; in Korean "X에 대한 Y의 회귀", "Y를 X에 대해
    회귀", "X가 Y에 미치는", "X로 Y를 예측" (else the second named is explained by the first)."""
    a, b = measures[:2]
    pa, pb = (re.search(_name_pattern(n), q) for n in (a, b))
    if pa is None or pb is None:
        return a, b
    first, second = (a, b) if pa.start() < pb.start() else (b, a)
    between = q[min(pa.end(), pb.end()) : max(pa.start(), pb.start())].strip(" `'\"")
    if re.match(r"=\s*\w{1,3}\s*\+\s*\w{1,3}\s*[·*x]?$", between):  # "price = a + b·sqft": y is left of "="
        return first, second
    role = _named_role(q, first, second)
    if role is not None:
        return role
    if re.search(r"[\uac00-\ud7a3]", q):  # "Gas를 Temp로 회귀", "체중(Postwt)을 ... (Prewt)으로 설명": the object is Y
        said = (pa if pa.start() < pb.start() else pb).group(0)  # the first name as written, its particle on
        stripped = between.strip(" `'\")(")
        return (
            (first, second)
            if re.search(r"[을를]$", said) or re.match(r"(?:을|를)(?:\s|$)", stripped)
            else (second, first)
        )
    if re.search(r"\b(?:on|against|versus|vs\.?|from|using|by)\b", between):
        return first, second
    return second, first
