"""The lint's claim rules: what an analyst rejects in a report's verdict words ("rising", "main driver", "evenly").

Written from the reader's side, not from the product's code: the phrase lists are the lint's own, a sentence is
"qualified" when it carries a citation marker whose calculation is a recorded claim (``kind: "claim"`` in
``calculation_metadata.json``), and the hand labels' ``claims`` say which verdicts are true of a table.

Each rule takes the lint's ``Report`` and returns ``(kind, subject, detail)`` triples, which ``lint.py`` wraps as
findings. Kinds: ``contradiction``, ``trend_from_two_points``, ``unqualified_claim``, ``claim_against_label``.
"""

from __future__ import annotations

import re
from itertools import combinations
from typing import Any

Triple = tuple[str, str, str]

# Poles of the verdict words a reader compares: two sentences about the same columns with opposite poles contradict.
# Negated dominance ("no single group dominates") is the even pole, so it is matched (and blanked) first.
_NEGATED_DOMINANCE = re.compile(
    r"\bno (?:single |one )?\w+ (?:dominates|dominate)\b|\bnot dominated\b|\bdoes(?: not|n't) dominate\b", re.I
)
POLES: dict[str, re.Pattern[str]] = {
    "even": re.compile(
        r"\b(?:evenly|uniformly|even(?:ly)? spread|spread (?:fairly |roughly )?even(?:ly)?|balanced across)\b"
        r"|고르게|균등",
        re.I,
    ),
    "strong": re.compile(
        r"\b(?:main|key|primary|biggest|largest|leading) driver\b|\bdominat(?:es|ed|ing|ant)\b|\bconcentrated\b"
        r"|주요 동인|지배",
        re.I,
    ),
    "up": re.compile(
        r"\b(?:is|are|was|were|keeps?) (?:rising|increasing|growing|climbing)\b|\b(?:rising|increasing|upward|growing)"
        r" trend\b|\btrend(?:s|ed|ing)? (?:up|upward)\b|\bsteadily (?:rising|increasing|growing|rose|grew)\b"
        r"|증가 추세|상승 추세",
        re.I,
    ),
    "down": re.compile(
        r"\b(?:is|are|was|were|keeps?) (?:falling|decreasing|declining|shrinking)\b|\b(?:falling|decreasing|downward"
        r"|declining) trend\b|\btrend(?:s|ed|ing)? (?:down|downward)\b|\bsteadily (?:falling|declining|fell)\b"
        r"|감소 추세|하락 추세",
        re.I,
    ),
    "flat": re.compile(r"\bno (?:clear |obvious |consistent )?trend\b|뚜렷한 추세(?:가|는) 없", re.I),
    "corr_strong": re.compile(
        r"\bstrong(?:ly)? (?:positive |negative )?correlat\w*|\bhighly correlated\b|강한 (?:양의 |음의 )?상관", re.I
    ),
    "corr_none": re.compile(
        r"\bno (?:clear |meaningful |notable )?correlation\b|\buncorrelated\b|\bnot correlated\b"
        r"|\b(?:weak(?:ly)?|negligible) (?:positive |negative )?correlat\w*|상관(?:관계)?(?:가|이|는) (?:없|약)",
        re.I,
    ),
}
OPPOSITE = {("strong", "even"), ("up", "down"), ("up", "flat"), ("down", "flat"), ("corr_strong", "corr_none")}

# Every verdict word a reader takes as a claim about the data, in English and Korean. Extreme values only as a
# verdict ("driven by a few extreme values", "has extreme values"), not a chart's note that it leaves them out.
CLAIM_PHRASES = re.compile(
    r"\b(?:rising|falling|declining|upward trend|downward trend|increasing trend|decreasing trend|no clear trend"
    r"|volatile|dominat(?:es|ed|ing|ant)|concentrated|evenly|(?:main|key|primary|biggest) driver"
    r"|(?:strong|moderate|weak)(?:ly)? (?:positive |negative )?correlat\w*|highly correlated|no correlation"
    r"|(?:statistically )?(?:in)?significant(?:ly)?|within (?:the )?noise"
    r"|(?:driven by|has|have|shows?|contains?) (?:a few |some |several |no )?extreme values)\b"
    r"|증가 추세|감소 추세|상승 추세|하락 추세|추세가 없|주요 동인|주요 요인|지배|고르게|균등하게"
    r"|(?:강한|약한|뚜렷한) (?:양의 |음의 )?상관|통계적으로 유의|유의(?:한|하게|미한|미하게)|변동성이 크",
    re.I,
)
# Trend words of a claim ("is rising", "upward trend"); a change ("rose from 6,378 to 15,623") is not one of them.
TREND_CLAIM = re.compile(f"{POLES['up'].pattern}|{POLES['down'].pattern}|\\b(?:rising|falling)\\b", re.I)
# First against last: the evidence of a change, never of a trend.
TWO_POINTS = re.compile(
    r"\bfrom [-−$€£₩]?\d[\d,.]*\S* (?:\w+ )?(?:in \S+ )?to [-−$€£₩]?\d|\bfirst (?:and|vs\.?|versus|against|to) "
    r"(?:the )?last\b|\bbetween (?:the )?first and (?:the )?last\b"
    r"|에서 [\d,.]+\S* ?(?:으로|로) (?:증가|감소|상승|하락)",
    re.I,
)
_CHANGE_CALC = re.compile(r"\b(?:first|last|change|growth|pct_change|delta)\b|first.{0,40}last", re.I)
MARKER = re.compile(r"\[(\d+)\]")


