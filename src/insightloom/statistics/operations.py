"""THE catalog of statistical operations: how each is computed, checked and named.

Each operation computes its parts from a (filtered) pandas frame with pandas, NumPy and SciPy, the reference
implementation (:func:`evaluate`). Every part that DuckDB can compute gets a SQL check (:func:`check_sql`) that the
script's own end-of-run check and the Validator run against the job's Parquet cache; the other parts (p-values, test
statistics, verdicts) are re-derived from their recipe by the Validator, which reads the rows through DuckDB, never
the Coder's frame (:func:`recompute`). The conventions, documented in ``docs/ask.md``:

- every statistic drops the rows where one of its columns is missing (after the request's filters); a share is of
  the rows where its condition's columns have a value (as pandas ``value_counts(normalize=True)``);
- ``std`` and ``var`` are the sample ones (``ddof`` 1) unless ``ddof`` 0 is asked; quantiles interpolate linearly;
- skewness and kurtosis are the bias-corrected sample ones (pandas ``skew``/``kurt``; kurtosis is excess);
- z-score outliers: ``|x - mean| / std > threshold`` with the sample std; IQR outliers: beyond ``Q1 - k·IQR`` or
  ``Q3 + k·IQR``;
- normality: Shapiro-Wilk up to 5,000 values, D'Agostino-Pearson beyond; normal when ``p >= alpha``;
- a test is significant when ``p < alpha``; a correlation's strength comes from the claims table's thresholds, and
  "strong" in a yes/no question means ``|r| >= strong_r`` (0.7 unless the question states another);
- the t-test is SciPy's default (equal variances) unless Welch is asked; the χ² test applies Yates' correction to a
  2×2 table, as SciPy does;
- a group extreme ties to the first group name in sorted order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from insightloom.analysis_utils.sql import qi, ql
from insightloom.claims.verdicts import strength
from insightloom.statistics.request import Filter, Step

#: Beyond this many values the normality test is D'Agostino-Pearson's (Shapiro-Wilk's p is unreliable there).
SHAPIRO_MAX = 5000
DEFAULT_ALPHA = 0.05
DEFAULT_STRONG_R = 0.7
GROUP_AGGS = ("mean", "sum", "count", "max", "min", "median")


@dataclass(frozen=True)
class Operation:
    """One catalog operation.

    Attributes:
        name: Its name in requests and recipes.
        kind: What it reads: ``one`` numeric column, a ``pair`` of numeric columns, a numeric column ``by`` a group
            column, a ``cross`` of two category columns, or ``rows`` (a count: a column optional).
        parts: The result's parts; the first is what the question gets when it asks for no other.
        label: Language -> its name in an answer ("standard deviation", "표준편차").
        defaults: Parameter defaults.
        labels: The parts that are labels, not numbers (a verdict, a group name, a test name).
    """

    name: str
    kind: str
    parts: tuple[str, ...]
    label: Mapping[str, str]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    labels: tuple[str, ...] = ()


def _op(name: str, kind: str, parts: tuple[str, ...], en: str, ko: str, labels: tuple[str, ...] = (),
        **defaults: Any) -> Operation:  # fmt: skip
    return Operation(name, kind, parts, {"en": en, "ko": ko}, defaults, labels)


_CORRELATION_PARTS = ("value", "p_value", "strength", "strong", "significant", "positive", "negative")
OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        _op("mean", "one", ("value",), "mean", "평균"),
        _op("std", "one", ("value",), "standard deviation", "표준편차", ddof=1),
        _op("var", "one", ("value",), "variance", "분산", ddof=1),
        _op("median", "one", ("value",), "median", "중앙값"),
        _op("quantile", "one", ("value",), "quantile", "분위수", q=0.5),
        _op("min", "one", ("value",), "minimum", "최솟값"),
        _op("max", "one", ("value",), "maximum", "최댓값"),
        _op("sum", "one", ("value",), "total", "합계"),
        _op("skew", "one", ("value",), "skewness", "왜도"),
        _op("kurtosis", "one", ("value",), "kurtosis (excess)", "첨도(초과)"),
        _op("zscore_outliers", "one", ("value",), "z-score outliers", "Z-점수 이상치 수", threshold=3.0),
        _op("iqr_outliers", "one", ("value",), "IQR outliers", "IQR 이상치 수", k=1.5),
        _op(
            "normality",
            "one",
            ("verdict", "p_value", "statistic", "test"),
            "normality test",
            "정규성 검정",
            ("verdict", "test"),
            alpha=DEFAULT_ALPHA,
        ),
        _op("count", "rows", ("value",), "count of rows", "행 수"),
        _op("distinct", "rows", ("value",), "number of distinct values", "고유값 수"),
        _op("missing", "rows", ("value",), "missing values", "결측값 수"),
        _op("share", "rows", ("value",), "share of rows (%)", "행 비율(%)"),
        *(
            _op(
                name,
                "pair",
                _CORRELATION_PARTS,
                en,
                ko,
                _CORRELATION_PARTS[2:],
                strong_r=DEFAULT_STRONG_R,
                alpha=DEFAULT_ALPHA,
            )  # fmt: skip
            for name, en, ko in (
                ("pearson", "Pearson correlation", "피어슨 상관계수"),
                ("spearman", "Spearman correlation", "스피어만 상관계수"),
                ("kendall", "Kendall tau", "켄달 타우"),
            )
        ),
        _op(
            "regression",
            "pair",
            ("slope", "intercept", "r_squared", "p_value", "significant"),
            "linear regression",
            "단순 선형 회귀",
            ("significant",),
            alpha=DEFAULT_ALPHA,
        ),
        _op(
            "ttest",
            "by",
            ("verdict", "p_value", "statistic"),
            "t-test",
            "t-검정",
            ("verdict",),
            alpha=DEFAULT_ALPHA,
            equal_var=True,
        ),
        _op(
            "anova",
            "by",
            ("verdict", "p_value", "statistic"),
            "one-way ANOVA",
            "일원분산분석",
            ("verdict",),
            alpha=DEFAULT_ALPHA,
        ),
        _op("group_max", "by", ("group", "value"), "group with the highest", "가장 높은 그룹", ("group",), agg="mean"),
        _op("group_min", "by", ("group", "value"), "group with the lowest", "가장 낮은 그룹", ("group",), agg="mean"),
        _op(
            "chi2",
            "cross",
            ("verdict", "p_value", "statistic", "dof"),
            "chi-square test of independence",
            "카이제곱 독립성 검정",
            ("verdict",),
            alpha=DEFAULT_ALPHA,
        ),
    )
}
#: Part -> language -> its name in an answer.
PART_LABELS: dict[str, dict[str, str]] = {
    "p_value": {"en": "p-value", "ko": "p-값"},
    "statistic": {"en": "test statistic", "ko": "검정통계량"},
    "dof": {"en": "degrees of freedom", "ko": "자유도"},
    "slope": {"en": "slope", "ko": "기울기"},
    "intercept": {"en": "intercept", "ko": "절편"},
    "r_squared": {"en": "R²", "ko": "결정계수(R²)"},
    "strength": {"en": "strength", "ko": "강도"},
    "group": {"en": "group", "ko": "그룹"},
}


def operation(name: str) -> Operation:
    """The catalog operation ``name``.

    Raises:
        KeyError: No operation has that name (the message lists them).
    """
    try:
        return OPERATIONS[name]
    except KeyError:
        raise KeyError(f"no catalog operation {name!r}; the catalog has: {', '.join(OPERATIONS)}") from None


def params_of(step: Step) -> dict[str, Any]:
    """The step's parameters over its operation's defaults."""
    return {**operation(step.op).defaults, **dict(step.params)}


def input_columns(step: Step) -> list[str]:
    """Every column the step reads, in order."""
    cols = [*step.columns, *([step.group] if step.group else [])]
    cols += [f.column for f in condition_of(step)]
    return list(dict.fromkeys(cols))


def condition_of(step: Step) -> tuple[Filter, ...]:
    """A share's numerator condition (``params["where"]``), as filters."""
    raw = dict(step.params).get("where") or ()
    return tuple(f if isinstance(f, Filter) else Filter.from_json(f) for f in raw)


