"""The context ablation on the demo job meets every target of the issue (the benchmark, run as a test)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "context_ablation.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("context_ablation_benchmark", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def test_engineered_policy_beats_the_naive_one_on_every_target(tmp_path: Path) -> None:
    benchmark = load_benchmark()
    figures, engineered, naive = benchmark.measure(tmp_path)
    assert engineered.status == "completed" and naive.status == "completed"
    assert benchmark.missed_targets(figures) == [], figures
    assert figures["input_ratio"] >= 3 and figures["peak_tokens"] <= 20_000
    assert figures["supervisor_growth"] < 1.5 and figures["cache_read_share"] >= 0.60
    assert figures["coder_system_tokens"] <= 4_000
    # Both walked the same steps: every analysis script of the plan, validation, render and audit.
    scripts = {p.name for p in (tmp_path / "engineered" / "code").glob("0*.py")}
    assert scripts and scripts == {p.name for p in (tmp_path / "naive" / "code").glob("0*.py")}
    assert naive.cache_read_share == 0 and naive.peak > engineered.peak
