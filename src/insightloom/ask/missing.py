"""What an abstention names: the data a question asks about that the job does not hold.

"It would need data on ..." must name a column, a value or a period the data lack, never the question's own words
("would need data on calculate, mean, standard, deviation, volume" named nothing a user could add). A word of the
question is *known* when it names a column (its name or its description), a category value, a table or an alias of
the data profile, or an operation of the statistics lexicon; the words left name the missing data. A year outside
the dates of the data is a missing period, said with the dates the data cover. When every word is known, nothing is
missing from the data: the results only hold no verified figure for it, and the sentence names the columns and how
to compute it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..statistics.lexicon import KO_PARTICLES, OPERATION_WORDS

_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)
_TERM_RE = re.compile(r"[^\W_]+(?:-[^\W_]+)*", re.UNICODE)  # "half-life", "four-fifths" stay one term
_PARTICLE_RE = re.compile(rf"(?<=[\w])(?:{KO_PARTICLES})$")
_NUMBER_RE = re.compile(r"\d+(?:년|월|일|st|nd|rd|th|s)?")  # a number, or a year or a date part said in words
_YEAR_RE = re.compile(r"(?<!\d)(19\d{2}|20\d{2})(?!\d)")
_OPERATION_RES = tuple(re.compile(p, re.I) for patterns in OPERATION_WORDS.values() for p in patterns)
# Words that ask rather than name what is asked about.
QUESTION_WORDS = frozenset(
    "a an the and or of in on at to for by with from what which who whom whose when where why how is are was were "  # noqa: SIM905
    "be been do does did has have had this that these those it its their there than then me my our your about "
    "tell show give please much many most least any some each every per all 무엇 무엇인가요 무엇이야 뭐야 어떤 어느 "
    "얼마 얼마나 얼마입니까 얼마인가요 언제 어디 왜 어떻게 알려줘 알려주세요 인가요 있나요 했나요 였나요 이야 "
    "입니까 입니다 가장 몇 각 모든 어떤가요 어때 어때요 어땠나요 무엇인가 누구".split()
)
# Words that say how to compute or print, not what data: "calculate the mean ... round to 2 decimal places".
HOW_WORDS = frozenset(
    "calculate compute find determine report get estimate fit train run perform conduct apply round rounded rounding "  # noqa: SIM905
    "decimal decimals places place "
    "digits nearest whole number column columns value values mean average median standard deviation variance sum "
    "total count percentage share correlation test method using use highest lowest largest smallest top bottom "
    "high low big small most least greatest best worst 구하시오 계산 반올림 소수점 자리 평균 합계 총 큰 작은 높은 "
    "낮은 많은 적은 최고 최저".split()
)
MAX_NEEDED_TERMS = 6
_PERIOD = {"en": "{year} (the data cover {first} to {last})", "ko": "{year}년(데이터 기간 {first}~{last})"}


@dataclass(frozen=True)
class Missing:
    """What an abstention says is missing.

    Attributes:
        terms: The question's words that name no data of the job (or all its key words, with no profile).
        periods: Years the question names outside the data's dates, each with the first and last date covered.
        columns: The columns the question names, when nothing is missing from the data.
    """

    terms: tuple[str, ...] = ()
    periods: tuple[tuple[str, str, str], ...] = ()
    columns: tuple[str, ...] = ()

    @property
    def data_present(self) -> bool:
        """Nothing the question names is missing from the data: only a verified figure for it is."""
        return not self.terms and not self.periods and bool(self.columns)

    def needed(self, language: str = "en") -> str:
        """The missing data as the abstention names it ("weather, mars", "2019 (the data cover 2024-01-01 to ...)")."""
        period = _PERIOD[language if language in _PERIOD else "en"]
        periods = [period.format(year=year, first=first, last=last) for year, first, last in self.periods]
        return ", ".join([*periods, *self.terms][:MAX_NEEDED_TERMS])


def key_terms(question: str) -> list[str]:
    """The question's own key words, lower-cased and without a Korean particle, in order, each once."""
    terms: list[str] = []
    for word in _WORD_RE.findall(question):
        lowered = _stem(word.lower())
        if not lowered or lowered in QUESTION_WORDS | HOW_WORDS or _NUMBER_RE.fullmatch(lowered) or lowered in terms:
            continue
        terms.append(lowered)
    return terms


def _stem(word: str) -> str:
    """``word`` without a trailing Korean particle ("amount는" -> "amount"); a particle alone is no word, and a stem
    of one syllable keeps its particle ("성별" is a word, not "성" + "별")."""
    if _PARTICLE_RE.fullmatch(word) or re.fullmatch(f"(?:{KO_PARTICLES})", word):
        return ""
    stem = _PARTICLE_RE.sub("", word)
    return stem if len(stem) >= 2 else word