# --- filters ---------------------------------------------------------------------------------------------------


def filter_mask(data: pd.DataFrame, filters: Sequence[Filter]) -> pd.Series:
    """The rows where every filter holds (a missing value never does)."""
    keep = pd.Series(True, index=data.index)
    for f in filters:
        series = data[f.column]
        if isinstance(f.value, str):
            text = series.astype("string")
            keep &= series.notna() & (text == f.value if f.op == "=" else text != f.value)
        else:
            number = pd.to_numeric(series, errors="coerce")
            keep &= number.notna() & _compare(number, f.op, float(f.value))
    return keep.fillna(False).astype(bool)


def _compare(values: pd.Series, op: str, bound: float) -> pd.Series:
    return {
        "=": values == bound, "!=": values != bound, ">": values > bound,
        ">=": values >= bound, "<": values < bound, "<=": values <= bound,
    }[op]  # fmt: skip


def filter_sql(filters: Sequence[Filter]) -> str:
    """The SQL twin of :func:`filter_mask` (empty when there is no filter)."""
    parts = []
    for f in filters:
        if isinstance(f.value, str):
            parts.append(f"CAST({qi(f.column)} AS VARCHAR) {'=' if f.op == '=' else '<>'} {ql(f.value)}")
        else:
            op = "<>" if f.op == "!=" else f.op
            parts.append(f"TRY_CAST({qi(f.column)} AS DOUBLE) {op} {float(f.value)!r}")
    return " AND ".join(parts)


