"""``file_read``: read a file (or list a folder) of the job, and nothing outside it.

The job folder is hostile input: a script may have planted a FIFO, a link (or swap one in while the host reads), a
huge file, or file names holding newlines and terminal escapes. So the path is checked lexically and opened once
through :func:`insightloom.fileio.read_window` (no link followed at any component, regular files and folders only,
opened without blocking), only the page returned is read, every failure is a tool error naming the path and the fix,
and listed names are escaped and fenced.
"""

from __future__ import annotations

import errno

from strands import tool
from strands.types.tools import AgentTool

from ..errors import BadInputError
from ..fileio import FolderEntry, Window, read_window
from ..printable import fenced, printable_name
from ..runtime import JobRuntime
from .job_paths import job_path
from .tool_results import tool_error

MAX_CHARS = 60_000
#: Entries of a folder shown: enough for any folder a job makes, few enough for the model's context.
MAX_LISTED = 1_000
_LISTED_FIX = "Fix: list the folder with file_read('.') and pass a path it shows."
#: Why an open failed, by errno, and what the model can do about it (anything else is named by its strerror).
_OS_PROBLEMS = {
    errno.EACCES: ("the host may not read it", "write it again from a script, or read another file"),
    errno.EPERM: ("the host may not read it", "write it again from a script, or read another file"),
    errno.ENXIO: ("it is a socket or device, not a file", "delete it from a script"),
    errno.ENAMETOOLONG: ("its name is too long", "list its folder and pass a name it shows"),
}
_MARKS = {"folder": "/", "link": "  [symbolic link: not followed]", "other": "  [not a regular file: not read]"}


def _os_problem(shown: str, exc: OSError) -> str:
    what, fix = _OS_PROBLEMS.get(exc.errno or 0, (exc.strerror or type(exc).__name__, "list the folder first"))
    return f"{shown} cannot be read: {what}. Fix: {fix}."


def _listing(shown: str, window: Window) -> str:
    """The folder's entries, one escaped name a line, in a fence no name can close or step out of."""
    entries: tuple[FolderEntry, ...] = window.entries or ()
    if not entries:
        return "(empty folder)"
    names = [printable_name(entry.name) + _MARKS.get(entry.kind, "") for entry in entries[:MAX_LISTED]]
    if len(entries) > MAX_LISTED:
        names.append(f"... and {len(entries) - MAX_LISTED:,} more")
    count = f"more than {len(entries):,}" if window.more else f"{len(entries):,}"
    listed = fenced("\n".join(names))
    return f"Folder {shown} holds {count} entries; folders end in /:\n{listed}"


def _page(window: Window, offset: int) -> str:
    if not window.more:
        return window.text
    end = offset + len(window.text)
    return (
        f"{window.text}\n[... more characters follow (the file holds {window.size:,} bytes); "
        f"call again with offset={end}]"
    )


def make_file_read(rt: JobRuntime) -> AgentTool:
    @tool(name="file_read")
    def file_read(path: str, offset: int = 0) -> str | dict:
        """Read a text file of the job folder, or list a folder.

        Args:
            path: Path relative to the job folder, e.g. all_results.txt or charts.
            offset: Character offset to continue a long file from.
        """
        shown = printable_name(path) or "."
        start = max(0, int(offset))
        try:
            window = read_window(job_path(rt.root, path), beneath=rt.root, offset=start, max_chars=MAX_CHARS)
        except FileNotFoundError:
            return tool_error(f"{shown} does not exist in the job folder. {_LISTED_FIX}")
        except BadInputError as exc:  # outside the job, a link on the way, not a regular file (UnsafePathError)
            return tool_error(printable_name(str(exc)))
        except OSError as exc:
            return tool_error(_os_problem(shown, exc))
        return _listing(shown, window) if window.entries is not None else _page(window, start)

    return file_read
