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


def _params(step: Step, full: bool = True) -> str:
    """The method in words. ``full=False`` (an answer's sentence) prints only the numbers the question set, so an
    answer types no number nobody asked (the catalog's defaults are in docs/ask.md)."""
    p = ops.params_of(step) if full else {**dict(step.params)}
    text = ""
    if step.op in ("std", "var"):
        ddof = int(ops.params_of(step).get("ddof", 1))
        text = (
            ("sample, ddof 1" if ddof == 1 else "population, ddof 0") if full else ("sample" if ddof else "population")
        )
    elif step.op == "quantile" and "q" in p:
        text = f"q {float(p['q']):g}"
    elif step.op == "zscore_outliers" and "threshold" in p:
        text = f"|z| > {float(p['threshold']):g}"
    elif step.op == "iqr_outliers" and "k" in p:
        text = f"{float(p['k']):g} × IQR"
    elif step.op == "ttest":
        equal = ops.params_of(step).get("equal_var")
        text = ", ".join(x for x in ("equal variances" if equal else "Welch", _alpha_words(p)) if x)
    elif step.op in ("normality", "anova", "chi2"):
        text = _alpha_words(p)
    elif step.op in ("group_max", "group_min"):
        agg = ops.params_of(step).get("agg")
        text = f"by {_AGG_WORDS['en'].get(str(agg), agg)}"
    return f" ({text})" if text else ""


def _alpha_words(params: Mapping[str, object]) -> str:
    alpha = params.get("alpha")
    return f"α {float(alpha):g}" if isinstance(alpha, int | float) else ""


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


def describe_step(step: Step, filters: Sequence[Filter] = (), language: str = "en", *, full: bool = True) -> str:
    """One step in words: "standard deviation (sample, ddof 1) of `Volume` where `Region` = 'West'" (Korean with
    ``language="ko"``: "`Volume`의 표준편차 (`Region` = 'West')")."""
    if step.op == "count" and not step.columns:  # "count of rows", never "count of rows of rows"
        return f"{ops.label_of(step, language)}{_where(filters, language)}"
    condition = " and ".join(f.text() for f in ops.condition_of(step)) if step.op == "share" else ""
    if condition:  # "share of rows (%) with `depth` < 300"
        head = (
            f"{ops.label_of(step, language)} with {condition}"
            if language != "ko"
            else (f"{condition.replace(' and ', ', ')}인 {ops.label_of(step, language)}")
        )
        return head + _where(filters, language)
    if language == "ko":
        return _describe_ko(step, filters, full)
    if step.op in ("group_max", "group_min") and step.group:
        agg = str(ops.params_of(step).get("agg"))
        extreme = "highest" if step.op == "group_max" else "lowest"
        what = "row count" if agg == "count" else f"{_AGG_WORDS['en'].get(agg, agg)} of `{step.columns[0]}`"
        if agg in ("max", "min"):  # one row's own value: "`star` with the highest `temp`"
            what = f"`{step.columns[0]}`"
        return f"`{step.group}` with the {extreme} {what}{_where(filters)}"
    return f"{ops.label_of(step)}{_params(step, full)} of {_operands(step)}{_where(filters)}"


def _describe_ko(step: Step, filters: Sequence[Filter], full: bool) -> str:
    where = _where(filters, "ko")
    if step.op in ("group_max", "group_min") and step.group:
        agg = str(ops.params_of(step).get("agg"))
        extreme = "가장 높은" if step.op == "group_max" else "가장 낮은"
        what = "행 수" if agg == "count" else f"`{step.columns[0]}` {_AGG_WORDS['ko'].get(agg, agg)}"
        return f"{what}이(가) {extreme} `{step.group}`{where}"
    operands = _operands(step).replace(" and ", ", ").replace(" by ", " / ").replace(" on ", " ~ ")
    return f"{operands}의 {ops.label_of(step, 'ko')}{_params(step, full)}{where}"


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
        sign = next((p for p in ("positive", "negative") if p in parts), None)  # "is the correlation positive?"
        if sign is not None:
            return parts.get(sign) == "yes"
        return parts.get("strong") == "yes" if "strong" in parts else None
    if step.op in ("ttest", "anova", "chi2"):
        significant = parts.get("verdict") == "significant"
        return (not significant) if params.get("invert") else significant
    return None


def _verdict_words(step: Step, parts: Mapping[str, str], language: str) -> str:
    at = _alpha_words(dict(step.params))
    verdict = parts.get("verdict", "")
    if step.op == "normality":
        word = {"normal": "normally distributed", "not_normal": "not normally distributed"}.get(verdict, verdict)
        ko = {"normal": "정규분포를 따름", "not_normal": "정규분포를 따르지 않음"}.get(verdict, verdict)
        return ko if language == "ko" else f"`{step.columns[0]}` is {word}" + (f" ({at})" if at else "")
    if step.op in ("ttest", "anova", "chi2"):
        word = {"significant": "significant", "not_significant": "not significant"}.get(verdict, verdict)
        ko = {"significant": "유의함", "not_significant": "유의하지 않음"}.get(verdict, verdict)
        return ko if language == "ko" else f"the result is {word}" + (f" at {at}" if at else "")
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
        what = describe_step(step, request.filters, lang, full=False)
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
            at = _alpha_words(dict(step.params))
            body = f"{'significant' if yes_ else 'not significant'}" + (f" at {at}" if at else "")
        elif "positive" in shown or "negative" in shown:
            sign = "positive" if "positive" in shown else "negative"
            yes_sign = labels.get(sign) == "yes"
            ko = {"positive": "양의 상관", "negative": "음의 상관"}[sign] + ("임" if yes_sign else "이 아님")
            body = ko if lang == "ko" else f"the correlation is {'' if yes_sign else 'not '}{sign}"
        elif "strong" in shown:
            strong = labels.get("strong") == "yes"
            asked = dict(step.params).get("strong_r")
            bound = f"{float(asked):g}" if isinstance(asked, int | float) else "the strong threshold (docs/ask.md)"
            body = f"|r| is {'at least' if strong else 'below'} {bound}"
        text = f"{lead}{what}: " + "; ".join(x for x in [body, *values] if x) + "."
        sentences.append(text[0].upper() + text[1:])
    return sentences
