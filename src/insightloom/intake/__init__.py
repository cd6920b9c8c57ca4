"""Data intake: inputs in, typed Parquet cache and a compact data profile out.

Public API::

    resolve_inputs(args, columns_file) -> (data_files, columns_file)
    ingest(inputs, job_dir, *, columns_file=None, max_file_mb=5120.0, tables=(), ...) -> DataProfile
    DataProfile / TableProfile / ColumnProfile
    view_name(stem, taken) -> str
"""

from insightloom.intake.ingest import PROFILE_FILE, ingest
from insightloom.intake.inputs import resolve_inputs
from insightloom.intake.profile import ColumnProfile, DataProfile, TableProfile
from insightloom.intake.view_names import view_name

__all__ = [
    "PROFILE_FILE",
    "ColumnProfile",
    "DataProfile",
    "TableProfile",
    "ingest",
    "resolve_inputs",
    "view_name",
]
