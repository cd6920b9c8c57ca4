"""Refuse up front the inputs that intake's memory or the job folder's quota cannot hold, naming the setting.

Intake still holds one table at a time in memory while it types it, so its peak grows with the biggest table: about
eight times the table's bytes over the interpreter's own (``benchmarks/intake_scale.py`` measured 7.8× at 4 million
rows). A file past the memory budget is refused before anything is copied, instead of the machine swapping or the
kernel killing the job halfway. The input copies and their Parquet cache count against ``max_job_mb``, so inputs
that would fill it before any script runs are refused the same way.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from insightloom.errors import BadInputError
from insightloom.intake.inputs import XLSX_SUFFIXES

#: Intake's peak memory per byte of the biggest table, and the interpreter's own (measured, see the module doc). A
#: JSON array is parsed whole into Python objects first, tens of bytes per byte of text.
MEMORY_PER_BYTE = 8.0
JSON_MEMORY_PER_BYTE = 40.0
BASE_MB = 256.0
#: The job folder holds each input's copy and its Parquet cache, which is no bigger than the copy in practice.
JOB_BYTES_PER_INPUT_BYTE = 2.0
_MB = 1024 * 1024


def default_memory_budget_mb() -> float:
    """Three quarters of the machine's memory (the rest for the agents, the scripts and the system)."""
    try:
        return 0.75 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / _MB
    except (ValueError, OSError, AttributeError):  # no sysconf: a budget that a laptop has
        return 8192.0


def table_bytes(path: Path) -> int:
    """The bytes intake reads for ``path``: a workbook's parts as unpacked, any other file as it is."""
    if path.suffix.lower() in XLSX_SUFFIXES:
        try:
            with zipfile.ZipFile(path) as archive:
                return sum(info.file_size for info in archive.infolist())
        except (zipfile.BadZipFile, OSError, ValueError):
            pass  # not a workbook after all: check_file says so, naming the file
    return path.stat().st_size


def _per_byte(path: Path) -> float:
    return JSON_MEMORY_PER_BYTE if path.suffix.lower() == ".json" else MEMORY_PER_BYTE


def check_budget(paths: list[Path], *, memory_budget_mb: float | None, max_job_mb: float) -> None:
    """Raise BadInputError naming the file, the need, the limit and its setting when the inputs cannot fit.

    Args:
        paths: The data files, already vetted by ``inputs.check_file``.
        memory_budget_mb: The setting ``memory_budget_mb``; None is :func:`default_memory_budget_mb`.
        max_job_mb: The job folder's quota (setting ``max_job_mb``).
    """
    if not paths:
        return
    budget = memory_budget_mb if memory_budget_mb is not None else default_memory_budget_mb()
    sizes = {path: table_bytes(path) for path in paths}
    biggest = max(paths, key=lambda p: _per_byte(p) * sizes[p])
    need = BASE_MB + _per_byte(biggest) * sizes[biggest] / _MB
    if need > budget:
        raise BadInputError(
            f"{biggest}: reading this {sizes[biggest] / _MB:,.0f} MB table needs about {need:,.0f} MB of memory, "
            f"over intake's memory budget of {budget:,.0f} MB (setting memory_budget_mb).",
            fix="run it on a machine with more memory and raise memory_budget_mb (env INSIGHTLOOM_MEMORY_BUDGET_MB), "
            "split the file, pass a JSON array as JSON Lines (.jsonl, read in chunks), or load it into PostgreSQL "
            "and run on its URL with --table (docs/sources.md).",
        )
    on_disk = sum(path.stat().st_size for path in paths) * JOB_BYTES_PER_INPUT_BYTE / _MB
    if on_disk > max_job_mb:
        raise BadInputError(
            f"The inputs and their Parquet cache take about {on_disk:,.0f} MB of the job folder, over its quota of "
            f"{max_job_mb:,.0f} MB (setting max_job_mb) before any script runs.",
            fix=f"raise max_job_mb in the config file (e.g. max_job_mb: {int(on_disk * 1.5)}), or pass a smaller "
            "extract.",
        )
