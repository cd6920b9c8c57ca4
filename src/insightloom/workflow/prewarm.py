"""Imports the last stages need, made on a thread while the Supervisor waits on the agents' scripts.

The Validator's SciPy re-computation and the follow-up index each import seconds of modules on first use, and by then
the host has been idle for most of the job, waiting on sandboxed scripts. A daemon thread imports them meanwhile; the
import lock makes a stage that gets there first simply wait for the module. Nothing here is required: a module that
fails to import is left for its stage to report.
"""

from __future__ import annotations

import importlib
import logging
import threading

logger = logging.getLogger(__name__)

#: Imported on first use by the Validator (claim re-computation) and by the follow-up index at the end of a job.
LATER_MODULES = ("scipy.stats", "insightloom.ask.fragments")


def _import_later() -> None:
    for name in LATER_MODULES:
        try:
            importlib.import_module(name)
        except Exception as exc:  # its stage imports it again and reports the error there
            logger.debug("prewarm: %s not imported: %s", name, exc)


def prewarm() -> threading.Thread:
    """Start importing :data:`LATER_MODULES` on a daemon thread; returns the thread."""
    thread = threading.Thread(target=_import_later, name="insightloom-prewarm", daemon=True)
    thread.start()
    return thread
