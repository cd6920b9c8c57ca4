"""The source of ``code/coder_analysis_utils.py``, written into each job at start.

Scripts do ``from coder_analysis_utils import load_df, track_calculation, ...``; the module only re-exports the
package's helpers (explicitly, no ``import *``) so the behaviour lives in one tested place.
"""

from __future__ import annotations

import logging
from pathlib import Path

from insightloom.fileio import write_text_atomic

logger = logging.getLogger(__name__)

UTILS_FILENAME = "coder_analysis_utils.py"
EXPORTS = (
    "load_df",
    "to_python_type",
    "track_calculation",
    "flush_checks",
    "save_calculation_metadata",
    "append_result",
    "save_chart",
    "read_results",
    "record_verification",
    "sql_sum",
    "sql_all",
    "qi",
    "ql",
    "ref",
    "compact_number",
    "compact_axis",
    "AggregationRefused",
    "JoinRefused",
    "track_total",
    "track_mean",
    "track_stat",
    "track_share",
    "track_rate",
    "track_change",
    "track_corr",
    "track_group_values",
    "track_split_series",
    "track_value",
    "track_claim",
    "run_standard",
    "run_statistics",
    "recompute_statistic",
)


def generate_utils_module() -> str:
    """Return the Python source of ``coder_analysis_utils.py``."""
    names = "".join(f"    {name},\n" for name in EXPORTS)
    listed = "".join(f'    "{name}",\n' for name in EXPORTS)
    return (
        '"""Analysis helpers for this job, written by insightloom at job start (do not edit).\n\n'
        "Use load_df() for the cached data, track_calculation(...) for every reported number (with a DuckDB SQL\n"
        "check), append_result(...) for findings that cite numbers as {{calc:<id>}}, and save_chart(...) for charts.\n"
        "The checks run when the script ends (flush_checks() runs them earlier); a failing one fails the script.\n"
        "The Validator's own scripts record what they re-computed with record_verification({id: value}).\n"
        "Build a check over many columns with sql_sum([...]) and sql_all([...]): DuckDB cannot parse a + b + ...\n"
        "over a thousand columns, these nest the terms so it can. qi(name)/ql(value) quote SQL names/literals,\n"
        "ref(id) is the {{calc:id}} text, compact_number(x) a tick label (12.5K).\n"
        "Trackers compute a value AND its check from one spec, track it and return ref(id): track_total,\n"
        "track_mean, track_stat, track_share, track_rate, track_change, track_corr, track_group_values,\n"
        "track_split_series (a trend per period of each of the largest groups of a category). They read\n"
        "the profile's aggregation/semantic/unit and raise AggregationRefused (with the fix) for a forbidden sum.\n"
        "A view named <child>+<parent> (the profile's relationships) is the child left-joined along a foreign key,\n"
        "in load_df, trackers and quoted in checks; a join that would multiply rows raises JoinRefused.\n"
        "run_standard(plan_item) runs a standard plan item (overview, KPIs, breakdown, trend, ...) end to end.\n"
        "run_statistics(plan_item) computes a statistics-catalog item (mean, std, quantiles, outliers, normality,\n"
        "correlations, t-test, chi-square, ANOVA, regression, group extremes...) and tracks every part, checked.\n"
        "track_claim(kind, id, view, sql, params, description=...) tests a claim (trend, driver, concentration,\n"
        "correlation, outlier, sentinel, comparison) and returns {{claim:id}}: cite it, never write the verdict.\n"
        '"""\n\n'
        f"from insightloom.analysis_utils import (\n{names})\n\n"
        f"__all__ = [\n{listed}]\n"
    )


def write_utils_module(code_dir: Path) -> Path:
    """Write ``coder_analysis_utils.py`` into ``code_dir`` (created when missing) and return its path.

    The host writes it into the job folder (``code_dir``'s parent) without following a link a script planted there.
    """
    path = code_dir / UTILS_FILENAME
    write_text_atomic(path, generate_utils_module(), beneath=code_dir.parent)
    logger.debug("wrote %s", path)
    return path