# --- computing -------------------------------------------------------------------------------------------------


def _numbers(series: pd.Series) -> np.ndarray:
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    return values[np.isfinite(values)]


def _labels(series: pd.Series) -> pd.Series:
    return series.astype("string")


def _scipy() -> Any:
    from scipy import stats  # type: ignore[import-untyped]

    return stats


def _need(values: np.ndarray, count: int, what: str) -> None:
    if len(values) < count:
        raise ValueError(f"{what} needs at least {count} values; the rows kept have {len(values)}")


def _one(step: Step, data: pd.DataFrame, params: Mapping[str, Any]) -> dict[str, Any]:
    x = _numbers(data[step.columns[0]])
    _need(x, 1, operation(step.op).label["en"])
    op = step.op
    if op in ("mean", "sum", "min", "max", "median"):
        return {"value": float(getattr(np, {"mean": "mean", "sum": "sum", "min": "min", "max": "max",
                                            "median": "median"}[op])(x))}  # fmt: skip
    if op in ("std", "var"):
        ddof = int(params["ddof"])
        _need(x, ddof + 1, op)
        return {"value": float(np.std(x, ddof=ddof) if op == "std" else np.var(x, ddof=ddof))}
    if op == "quantile":
        return {"value": float(np.quantile(x, float(params["q"])))}
    if op == "skew":
        return {"value": float(pd.Series(x).skew())}  # type: ignore[arg-type]
    if op == "kurtosis":
        return {"value": float(pd.Series(x).kurt())}  # type: ignore[arg-type]
    if op == "zscore_outliers":
        _need(x, 2, "a z-score")
        sd = float(np.std(x, ddof=1))
        z = np.abs(x - x.mean()) / sd if sd > 0 else np.zeros_like(x)
        return {"value": int((z > float(params["threshold"])).sum())}
    if op == "iqr_outliers":
        q1, q3 = np.quantile(x, [0.25, 0.75])
        k = float(params["k"])
        return {"value": int(((x < q1 - k * (q3 - q1)) | (x > q3 + k * (q3 - q1))).sum())}
    if op == "normality":
        _need(x, 3, "a normality test")
        stats = _scipy()
        test = "Shapiro-Wilk" if len(x) <= SHAPIRO_MAX else "D'Agostino-Pearson"
        statistic, p = stats.shapiro(x) if len(x) <= SHAPIRO_MAX else stats.normaltest(x)
        verdict = "normal" if float(p) >= float(params["alpha"]) else "not_normal"
        return {"verdict": verdict, "p_value": float(p), "statistic": float(statistic), "test": test}
    raise KeyError(op)


