"""The later stages' modules are imported on a thread during the job; one that cannot be imported is left alone."""

from __future__ import annotations

import logging
import sys

import pytest

from insightloom.workflow import prewarm as prewarm_module


def test_prewarm_imports_the_later_modules_and_skips_one_that_fails(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    monkeypatch.setattr(prewarm_module, "LATER_MODULES", ("no_such_module_for_prewarm", "colorsys"))
    with caplog.at_level(logging.DEBUG, logger="insightloom.workflow.prewarm"):
        prewarm_module.prewarm().join(timeout=60)
    assert "colorsys" in sys.modules
    assert "no_such_module_for_prewarm not imported" in caplog.text


def test_the_real_list_names_modules_that_exist() -> None:
    import importlib.util

    assert all(importlib.util.find_spec(name) is not None for name in prewarm_module.LATER_MODULES)
