"""The Coordinator → Planner → PlanReviewer → Supervisor flow."""

from .pipeline import JobOptions, JobOutcome, run_job
from .review import AutoApprove, Decision, Reviewer

__all__ = ["AutoApprove", "Decision", "JobOptions", "JobOutcome", "Reviewer", "run_job"]
