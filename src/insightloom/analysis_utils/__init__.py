"""Helpers that analysis scripts import through ``code/coder_analysis_utils.py``.

The framework writes that module into each job's ``code/`` folder at job start (see :func:`generate_utils_module`),
so the helpers cost the Coder zero tokens and every script tracks numbers the same way.
"""

from __future__ import annotations

from insightloom.analysis_utils.calculations import (
    load_calculations,
    save_calculation_metadata,
    to_python_type,
    track_calculation,
)
from insightloom.analysis_utils.charts import save_chart
from insightloom.analysis_utils.claims import track_claim
from insightloom.analysis_utils.exit_checks import ChecksFailed, flush_checks
from insightloom.analysis_utils.group_trackers import GroupValues, track_group_values
from insightloom.analysis_utils.jobdir import job_dir, load_df, read_profile
from insightloom.analysis_utils.module import UTILS_FILENAME, generate_utils_module, write_utils_module
from insightloom.analysis_utils.numbers_text import compact_axis, compact_number
from insightloom.analysis_utils.result_notes import ResultSection, append_result, calc_refs, parse_results, read_results
from insightloom.analysis_utils.series_trackers import SplitSeries, track_split_series
from insightloom.analysis_utils.sql import qi, ql, ref, sql_all, sql_sum
from insightloom.analysis_utils.standard import run_standard
from insightloom.analysis_utils.statistics import recompute_statistic, run_statistics
from insightloom.analysis_utils.trackers import (
    AggregationRefused,
    track_change,
    track_corr,
    track_mean,
    track_rate,
    track_share,
    track_stat,
    track_total,
    track_value,
)
from insightloom.analysis_utils.verification import record_verification
from insightloom.errors import JoinRefused

__all__ = [
    "UTILS_FILENAME",
    "AggregationRefused",
    "GroupValues",
    "ChecksFailed",
    "JoinRefused",
    "ResultSection",
    "SplitSeries",
    "append_result",
    "calc_refs",
    "compact_axis",
    "compact_number",
    "flush_checks",
    "generate_utils_module",
    "job_dir",
    "load_calculations",
    "load_df",
    "parse_results",
    "qi",
    "ql",
    "read_profile",
    "read_results",
    "record_verification",
    "ref",
    "run_standard",
    "run_statistics",
    "recompute_statistic",
    "save_calculation_metadata",
    "save_chart",
    "sql_all",
    "sql_sum",
    "to_python_type",
    "track_calculation",
    "track_change",
    "track_claim",
    "track_corr",
    "track_group_values",
    "track_mean",
    "track_rate",
    "track_share",
    "track_split_series",
    "track_stat",
    "track_total",
    "track_value",
    "write_utils_module",
]