def _rows(step: Step, data: pd.DataFrame, params: Mapping[str, Any]) -> dict[str, Any]:
    column = step.columns[0] if step.columns else None
    if step.op == "count":
        kept = (
            data[filter_mask(data, condition_of(step))] if condition_of(step) else data
        )  # "how many ... and what share"
        return {"value": int(len(kept) if column is None else kept[column].notna().sum())}
    if step.op == "distinct":
        return {"value": int(data[_col(step)].dropna().nunique())}
    if step.op == "missing":
        return {"value": int(data[_col(step)].isna().sum())}
    if step.op == "share":
        condition = condition_of(step)
        present = data.dropna(subset=list(dict.fromkeys(f.column for f in condition)))
        if not len(present):
            raise ValueError("a share needs rows with a value; the filters keep none")
        return {"value": 100.0 * float(filter_mask(present, condition).sum()) / len(present)}
    raise KeyError(step.op)


def _col(step: Step) -> str:
    if not step.columns:
        raise ValueError(f"{step.op} needs a column")
    return step.columns[0]


def _pair(step: Step, data: pd.DataFrame, params: Mapping[str, Any]) -> dict[str, Any]:
    x_name, y_name = step.columns[:2]
    both = pd.DataFrame({"x": pd.to_numeric(data[x_name], errors="coerce"),
                         "y": pd.to_numeric(data[y_name], errors="coerce")}).dropna()  # fmt: skip
    x, y = both["x"].to_numpy(dtype=float), both["y"].to_numpy(dtype=float)
    _need(x, 3, operation(step.op).label["en"])
    stats = _scipy()
    if step.op == "regression":
        fit = stats.linregress(x, y)
        p_value = float(fit.pvalue)
        return {"slope": float(fit.slope), "intercept": float(fit.intercept), "r_squared": float(fit.rvalue) ** 2,
                "p_value": p_value, "significant": _yes(p_value < float(params["alpha"]))}  # fmt: skip
    test = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[step.op]
    result = test(x, y)
    r, p = float(result[0]), float(result[1])
    if not math.isfinite(r):
        raise ValueError(f"the {step.op} correlation is undefined: a column is constant over the rows kept")
    return {"value": r, "p_value": p, "strength": strength(r), "strong": _yes(abs(r) >= float(params["strong_r"])),
            "significant": _yes(p < float(params["alpha"])), "positive": _yes(r > 0),
            "negative": _yes(r < 0)}  # fmt: skip


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _groups(step: Step, data: pd.DataFrame) -> pd.DataFrame:
    frame = pd.DataFrame({"g": _labels(data[str(step.group)])})
    frame["x"] = pd.to_numeric(data[step.columns[0]], errors="coerce") if step.columns else 1.0
    return frame.dropna()


def _by(step: Step, data: pd.DataFrame, params: Mapping[str, Any]) -> dict[str, Any]:
    frame = _groups(step, data)
    if step.op in ("group_max", "group_min"):
        agg = str(params["agg"])
        if agg not in GROUP_AGGS:
            raise ValueError(f"a group extreme aggregates with one of {', '.join(GROUP_AGGS)}, not {agg!r}")
        values = frame.groupby("g")["x"].agg("size" if agg == "count" else agg)
        if values.empty:
            raise ValueError("no group has a value in the rows kept")
        best = values.max() if step.op == "group_max" else values.min()
        name = sorted(str(g) for g, v in values.items() if v == best)[0]
        return {"group": name, "value": float(best) if agg != "count" else int(best)}
    stats = _scipy()
    alpha = float(params["alpha"])
    if step.op == "ttest":
        levels = [str(v) for v in params.get("levels") or sorted(frame["g"].unique())]
        if len(levels) != 2:
            raise ValueError(f"a t-test compares two groups; `{step.group}` has {len(levels)}: name two of them")
        a, b = (frame.loc[frame["g"] == level, "x"].to_numpy(dtype=float) for level in levels)
        _need(a, 2, f"group {levels[0]!r}")
        _need(b, 2, f"group {levels[1]!r}")
        statistic, p = stats.ttest_ind(a, b, equal_var=bool(params["equal_var"]))
    else:  # anova
        samples = [g["x"].to_numpy(dtype=float) for _name, g in frame.groupby("g") if len(g) > 0]
        if len(samples) < 2:
            raise ValueError("an ANOVA needs at least two groups with values")
        statistic, p = stats.f_oneway(*samples)
    if not math.isfinite(float(p)):
        raise ValueError(f"the {step.op} is undefined on these groups (a group is constant or too small)")
    verdict = "significant" if float(p) < alpha else "not_significant"
    return {"verdict": verdict, "p_value": float(p), "statistic": float(statistic)}


