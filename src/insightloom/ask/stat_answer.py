"""A statistics question's answer: the verified calculations that answer its request, and the check that an answer
answers the question asked.

:func:`match_request` finds, by the calculations' ``basis`` fields (never by their wording), the verified
calculation of every part the request asks for: those the report already holds, or those a follow-up merged.
:func:`computed_block` words the answer from them (``insightloom.statistics.wording``), each value as a
``{{calc:ID}}`` reference printed with the request's decimals. :func:`request_problems` refuses an answer that cites
another operation, column, filter or group, prints a requested value with other decimals, gives a value where a
group's name was asked, or a yes/no other than the computed one; the answerer gets one retry naming the mismatch,
then the question is abstained on. The same code checks every model's answer.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..calc_refs import CALC_REF_RE
from ..report.numbers import find_numbers
from ..statistics import operations as ops
from ..statistics.parse import AMBIGUOUS, MISSING_COLUMN, UNREAD, UNSUPPORTED, Refusal
from ..statistics.request import Filter, StatRequest, Step
from ..statistics.rounding import format_rounded
from ..statistics.wording import answer_sentences, describe_request, describe_step, verdict_yes

_SYMMETRIC = ("pearson", "spearman", "kendall")
_YES_RE = re.compile(r"\b(yes|no)\b|(예|아니요|아니오)", re.I)


@dataclass
class Matched:
    """The calculations answering a request.

    Attributes:
        request: The request.
        refs: Per step: part -> ``{{calc:ID}}``, and ``label:<part>`` -> a label part's value.
        calcs: Calculation id -> its record, for every matched calculation.
        display: Calculation id -> its value as the answer prints it (the request's decimals).
        missing: The parts no verified calculation holds, described.
        missing_steps: The index of each step with a part no verified calculation holds.
    """

    request: StatRequest
    refs: list[dict[str, str]] = field(default_factory=list)
    calcs: dict[str, dict[str, Any]] = field(default_factory=dict)
    display: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    missing_steps: list[int] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing

    def lacking(self, language: str = "en") -> str:
        """What no verified calculation holds, one phrase per step in the question's language."""
        steps = [self.request.steps[i] for i in dict.fromkeys(self.missing_steps)]
        return "; ".join(describe_step(s, self.request.filters, language) for s in steps)


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _filters_key(filters: Sequence[Any]) -> list[tuple[str, str, Any]]:
    out = []
    for f in filters:
        flt = f if isinstance(f, Filter) else Filter.from_json(f)
        value = float(flt.value) if not isinstance(flt.value, str) else flt.value
        out.append((flt.column, flt.op, value))
    return sorted(out, key=str)


def basis_matches(basis: Mapping[str, Any], step: Step, filters: Sequence[Filter], part: str) -> bool:
    """Whether a calculation's basis is this part of this step over these filters."""
    if basis.get("op") != step.op or basis.get("part") != part or basis.get("group") != step.group:
        return False
    columns = list(basis.get("columns") or [])
    if step.op in _SYMMETRIC:
        if sorted(columns) != sorted(step.columns):
            return False
    elif columns != list(step.columns):
        return False
    if _filters_key(basis.get("filters") or []) != _filters_key(filters):
        return False
    theirs = dict(basis.get("params") or {})
    return all(_close(theirs.get(k), v) for k, v in ops.params_of(step).items())


def _needed(step: Step) -> list[str]:
    shown = list(step.show or ops.operation(step.op).parts[:1])
    if step.op in ("group_max", "group_min"):
        shown.append("group")
    if step.op in ("ttest", "anova", "chi2", "normality"):
        shown += ["verdict", "p_value"]  # the verdict cites the p-value it comes from
    return list(dict.fromkeys(shown))


def _display(calc: Mapping[str, Any], decimals: int | None, shown: str | None) -> str:
    value = calc.get("value")
    if isinstance(value, str):
        return value
    if decimals is not None and isinstance(value, int | float):
        return format_rounded(float(value), decimals) + ("%" if calc.get("unit") == "%" else "")
    return shown if shown is not None else str(value)


def _group_value(
    step: Step, filters: Sequence[Filter], name: str, calcs: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """A group extreme's value held as its group's own figure: the top region's total is the total of
    ``Region = West``, which a breakdown records once (an average, a total, a median, a max or a min)."""
    agg = str(ops.params_of(step).get("agg", ""))
    if not name or step.group is None or agg not in ("mean", "sum", "median", "max", "min"):
        return None
    own = Step(agg, step.columns)
    scoped = [*filters, Filter(step.group, "=", name)]
    return next((c for c in reversed(calcs) if basis_matches(c["basis"], own, scoped, "value")), None)


def match_request(request: StatRequest, calcs: Sequence[Mapping[str, Any]], verified: Mapping[str, str]) -> Matched:
    """The verified calculations answering every part ``request`` asks for.

    Args:
        request: The request.
        calcs: The job's calculation records.
        verified: Verified calculation id -> its value as the report prints it.
    """
    found = Matched(request)
    with_basis = [c for c in calcs if isinstance(c.get("basis"), Mapping) and str(c.get("id")) in verified]
    for index, step in enumerate(request.steps):
        parts: dict[str, str] = {}
        for part in _needed(step):
            calc = next((c for c in reversed(with_basis) if basis_matches(c["basis"], step, request.filters, part)),
                        None)  # fmt: skip
            if calc is None and part == "value" and "group" in parts:
                calc = _group_value(step, request.filters, parts.get("label:group", ""), with_basis)
            if calc is None:
                found.missing.append(f"{describe_step(step, request.filters)}" + (f" ({part})" if part != "value"
                                                                                    else ""))  # fmt: skip
                found.missing_steps.append(index)
                continue
            calc_id = str(calc["id"])
            found.calcs[calc_id] = dict(calc)
            label = part in ops.operation(step.op).labels  # a verdict or a name: no rounding, its word kept
            decimals = None if label else request.decimals_for(part, step.op)
            found.display[calc_id] = _display(calc, decimals, verified.get(calc_id))
            parts[part] = "{{calc:" + calc_id + "}}"
            if label:
                parts["label:" + part] = str(calc["value"])
        found.refs.append(parts)
    return found


def computed_block(matched: Matched) -> str:
    """The ``<computed>`` block of the answerer's prompt: the answer's sentences, from product code."""
    sentences = answer_sentences(matched.request, matched.refs)
    head = html.escape(describe_request(matched.request), quote=True)  # "|z| > 3" must not close the tag
    return f'<computed request="{head}">\n' + "\n".join(sentences) + "\n</computed>"


def parameter_numbers(matched: Matched) -> set[str]:
    """The numbers the computed sentences print outside references: the request's own parameters (α 0.05,
    |z| > 3, ddof 1), which the question set and no calculation claims."""
    from .validate import fragment_numbers

    return fragment_numbers(CALC_REF_RE.sub(" ", computed_block(matched)))


def _value_tokens(answer: str) -> list[str]:
    masked = CALC_REF_RE.sub(lambda m: " " * len(m.group(0)), answer)
    return [t.text.replace(",", "").replace("−", "-") for t in find_numbers(masked)]


def _decimals_of(token: str) -> int:
    return len(token.split(".", 1)[1]) if "." in token else 0


def _as_number(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def request_problems(answer: str, matched: Matched, all_calcs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What makes ``answer`` an answer to another question than ``matched.request``; empty when it answers it.

    Args:
        answer: The answer before its references are filled in.
        matched: The request and the calculations answering it.
        all_calcs: Every calculation of the job by id (a cited one that answers nothing asked is named).
    """
    request = matched.request
    problems: list[str] = []
    asked = describe_request(request)
    wanted = set(matched.calcs)
    for calc_id in dict.fromkeys(CALC_REF_RE.findall(answer)):
        if calc_id in wanted:
            continue
        calc = all_calcs.get(calc_id, {})
        what = str(calc.get("description") or calc_id)
        problems.append(f"{{{{calc:{calc_id}}}}} is the {what}, which the question does not ask; it asks for "
                        f"the {asked}: cite the computed references instead")  # fmt: skip
    tokens = _value_tokens(answer)
    refs = set(CALC_REF_RE.findall(answer))
    for step, parts in zip(request.steps, matched.refs, strict=True):
        for part, ref in parts.items():
            if part.startswith("label:") or (part != "group" and part in ops.operation(step.op).labels):
                continue
            calc_id = ref[len("{{calc:") : -2]
            if calc_id in refs:
                continue
            calc = matched.calcs[calc_id]
            shown = matched.display[calc_id]
            if part == "group":
                if str(calc["value"]).casefold() not in answer.casefold():
                    problems.append(f"the question asks which `{step.group}`: name the group ({ref}, "
                                    f"{calc['value']}), not only its value")  # fmt: skip
                continue
            if shown.rstrip("%").replace(",", "") in tokens:
                continue
            value = calc.get("value")
            near = [t for t in tokens if isinstance(value, int | float) and _rounds_to(t, float(value))]
            label = describe_step(step, request.filters) + (f" ({part})" if part != "value" else "")
            asked_decimals = request.decimals_for(part, step.op)
            if near and asked_decimals is not None:
                problems.append(f"{near[0]} has {_decimals_of(near[0])} decimals, but the question asks "
                                f"{asked_decimals} for the {label}: write {ref} ({shown})")  # fmt: skip
            else:
                problems.append(f"the answer gives no value for the {label}: write {ref} ({shown})")
    if request.form == "verdict":
        problems += _verdict_problems(answer, request, matched)
    return list(dict.fromkeys(problems))


def _rounds_to(token: str, value: float) -> bool:
    number = _as_number(token)
    if number is None:
        return False
    return format_rounded(value, _decimals_of(token)).replace(",", "") == token.lstrip("+")


def _verdict_problems(answer: str, request: StatRequest, matched: Matched) -> list[str]:
    for step, parts in zip(request.steps, matched.refs, strict=True):
        labels = {k.removeprefix("label:"): v for k, v in parts.items() if k.startswith("label:")}
        yes = verdict_yes(step, labels)
        if yes is None:
            continue
        found = _YES_RE.search(answer)
        word = ("yes" if yes else "no") if request.language != "ko" else ("예" if yes else "아니요")
        if found is None:
            return [f"the question asks yes or no: begin the answer with '{word}'"]
        said_yes = (found.group(1) or "").lower() == "yes" or found.group(2) == "예"
        if said_yes != yes:
            return [f"the answer says '{found.group(0)}', but the computed verdict is '{word}' "
                    f"({labels.get('verdict') or labels.get('strong')})"]  # fmt: skip
    return []


def not_computed_sentence(matched: Matched, language: str, *, analyze: bool) -> str:
    """The abstention for a request no verified figure of the job answers yet: what is lacking, in the question's
    language, and (without ``analyze``) how to compute it."""
    what = matched.lacking(language)
    if language == "ko":
        tail = "" if analyze else " (--analyze 옵션으로 다시 물으면 계산합니다)"
        return f"이 질문에는 답할 수 없습니다: 작업에 검증된 값이 없습니다 — {what}{tail}."
    tail = "" if analyze else " (ask with --analyze to compute it)"
    return refusal_sentence(f"no verified value of the {what}{tail}", language)


def refusal_reason(refused: Refusal, language: str) -> str:
    """Why the catalog cannot answer, in the question's language (a Korean sentence names the same terms)."""
    if language != "ko" or not refused.named:
        return refused.reason
    names = ", ".join(f"'{n}'" for n in refused.named)
    if refused.kind == MISSING_COLUMN:
        return f"데이터에 {names}에 해당하는 열이 없습니다"
    if refused.kind == UNSUPPORTED:
        return f"통계 카탈로그에 {names} 연산이 없습니다"
    if refused.kind == UNREAD:
        return f"질문의 '{refused.named[-1]}' 부분을 계산 요청으로 나타낼 수 없습니다"
    if refused.kind == AMBIGUOUS:
        return f"이름이 여러 열에 해당합니다 ({names}): 열 이름을 정확히 적어 주세요"
    return f"질문이 {names}을(를) 언급하지만 이를 쓰는 카탈로그 연산이 없습니다"


def refusal_sentence(reason: str, language: str) -> str:
    """The abstention for a question the catalog or the data cannot answer, naming what is missing."""
    if language == "ko":
        return f"이 질문에는 답할 수 없습니다: {reason}."
    return f"This question cannot be answered from the data: {reason}."
