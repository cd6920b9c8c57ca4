"""The tools agents use. Each factory binds a tool to one job's runtime."""

from .bash import make_bash_tool
from .file_read import make_file_read
from .handoff import make_handoff
from .plan_update import make_update_plan

__all__ = ["make_bash_tool", "make_file_read", "make_handoff", "make_update_plan"]
