"""Per-job quotas on the job folder: a script that writes gigabytes or hundreds of thousands of files is stopped with
a tool error naming the cap, before it slows every later script (and the service's job listing) or fills the disk.

The runner watches both caps while a script runs (``execution.quota.QuotaWatch``); the tools check once more after
it ends, with the same no-follow count.
"""

from __future__ import annotations

from ..execution.quota import job_usage, quota_problem

__all__ = ["job_usage", "quota_problem"]
