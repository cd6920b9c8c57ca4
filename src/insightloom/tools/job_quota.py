"""Per-job quotas on the job folder: a script that writes gigabytes or hundreds of thousands of files is stopped with
a tool error naming the cap, before it slows every later script (and the service's job listing) or fills the disk."""

from __future__ import annotations

from pathlib import Path

from ..fileio import iter_real_files


def job_usage(root: Path, stop_after_files: int) -> tuple[int, int]:
    """(bytes, files) in the job folder, without following links; counting stops once past ``stop_after_files``."""
    size = files = 0
    for path in iter_real_files(root):
        files += 1
        try:
            size += path.lstat().st_size
        except OSError:
            continue
        if files > stop_after_files:
            break
    return size, files


def quota_problem(root: Path, max_mb: float, max_files: int) -> str | None:
    """What is over quota in the job folder, with the fix, or None when within both caps."""
    size, files = job_usage(root, max_files)
    if files > max_files:
        return (
            f"Quota exceeded: the job folder holds more than {max_files:,} files (setting max_job_files). "
            "Fix: delete the files the last script made that the report does not need, and write fewer, larger "
            "files (one CSV or Parquet instead of one file per row)."
        )
    if size > max_mb * 1024 * 1024:
        return (
            f"Quota exceeded: the job folder holds {size / 1024 / 1024:,.0f} MB, over {max_mb:,.0f} MB "
            "(setting max_job_mb). Fix: delete large intermediate files the last script wrote and keep only what "
            "the report needs."
        )
    return None
