"""The Coordinator → Planner → PlanReviewer → Supervisor flow."""

from .pipeline import JobOptions, JobOutcome, create_job, drive, load_runtime, resume, review, run_job, start
from .review import AutoApprove, Decision, Reviewer

__all__ = [
    "AutoApprove",
    "Decision",
    "JobOptions",
    "JobOutcome",
    "Reviewer",
    "create_job",
    "drive",
    "load_runtime",
    "resume",
    "review",
    "run_job",
    "start",
]