def sentences(text: str) -> list[str]:
    """Sentences of a report text: split after ``.!?。`` and at line ends (a heading, a cell, a chart title)."""
    return [s.strip() for s in re.split(r"(?<=[.!?。])\s+|\n", text) if s.strip()]


def claim_records(report: Any) -> dict[str, dict[str, Any]]:
    """Recorded claims by id (``kind: "claim"`` entries of ``calculation_metadata.json``)."""
    return {cid: c for cid, c in report.calcs.items() if c.get("kind") == "claim"}


def cited_claims(report: Any, sentence: str) -> list[dict[str, Any]]:
    """The recorded claims whose citation markers the sentence carries."""
    found = []
    for number in MARKER.findall(sentence):
        calc = report.markers.get(number)
        if calc is not None and calc.get("kind") == "claim":
            found.append(calc)
    return found


def column_named(name: str, text: str) -> bool:
    """Whether ``text`` names the column ``name``: as a whole word, case-insensitive, ``_`` and ``.`` read as spaces."""
    spellings = {name, re.sub(r"[_.]+", " ", name).strip()}
    return any(s and re.search(rf"(?<![\w]){re.escape(s)}(?![\w])", text, re.I) for s in spellings)


def _columns_named(report: Any, sentence: str) -> frozenset[str]:
    """The profiled columns a sentence names (its citation markers are no column names)."""
    plain = MARKER.sub(" ", sentence)
    return frozenset(name for name in report.columns if column_named(name, plain))


def _poles(sentence: str) -> set[str]:
    found = {"even"} if _NEGATED_DOMINANCE.search(sentence) else set()
    rest = _NEGATED_DOMINANCE.sub(" ", sentence)
    found |= {pole for pole, pattern in POLES.items() if pattern.search(rest)}
    if "up" in found or "down" in found:
        found.discard("flat")  # "rising, with no clear trend before 2010" is one sentence's nuance, not a pole
    return found


def _claim_subject(record: dict[str, Any]) -> tuple[str, str]:
    params = (record.get("test") or {}).get("params") or {}
    return str(params.get("measure") or ""), str(params.get("by") or params.get("with") or "")


def _record_contradictions(records: list[dict[str, Any]]) -> list[Triple]:
    """Printed claims that cannot both hold: one kind on one measure and breakdown with two verdicts, or a main
    driver whose breakdown's concentration is spread evenly."""
    found = []
    for a, b in combinations(records, 2):
        (measure_a, by_a), (measure_b, by_b) = _claim_subject(a), _claim_subject(b)
        same_kind = a.get("claim_kind") == b.get("claim_kind") and (measure_a, by_a) == (measure_b, by_b)
        if same_kind and measure_a and a.get("value") != b.get("value"):
            found.append((a, b))
        kinds = {str(a.get("claim_kind")): a, str(b.get("claim_kind")): b}
        pair = set(kinds) == {"driver", "concentration"} and bool(by_a) and by_a == by_b
        if pair and (kinds["driver"].get("value"), kinds["concentration"].get("value")) == ("main", "spread_evenly"):
            found.append((a, b))
    return [
        (
            "contradiction",
            f"{a.get('id')} / {b.get('id')}",
            f"printed verdicts {a.get('value')!r} and {b.get('value')!r}",
        )
        for a, b in found
    ]


