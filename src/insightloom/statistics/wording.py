"""How requests and their results read: "mean of `Volume`, 2 decimals", and the answer's sentences.

The answer is worded here, in product code, from the computed parts: a yes/no verdict from the test's p-value and
the request's α, a group's name, each value behind its ``{{calc:ID}}`` reference. A hosted model gets the same
sentences as its computed block; the offline model copies them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from insightloom.statistics import operations as ops
from insightloom.statistics.request import Filter, StatRequest, Step

_AGG_WORDS = {
    "en": {"mean": "average", "sum": "total", "count": "row count", "max": "highest single value",
           "min": "lowest single value", "median": "median"},
    "ko": {"mean": "평균", "sum": "합계", "count": "행 수", "max": "최댓값", "min": "최솟값", "median": "중앙값"},
}  # fmt: skip
_YES = {"en": ("Yes", "No"), "ko": ("예", "아니요")}


def _where(filters: Sequence[Filter], language: str = "en") -> str:
    if not filters:
        return ""
    joined = " and ".join(f.text() for f in filters)
    return f" where {joined}" if language != "ko" else f" ({joined})"


def _params(step: Step) -> str:
    p = ops.params_of(step)
    text = ""
    if step.op in ("std", "var"):
        text = "sample, ddof 1" if int(p.get("ddof", 1)) == 1 else "population, ddof 0"
    elif step.op == "quantile":
        text = f"q {float(p.get('q', 0.5)):g}"
    elif step.op == "zscore_outliers":
        text = f"|z| > {float(p.get('threshold', 3)):g}"
    elif step.op == "iqr_outliers":
        text = f"{float(p.get('k', 1.5)):g} × IQR"
    elif step.op == "ttest":
        text = f"{'equal variances' if p.get('equal_var') else 'Welch'}, α {float(p.get('alpha', 0.05)):g}"
    elif step.op in ("normality", "anova", "chi2"):
        text = f"α {float(p.get('alpha', 0.05)):g}"
    elif step.op in ("group_max", "group_min"):
        text = f"by {_AGG_WORDS['en'].get(str(p.get('agg')), p.get('agg'))}"
    return f" ({text})" if text else ""


def _operands(step: Step) -> str:
    cols = " and ".join(f"`{c}`" for c in step.columns)
    if step.op in ("ttest", "anova", "group_max", "group_min") and step.group:
        levels = ops.params_of(step).get("levels")
        by = f"`{step.group}`" + (f" ({' vs '.join(map(str, levels))})" if levels else "")
        return f"{cols or 'rows'} by {by}"
    if step.op == "chi2":
        return f"`{step.columns[0]}` and `{step.group}`"
    if step.op == "regression" and len(step.columns) == 2:
        return f"`{step.columns[1]}` on `{step.columns[0]}`"
    if step.op == "share":
        condition = " and ".join(f.text() for f in ops.condition_of(step))
        return f"rows with {condition}" if condition else "rows"
    return cols or "rows"


def describe_step(step: Step, filters: Sequence[Filter] = ()) -> str:
    """One step in words: "standard deviation (sample, ddof 1) of `Volume` where `Region` = 'West'"."""
    if step.op in ("group_max", "group_min") and step.group:
        agg = str(ops.params_of(step).get("agg"))
        extreme = "highest" if step.op == "group_max" else "lowest"
        what = "row count" if agg == "count" else f"{_AGG_WORDS['en'].get(agg, agg)} of `{step.columns[0]}`"
        return f"`{step.group}` with the {extreme} {what}{_where(filters)}"
    return f"{ops.label_of(step)}{_params(step)} of {_operands(step)}{_where(filters)}"


def part_description(step: Step, filters: Sequence[Filter], part: str) -> str:
    """A tracked part's description (the references list prints it)."""
    head = describe_step(step, filters)
    label = ops.PART_LABELS.get(part, {}).get("en")
    return f"{head}: {label}" if label and part != "value" else head


