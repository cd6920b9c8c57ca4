"""``file_read``: read a file (or list a folder) of the job, and nothing outside it."""

from __future__ import annotations

from strands import tool
from strands.types.tools import AgentTool

from ..errors import BadInputError
from ..runtime import JobRuntime
from .job_paths import inside_job
from .tool_results import tool_error

MAX_CHARS = 60_000


def make_file_read(rt: JobRuntime) -> AgentTool:
    @tool(name="file_read")
    def file_read(path: str, offset: int = 0) -> str | dict:
        """Read a text file of the job folder, or list a folder.

        Args:
            path: Path relative to the job folder, e.g. all_results.txt or charts.
            offset: Character offset to continue a long file from.
        """
        try:
            target = inside_job(rt.root, path)
        except BadInputError as exc:
            return tool_error(str(exc))
        if not target.exists():
            return tool_error(f"{path} does not exist in the job folder. Fix: list the folder with file_read('.').")
        if target.is_dir():
            entries = sorted(p.name + ("/" if p.is_dir() else "") for p in target.iterdir())
            return "\n".join(entries) or "(empty folder)"
        text = target.read_text(encoding="utf-8", errors="replace")
        chunk = text[offset : offset + MAX_CHARS]
        if offset + MAX_CHARS < len(text):
            chunk += (
                f"\n[... {len(text) - offset - MAX_CHARS} more characters; call again with offset={offset + MAX_CHARS}]"
            )
        return chunk

    return file_read
