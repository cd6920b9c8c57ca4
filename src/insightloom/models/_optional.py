"""Import an optional provider SDK, or fail with the extra that installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import ConfigError


def import_provider(module: str, extra: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(
            f"The {extra} provider needs an optional dependency that is not installed ({exc.name}).",
            f"pip install 'insightloom[{extra}]'",
        ) from exc