def describe_request(request: StatRequest) -> str:
    """What was computed, for the page and ``-v``: "mean of `Volume`; standard deviation ... ; 2 decimals"."""
    steps = "; ".join(describe_step(s, request.filters) for s in request.steps)
    tail = f", {request.decimals} decimals" if request.decimals is not None else ""
    form = {"verdict": ", a yes/no verdict", "name": ", the group's name"}.get(request.form, "")
    return f"{steps}{tail}{form}"


def verdict_yes(step: Step, parts: Mapping[str, str]) -> bool | None:
    """Whether the yes/no question the step answers is answered yes (None when it asks no yes/no)."""
    params = ops.params_of(step)
    if step.op == "normality":
        return parts.get("verdict") == "normal"
    if step.op in ("pearson", "spearman", "kendall", "regression") and "significant" in parts:
        return parts.get("significant") == "yes"
    if step.op in ("pearson", "spearman", "kendall"):
        return parts.get("strong") == "yes" if "strong" in parts else None
    if step.op in ("ttest", "anova", "chi2"):
        significant = parts.get("verdict") == "significant"
        return (not significant) if params.get("invert") else significant
    return None


def _verdict_words(step: Step, parts: Mapping[str, str], language: str) -> str:
    p = ops.params_of(step)
    verdict = parts.get("verdict", "")
    if step.op == "normality":
        word = {"normal": "normally distributed", "not_normal": "not normally distributed"}.get(verdict, verdict)
        ko = {"normal": "정규분포를 따름", "not_normal": "정규분포를 따르지 않음"}.get(verdict, verdict)
        return ko if language == "ko" else f"`{step.columns[0]}` is {word} (α {p.get('alpha'):g})"
    if step.op in ("ttest", "anova", "chi2"):
        word = {"significant": "significant", "not_significant": "not significant"}.get(verdict, verdict)
        ko = {"significant": "유의함", "not_significant": "유의하지 않음"}.get(verdict, verdict)
        return ko if language == "ko" else f"the result is {word} at α {p.get('alpha'):g}"
    return ""


def answer_sentences(request: StatRequest, refs: Sequence[Mapping[str, str]]) -> list[str]:
    """The answer, one sentence per step, each value as its ``{{calc:ID}}`` reference.

    Args:
        request: The request answered.
        refs: Per step, part -> its reference (``{{calc:ID}}``) and, under ``"label:<part>"``, a label part's
            value (a verdict word, a group name) as computed.
    """
    lang = "ko" if request.language == "ko" else "en"
    sentences: list[str] = []
    for step, parts in zip(request.steps, refs, strict=True):
        labels = {k.removeprefix("label:"): v for k, v in parts.items() if k.startswith("label:")}
        shown = [p for p in (step.show or ops.operation(step.op).parts[:1]) if p in parts]
        if "verdict" in shown and "p_value" in parts and "p_value" not in shown:
            shown.append("p_value")
        lead = ""
        yes = verdict_yes(step, labels)
        if request.form == "verdict" and yes is not None:
            lead = f"{_YES[lang][0 if yes else 1]}: "
        what = describe_step(step, request.filters)
        values = []
        for part in shown:
            if part in ("verdict", "strong", "significant"):
                continue
            label = ops.PART_LABELS.get(part, {}).get(lang, "")
            ref = parts[part]
            values.append(f"{label} {ref}" if label and part not in ("value", "group") else ref)
        body = _verdict_words(step, labels, lang)
        if step.op in ("group_max", "group_min") and "group" in parts:
            value = parts.get("value", "")
            body = f"{parts['group']}" + (f" ({value})" if value else "")
            values = []
        if "significant" in shown:
            yes_ = labels.get("significant") == "yes"
            body = f"{'significant' if yes_ else 'not significant'} at α {ops.params_of(step).get('alpha'):g}"
        elif "strong" in shown:
            strong = labels.get("strong") == "yes"
            body = f"|r| is {'at least' if strong else 'below'} {ops.params_of(step).get('strong_r'):g}"
        text = f"{lead}{what}: " + "; ".join(x for x in [body, *values] if x) + "."
        sentences.append(text[0].upper() + text[1:])
    return sentences