def _cross(step: Step, data: pd.DataFrame, params: Mapping[str, Any]) -> dict[str, Any]:
    a, b = step.columns[0], str(step.group or (step.columns[1] if len(step.columns) > 1 else ""))
    frame = pd.DataFrame({"a": _labels(data[a]), "b": _labels(data[b])}).dropna()
    table = pd.crosstab(frame["a"], frame["b"])
    if table.shape[0] < 2 or table.shape[1] < 2:
        raise ValueError("a chi-square test needs at least two values in each column")
    statistic, p, dof, _expected = _scipy().chi2_contingency(table.to_numpy())
    verdict = "significant" if float(p) < float(params["alpha"]) else "not_significant"
    return {"verdict": verdict, "p_value": float(p), "statistic": float(statistic), "dof": int(dof)}


_KINDS: dict[str, Callable[[Step, pd.DataFrame, Mapping[str, Any]], dict[str, Any]]] = {
    "one": _one, "rows": _rows, "pair": _pair, "by": _by, "cross": _cross,
}  # fmt: skip


def evaluate(step: Step, data: pd.DataFrame) -> dict[str, Any]:
    """Every part of the step's result on ``data`` (already filtered by the request).

    Raises:
        KeyError: The step names an unknown operation or column.
        ValueError: Too few values, or a result that is undefined on these rows (the message says why).
    """
    op = operation(step.op)
    missing = [c for c in input_columns(step) if c not in data.columns]
    if missing:
        raise KeyError(f"the table has no column {', '.join(map(repr, missing))}")
    return _KINDS[op.kind](step, data, params_of(step))


# --- checks ----------------------------------------------------------------------------------------------------


def _num(column: str) -> str:
    return f"TRY_CAST({qi(column)} AS DOUBLE)"


def _where(*conditions: str) -> str:
    kept = [c for c in conditions if c]
    return f" WHERE {' AND '.join(kept)}" if kept else ""


def check_sql(step: Step, view: str, filters: Sequence[Filter]) -> dict[str, str]:
    """Part -> a DuckDB query returning that part, for the parts SQL can compute (empty for the others)."""
    params, source, rows = params_of(step), qi(view), filter_sql(filters)
    if step.op in ("count", "distinct", "missing", "share"):
        return {"value": _rows_sql(step, source, rows)}
    if not step.columns:
        return {}
    x = _num(step.columns[0])
    base = f"FROM {source}{_where(rows, f'{x} IS NOT NULL')}"
    simple = {
        "mean": f"AVG({x})", "sum": f"SUM({x})", "min": f"MIN({x})", "max": f"MAX({x})",
        "median": f"quantile_cont({x}, 0.5)", "quantile": f"quantile_cont({x}, {float(params.get('q', 0.5))!r})",
        "skew": f"skewness({x})", "kurtosis": f"kurtosis({x})",
        "std": f"{'stddev_pop' if int(params.get('ddof', 1)) == 0 else 'stddev_samp'}({x})",
        "var": f"{'var_pop' if int(params.get('ddof', 1)) == 0 else 'var_samp'}({x})",
    }  # fmt: skip
    if step.op in simple:
        return {"value": f"SELECT {simple[step.op]} {base}"}
    if step.op == "zscore_outliers":
        stats_cte = f"WITH s AS (SELECT AVG({x}) AS m, stddev_samp({x}) AS sd {base})"
        keep = f"sd > 0 AND ABS({x} - m) / sd > {float(params['threshold'])!r}"
        return {"value": f"{stats_cte} SELECT COUNT(*) FROM {source}, s{_where(rows, keep)}"}
    if step.op == "iqr_outliers":
        k = float(params["k"])
        cte = f"WITH q AS (SELECT quantile_cont({x}, 0.25) AS q1, quantile_cont({x}, 0.75) AS q3 {base})"
        keep = f"({x} < q1 - {k!r} * (q3 - q1) OR {x} > q3 + {k!r} * (q3 - q1))"
        return {"value": f"{cte} SELECT COUNT(*) FROM {source}, q{_where(rows, keep)}"}
    if step.op in ("pearson", "regression") and len(step.columns) > 1:
        y = _num(step.columns[1])
        pair = f"FROM {source}{_where(rows, f'{x} IS NOT NULL', f'{y} IS NOT NULL')}"
        if step.op == "pearson":
            return {"value": f"SELECT corr({x}, {y}) {pair}"}
        return {"slope": f"SELECT regr_slope({y}, {x}) {pair}", "intercept": f"SELECT regr_intercept({y}, {x}) {pair}",
                "r_squared": f"SELECT regr_r2({y}, {x}) {pair}"}  # fmt: skip
    if step.op in ("group_max", "group_min") and step.group:
        return _group_sql(step, source, rows, params)
    return {}


