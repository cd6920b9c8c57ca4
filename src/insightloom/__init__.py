"""insightloom: data files plus a request in, a verified and cited DOCX report out.

The public surface is small and loaded lazily, so ``insightloom --version`` does not import the agent runtime.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

try:
    __version__ = metadata.version("insightloom")
except metadata.PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"

_EXPORTS = {
    "InsightloomError": "insightloom.errors",
    "JobOptions": "insightloom.workflow",
    "JobOutcome": "insightloom.workflow",
    "Settings": "insightloom.config",
    "load_settings": "insightloom.config",
    "make_model": "insightloom.models",
    "run_job": "insightloom.workflow",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'insightloom' has no attribute {name!r}")
