"""Run the checks a script tracked when the script ends (or at ``flush_checks()``), as one DuckDB batch.

``track_calculation(..., check=...)`` only remembers the check here. The runner's child calls
:func:`run_at_script_end` after the script (it ends with ``os._exit``, so ``atexit`` never runs there), and an
``atexit`` handler does the same for ``python code/x.py`` run by hand in the job folder. A failing check makes the
script fail, with one line per check naming the cause and the fix, so the Coder can repair it in the same turn
instead of the Validator finding it when nobody can change it any more.

The pending checks live in the script's own process and are keyed by job folder; running them empties the list, so
an explicit flush followed by the script's end runs each check once.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Any

from insightloom.errors import ValidationError

logger = logging.getLogger(__name__)

# Job folder -> calculation id -> the tracked record whose check has not run yet (a re-track replaces it).
_pending: dict[Path, dict[str, dict[str, Any]]] = {}
# The main script's path, taken while it runs: CPython deletes ``__main__.__file__`` before atexit handlers run.
_main_script: list[Path] = []


class ChecksFailed(ValidationError):
    """Some tracked checks do not reproduce their values (the message lists each with its cause and fix)."""


def remember(folder: Path, record: dict[str, Any]) -> None:
    """Queue ``record``'s check for the script's end; a re-tracked id without a check drops its old one."""
    checks = _pending.setdefault(folder, {})
    checks.pop(str(record["id"]), None)
    if record.get("check"):
        checks[str(record["id"])] = record
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file and not _main_script:
        _main_script.append(Path(main_file).resolve())


def has_pending() -> bool:
    """True when some tracked check has not run yet (scripts without checks pay nothing at their end)."""
    return any(_pending.values())


def _run_pending() -> tuple[int, str]:
    """Run and forget every pending check; return the number verified and the failure report (empty when none)."""
    from insightloom.validation.script_checks import failure_report, run_script_checks

    batches = [(folder, list(checks.values())) for folder, checks in _pending.items() if checks]
    _pending.clear()
    verified, reports = 0, []
    for folder, records in batches:
        passed, failures = run_script_checks(folder, records)
        verified += passed
        if failures:
            reports.append(failure_report(failures, len(records)))
    return verified, "\n".join(reports)


def flush_checks() -> int:
    """Run the checks tracked so far now, as one DuckDB batch, instead of waiting for the script's end.

    Returns:
        How many checks reproduced their tracked value.

    Raises:
        ChecksFailed: Some checks did not; the message names each one, what it returned, the likely cause and fix.
    """
    verified, report = _run_pending()
    if report:
        raise ChecksFailed(report)  # the report ends with what to do
    return verified


def run_at_script_end() -> bool:
    """Run the pending checks and print the outcome: one short line when all pass, else the failure report.

    Returns:
        False when a check failed or the checks could not run (the script must then fail).
    """
    if not has_pending():
        return True
    try:
        verified, report = _run_pending()
    except Exception as exc:  # an unreadable profile, DuckDB unable to start: the script must still fail clearly
        print(f"insightloom: the tracked checks could not run at script end: {exc}", file=sys.stderr)
        return False
    if report:
        print(report, file=sys.stderr)
        return False
    print(f"checks: {verified} verified at script end")
    return True


def _main_script_in(folders: list[Path]) -> bool:
    """True when the process runs a script file of one of these job folders (not pytest or a host process)."""
    return any(script.is_relative_to(folder) for script in _main_script for folder in folders)


def _at_exit() -> None:
    """``python code/x.py`` outside the runner: the same checks; a failure turns the exit code to 1."""
    if not has_pending() or not _main_script_in([folder for folder, checks in _pending.items() if checks]):
        return
    if run_at_script_end():
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    os._exit(1)  # an atexit handler cannot change the exit code any other way


atexit.register(_at_exit)