def contradictions(report: Any, texts: list[str]) -> list[Triple]:
    """Two sentences with opposite verdict words about the same columns (one's named columns a subset of the
    other's), and printed claim records that contradict each other."""
    read = [(s, _poles(s), _columns_named(report, s)) for s in texts]
    read = [(s, poles, named) for s, poles, named in read if poles and named]
    found: list[Triple] = []
    for (s1, p1, c1), (s2, p2, c2) in combinations(read, 2):
        if not (c1 <= c2 or c2 <= c1):
            continue
        clash = sorted(f"{x}/{y}" for x in p1 for y in p2 if (x, y) in OPPOSITE or (y, x) in OPPOSITE)
        if clash:
            subject = ", ".join(sorted(c1 & c2 or c1 | c2))
            found.append(("contradiction", subject, f"{clash[0]}: {s1[:70]!r} vs {s2[:70]!r}"))
    printed = {c["id"]: c for s in texts for c in cited_claims(report, s) if "id" in c}
    return found + _record_contradictions(list(printed.values()))


def trend_from_two_points(report: Any, texts: list[str]) -> list[Triple]:
    """Trend words backed only by a first-vs-last change: no trend claim cited in the sentence, and a "from X to Y"
    (or a first/last/change calculation) as its evidence; or a rising or falling trend claim tested on two periods."""
    found: list[Triple] = []
    for sentence in texts:
        if not TREND_CLAIM.search(sentence) or any(
            c.get("claim_kind") == "trend" for c in cited_claims(report, sentence)
        ):
            continue
        cited = [report.markers[n] for n in MARKER.findall(sentence) if n in report.markers]
        change = [c for c in cited if _CHANGE_CALC.search(f"{c.get('id', '')} {c.get('description', '')}")]
        if TWO_POINTS.search(sentence) or change:
            subject = ", ".join(sorted(_columns_named(report, sentence))) or "report"
            found.append(
                ("trend_from_two_points", subject, f"trend words on a first-vs-last change: {sentence[:90]!r}")
            )
    for record in claim_records(report).values():
        n = (record.get("evidence") or {}).get("n")
        directional = record.get("value") in ("rising", "falling")  # "no clear trend" over two periods is honest
        if record.get("claim_kind") == "trend" and directional and isinstance(n, int | float) and n < 3:
            detail = f"{record.get('value')} from a trend test on {n:g} periods"
            found.append(("trend_from_two_points", str(record.get("id")), detail))
    return found


def unqualified_claims(report: Any, texts: list[str]) -> list[Triple]:
    """Verdict words in a sentence (paragraph, heading, table cell, chart title) that cites no recorded claim."""
    found: dict[str, list[str]] = {}
    for sentence in texts:
        words = CLAIM_PHRASES.findall(MARKER.sub(" ", sentence))
        if words and not cited_claims(report, sentence):
            found.setdefault(words[0].lower(), []).append(sentence)
    return [
        ("unqualified_claim", word, f"no claim marker in {len(hits)} sentence(s), e.g. {hits[0][:90]!r}")
        for word, hits in found.items()
    ]


def _label_claims(expect: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for kind, entries in (expect.get("claims") or {}).items():
        for entry in entries if isinstance(entries, list) else [entries]:
            out.append((kind, entry))
    return out


def _record_columns(record: dict[str, Any]) -> set[str]:
    measure, by = _claim_subject(record)
    return {str(c) for c in record.get("source_columns") or []} | ({measure, by} - {""})


def claims_against_labels(report: Any, texts: list[str], expect: dict[str, Any]) -> list[Triple]:
    """A printed claim whose verdict the hand label says is not true of the table (same kind, same measure, and the
    label's breakdown or second variable among the claim's columns)."""
    printed = {c["id"]: c for s in texts for c in cited_claims(report, s) if "id" in c}
    found = []
    for kind, label in _label_claims(expect):
        allowed = label.get("verdict")
        allowed = [allowed] if isinstance(allowed, str) else list(allowed or [])
        for record in printed.values():
            columns = _record_columns(record)
            other = label.get("by") or label.get("with")
            if record.get("claim_kind") != kind or label.get("measure") not in columns:
                continue
            if other and kind != "trend" and other not in columns:
                continue  # a trend's axis may be named differently (a derived period); its measure decides
            if record.get("value") not in allowed:
                detail = f"prints {record.get('value')!r}; the hand label allows {', '.join(allowed)}"
                found.append(("claim_against_label", f"{kind} {label.get('measure')}", detail))
    return found


def claim_findings(report: Any, texts: list[str], expect: dict[str, Any]) -> list[Triple]:
    """Every claim rule on the report's sentences ``texts``."""
    return (
        contradictions(report, texts)
        + trend_from_two_points(report, texts)
        + unqualified_claims(report, texts)
        + claims_against_labels(report, texts, expect)
    )
