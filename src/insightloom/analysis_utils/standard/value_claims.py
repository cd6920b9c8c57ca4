"""Claims about one measure's values: a sentinel code left out (``sentinel``) and extreme values (``outlier``).

A code such as 99999 or -1 standing for "unknown" is never a value: the trackers leave the profile's
``sentinel_values`` out of every total, mean, minimum, maximum and quantile (pandas and the DuckDB check alike), and
the report says so with the ``sentinel`` claim. The ``outlier`` claim says whether the values beyond the IQR fences
move the mean materially.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from insightloom.analysis_utils.claims import track_claim
from insightloom.analysis_utils.sql import dbl, qi
from insightloom.analysis_utils.standard._common import Context, stem
from insightloom.analysis_utils.trackers import column_facts, frame, measured, measured_sql, numeric

logger = logging.getLogger(__name__)


def sentinel_finding(ctx: Context, measure: str) -> str | None:
    """The sentence saying the measure's sentinel code is left out (None when the profile lists no code)."""
    facts = column_facts(ctx.view, measure)
    if not facts.sentinels:
        return None
    values = numeric(frame(ctx.view)[measure]).dropna()
    ref = track_claim(
        "sentinel",
        f"claim_sentinel_{ctx.prefix}{stem(ctx.table, measure)}",
        ctx.view,
        f"SELECT {dbl(measure)} AS v FROM {qi(ctx.view)} WHERE {qi(measure)} IS NOT NULL",
        {"measure": measure},
        rows=pd.DataFrame({"v": np.asarray(values, dtype=float)}),
        description=ctx.tx["d_sentinel"].format(m=measure),
        formula=ctx.tx["f_sentinel"],
        columns=[measure],
        importance="medium",
    )
    return ctx.tx["sentinel"].format(m=measure, claim=ref)


def outlier_claim(ctx: Context, prefix: str, measure: str) -> str:
    """The ``{{claim:ID}}`` of whether the values beyond the IQR fences move the measure's mean materially."""
    facts = column_facts(ctx.view, measure)
    values: pd.Series = measured(frame(ctx.view)[measure], facts).dropna() * facts.unit_scale
    expression = measured_sql(facts)
    scaled = expression if facts.unit_scale == 1 else f"{facts.unit_scale} * {expression}"
    return track_claim(
        "outlier",
        f"claim_outlier_{prefix}",
        ctx.view,
        f"SELECT {scaled} AS v FROM {qi(ctx.view)} WHERE {expression} IS NOT NULL",
        {"measure": measure, "unit": None if facts.unit == "count" else facts.unit},
        rows=pd.DataFrame({"v": np.asarray(values, dtype=float)}),
        description=ctx.tx["d_outlier"].format(m=measure),
        formula=ctx.tx["f_outlier"],
        columns=[measure],
        importance="medium",
    )