def _rows_sql(step: Step, source: str, rows: str) -> str:
    if step.op == "count":
        nonnull = f"{qi(step.columns[0])} IS NOT NULL" if step.columns else ""
        return f"SELECT COUNT(*) FROM {source}{_where(rows, nonnull, filter_sql(condition_of(step)))}"
    if step.op == "distinct":
        return f"SELECT COUNT(DISTINCT {qi(_col(step))}) FROM {source}{_where(rows)}"
    if step.op == "missing":
        return f"SELECT COUNT(*) - COUNT({qi(_col(step))}) FROM {source}{_where(rows)}"
    condition = condition_of(step)
    present_sql = " AND ".join(f"{qi(c)} IS NOT NULL" for c in dict.fromkeys(f.column for f in condition))
    kept = filter_sql(condition) or "TRUE"
    return f"SELECT 100.0 * COUNT(*) FILTER (WHERE {kept}) / COUNT(*) FROM {source}{_where(rows, present_sql)}"


def _group_sql(step: Step, source: str, rows: str, params: Mapping[str, Any]) -> dict[str, str]:
    agg = str(params["agg"])
    group = f"CAST({qi(step.group)} AS VARCHAR)"
    if agg == "count":
        value, kept = "COUNT(*)", [rows, f"{qi(step.group)} IS NOT NULL"]
        if step.columns:
            kept.append(f"{_num(step.columns[0])} IS NOT NULL")
    else:
        x = _num(step.columns[0])
        fn = {"mean": "AVG", "sum": "SUM", "max": "MAX", "min": "MIN", "median": "MEDIAN"}[agg]
        value, kept = f"{fn}({x})", [rows, f"{qi(step.group)} IS NOT NULL", f"{x} IS NOT NULL"]
    order = "DESC" if step.op == "group_max" else "ASC"
    cte = f"WITH g AS (SELECT {group} AS g, {value} AS v FROM {source}{_where(*kept)} GROUP BY 1)"
    pick = f"{cte} SELECT {{what}} FROM g ORDER BY v {order}, g ASC LIMIT 1"
    return {"group": pick.format(what="g"), "value": pick.format(what="v")}


# --- the Validator's route -------------------------------------------------------------------------------------


def rows_sql(step: Step, view: str, filters: Sequence[Filter]) -> str:
    """The DuckDB query the Validator reads a step's input rows with (its columns, the request's filters)."""
    columns = ", ".join(qi(c) for c in input_columns(step)) or '1 AS "row"'
    return f"SELECT {columns} FROM {qi(view)}{_where(filter_sql(filters))}"


def recompute(step: Step, filters: Sequence[Filter], view: str, con: Any) -> dict[str, Any]:
    """Every part of the step re-derived from the rows DuckDB reads on ``con`` (the job's views), not from the
    Coder's frame: the Validator's route for the parts no SQL check covers."""
    frame = con.execute(rows_sql(step, view, filters)).df()
    return evaluate(step, frame)


def label_of(step: Step, language: str = "en") -> str:
    """The operation's name in an answer ("standard deviation", "표준편차")."""
    return operation(step.op).label["ko" if language == "ko" else "en"]