def missing_data(question: str, profile: Mapping[str, Any] | None) -> Missing:
    """What the job's data lack to answer ``question``; with no profile, the question's key words."""
    terms = key_terms(question)
    if not profile:  # every key word is unknown: the same phrases as with a profile that knows none of them
        return Missing(terms=tuple(unknown_phrases(question, set())))
    known, columns = _known_words(profile)
    unknown = unknown_phrases(question, known)
    named = [name for name, words in columns.items() if any(t in words for t in terms)]
    return Missing(terms=tuple(unknown), periods=uncovered_periods(question, profile), columns=tuple(named))


def unknown_phrases(question: str, known: set[str]) -> list[str]:
    """The question's words that name no data of the job, adjacent ones kept together as the question says them
    ("naive bayes classifier", "adverse impact ratio", "elimination half-life"), in order, each once."""

    def unknown(word: str) -> bool:
        if not word or word in known or _is_operation(word):
            return False
        return any(p and p not in known and p not in QUESTION_WORDS | HOW_WORDS and not _NUMBER_RE.fullmatch(p)
                   for p in word.split("-"))  # fmt: skip

    phrases: list[str] = []
    current: list[str] = []
    last_end = -1
    for match in _TERM_RE.finditer(question):
        word = _stem(match.group().lower())
        adjacent = last_end >= 0 and not question[last_end : match.start()].strip()
        if unknown(word):
            if current and not adjacent:
                phrases.append(" ".join(current))
                current = []
            current.append(word)
        elif current:
            phrases.append(" ".join(current))
            current = []
        last_end = match.end()
    if current:
        phrases.append(" ".join(current))
    return list(dict.fromkeys(phrases))


def _is_operation(term: str) -> bool:
    return any(pattern.fullmatch(term) for pattern in _OPERATION_RES)


def _words(text: Any) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(str(text or ""))}


def _tables(profile: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [t for t in profile.get("tables", []) if isinstance(t, Mapping)]


def _column_words(column: Mapping[str, Any]) -> set[str]:
    """The words that name a column: its name (whole and word by word), its description and its category values."""
    name = str(column.get("name") or "")
    words = {name.lower(), *_words(name), *_words(column.get("description"))}
    for top in column.get("top_values") or []:
        value = top.get("value") if isinstance(top, Mapping) else top
        words |= {str(value).lower(), *_words(value)}
    return words


def _known_words(profile: Mapping[str, Any]) -> tuple[set[str], dict[str, set[str]]]:
    """Every word that names data of the job, and the words of each column by its name."""
    columns: dict[str, set[str]] = {}
    known: set[str] = set()
    for table in _tables(profile):
        known |= _words(table.get("view")) | _words(table.get("file"))
        for column in table.get("columns") or []:
            if isinstance(column, Mapping) and column.get("name"):
                columns[str(column["name"])] = _column_words(column)
                known |= columns[str(column["name"])]
    aliases = profile.get("aliases") or {}
    if isinstance(aliases, Mapping):
        known |= {w for pair in aliases.items() for part in pair for w in _words(part)}
    return known, columns


def _names(profile: Mapping[str, Any]) -> set[str]:
    """Column names and category values, whole and word by word (descriptions left out)."""
    names: set[str] = set()
    for table in _tables(profile):
        for column in table.get("columns") or []:
            if isinstance(column, Mapping):
                names |= _column_words({k: v for k, v in column.items() if k != "description"})
    return names


def _date_spans(profile: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    for table in _tables(profile):
        for column in table.get("columns") or []:
            if isinstance(column, Mapping) and column.get("role") == "date" and column.get("min") and column.get("max"):
                yield str(column["min"])[:10], str(column["max"])[:10]


def uncovered_periods(question: str, profile: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """``(year, first date, last date)`` of each year the question names outside the data's dates."""
    spans = list(_date_spans(profile))
    if not spans:
        return ()
    first, last = min(lo for lo, _ in spans), max(hi for _, hi in spans)
    # A year inside a column's name or a category value is no period ("in 2014 dollars" for `BaseDam2014`).
    names = _names(profile)
    years = [y for y in dict.fromkeys(_YEAR_RE.findall(question)) if not any(y in name for name in names)]
    return tuple((year, first, last) for year in years if not first[:4] <= year <= last[:4])


__all__ = [
    "HOW_WORDS",
    "MAX_NEEDED_TERMS",
    "QUESTION_WORDS",
    "Missing",
    "key_terms",
    "missing_data",
    "uncovered_periods",
    "unknown_phrases",
]
