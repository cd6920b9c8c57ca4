"""Free-text claim phrases ("is rising", "main driver", "dominates", "증가 추세" ...) in English and Korean.

A claim word in a report must come from a tracked claim (``{{claim:ID}}``). The renderer refuses a sentence that
holds one of these phrases without a claim reference, and the Auditor flags one in the final DOCX (type E), so both
find them here. Each match's ``lastgroup`` names the claim kind the phrase asserts, which tells the fix which
tracked claim to cite.
"""

from __future__ import annotations

import re

_EN = {
    "trend": r"(?:is|are|was|were|keeps?|kept)\s+(?:steadily\s+|sharply\s+|consistently\s+)?"
    r"(?:rising|falling|increasing|decreasing|declining|growing|trending\s+(?:up|down)(?:wards?)?)"
    r"|(?:rising|falling|upward|downward|increasing|decreasing|declining|growth|clear)\s+trends?"
    r"|steadily\s+(?:rising|falling|increasing|decreasing|declining|growing)"
    r"|steady\s+(?:growth|decline|rise|increase|decrease)",
    "driver": r"(?:main|key|primary|biggest|largest|major|principal|strongest)\s+drivers?",
    "concentration": r"dominat(?:es|ed|ing|e|ion)|dominant|(?:spread|distributed)\s+(?:\w+\s+)?evenly|evenly"
    r"|(?:highly\s+)?concentrated\s+in",
    "correlation": r"(?:strong|strongly|moderate|moderately|weak|weakly|high|highly|tight|tightly|clear|clearly)"
    r"\s+(?:positive(?:ly)?\s+|negative(?:ly)?\s+)?(?:correlat\w*|related|associated|linked)"
    r"|correlat\w*\s+(?:strongly|weakly|closely|highly)",
    "comparison": r"(?:statistically\s+)?significant(?:ly)?|within\s+(?:the\s+)?noise",
    "outlier": r"outliers?|extreme\s+values?",
}
_KO = {
    "trend": r"(?:증가|감소|상승|하락|성장)\s*(?:하는\s*)?추세|꾸준(?:히|한)\s*(?:증가|감소|상승|하락|성장)",
    "driver": r"(?:주요|핵심|최대|가장\s*큰)\s*(?:동인|요인|원인)",
    "concentration": r"지배(?:적|하|함|했)?|고르게|균등(?:하게|히)|에\s*집중(?:됨|되어|돼|된)",
    "correlation": r"(?:강한|높은|뚜렷한|약한|중간\s*정도의)\s*(?:양의\s*|음의\s*)?상관",
    "comparison": r"(?:통계적으로\s*)?유의(?:미|하|한|성|했)",
    "outlier": r"이상치|극단값",
}


def _pattern() -> re.Pattern[str]:
    english = "|".join(f"(?P<{kind}>(?<![\\w]){body}(?![\\w]))" for kind, body in _EN.items())
    korean = "|".join(f"(?P<{kind}_ko>{body})" for kind, body in _KO.items())
    return re.compile(f"{english}|{korean}", re.IGNORECASE)


CLAIM_PHRASE_RE = _pattern()


def find_claim_phrases(text: str) -> list[re.Match[str]]:
    """The claim phrases in ``text``, in order, as regex matches (``group(0)``, ``start()``, ``end()``).

    ``phrase_kind(match)`` names the claim kind each one asserts (``trend``, ``driver``, ...).
    """
    return list(CLAIM_PHRASE_RE.finditer(text or ""))


def phrase_kind(match: re.Match[str]) -> str:
    """The claim kind a phrase found by :func:`find_claim_phrases` asserts."""
    return str(match.lastgroup or "").removesuffix("_ko")


# What a phrase says about the verdict: its direction or strength, matched against the claim that backs it.
_UP = re.compile(r"ris|increas|grow|upward|\bup\b|증가|상승|성장", re.IGNORECASE)
_DOWN = re.compile(r"fall|decreas|declin|downward|\bdown\b|감소|하락", re.IGNORECASE)
_STRONG = re.compile(r"strong|high|tight|clear|close|강한|높은|뚜렷한", re.IGNORECASE)
_MODERATE = re.compile(r"moderate|중간", re.IGNORECASE)
_WEAK = re.compile(r"weak|약한", re.IGNORECASE)
_POSITIVE, _NEGATIVE = re.compile(r"positive|양의", re.I), re.compile(r"negative|음의", re.I)
_NEGATED = re.compile(r"(?:\bno|\bnot|n't|without)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)


def phrase_backed_by(match: re.Match[str], claim_kind: str, verdict: str) -> bool:
    """Whether a cited claim (its kind and verdict) backs the phrase ``match`` found in ``match.string``.

    The kinds must agree, and so must what the phrase says of the verdict: "is rising" needs ``rising``, "main
    driver" needs ``main``, "dominates" needs ``dominates``, "evenly" ``spread_evenly``, "strong positive
    correlation" a ``strong_positive`` one, "significant" ``higher`` or ``lower``. A negated phrase ("no clear
    trend", "not dominated") is backed by any other verdict of its kind.
    """
    kind, words = phrase_kind(match), match.group(0)
    if kind != claim_kind:
        return False
    if _NEGATED.search(match.string[max(0, match.start() - 30) : match.start()]):
        return True
    if kind == "trend":
        return verdict == "rising" if _UP.search(words) else verdict == "falling" if _DOWN.search(words) else (
            verdict in ("rising", "falling"))  # fmt: skip
    if kind == "driver":
        return verdict == "main"
    if kind == "concentration":
        if re.search(r"evenly|고르게|균등", words, re.IGNORECASE):
            return verdict == "spread_evenly"
        if re.search(r"dominat|지배", words, re.IGNORECASE):
            return verdict == "dominates"
        return verdict in ("concentrated", "dominates")
    if kind == "correlation":
        strength = ("strong" if _STRONG.search(words) else "moderate" if _MODERATE.search(words) else
                    "weak" if _WEAK.search(words) else "")  # fmt: skip
        direction = "positive" if _POSITIVE.search(words) else "negative" if _NEGATIVE.search(words) else ""
        return verdict.startswith(strength) and direction in verdict and verdict not in ("negligible", "")
    if kind == "comparison":
        return verdict == "within_noise" if re.search(r"noise", words, re.I) else verdict in ("higher", "lower")
    return verdict == "extreme_values"  # outlier
