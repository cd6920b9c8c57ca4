"""The demo report no longer contradicts itself (issue 20): run ``insightloom demo`` offline end to end and read it.

- Its trend sentence gives the trend claim's verdict (rising, falling, no clear trend or volatile) with the evidence,
  and a volatile year is never called rising, whatever its first and last months say.
- Its correlation sentence carries the outlier verdict: Revenue and Units are driven by a few extreme orders.
- "main driver" names the breakdown with the largest epsilon squared, computed here from the cached table, and never a
  breakdown whose total the report calls spread evenly.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from docx import Document

from insightloom.claims.wording import claim_text
from repo_paths import child_env

pytestmark = pytest.mark.e2e


def _demo(folder: Path) -> Path:
    job_dir = folder / "demo"
    env = child_env("AWS_ACCESS", "AWS_SECRET", "INSIGHTLOOM_")
    done = subprocess.run(
        [sys.executable, "-m", "insightloom", "demo", "--job-dir", str(job_dir)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return job_dir


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _demo(tmp_path_factory.mktemp("demo"))


def _claims(job: Path) -> list[dict[str, Any]]:
    records = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]
    return [c for c in records if c.get("kind") == "claim"]


def _sentences(job: Path) -> list[str]:
    """The DOCX body's sentences (references section excluded), as the reader sees them."""
    text = []
    for paragraph in Document(str(job / "final_report.docx")).paragraphs:
        if paragraph.text.strip() in ("References", "참고 문헌"):
            break
        text.append(paragraph.text)
    return [s for p in text for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`])", p) if s.strip()]


def _epsilon_squared(frame: pd.DataFrame, by: str, measure: str) -> float:
    """eta squared less what as many groups of noise would explain: (SSb - (k-1) MSw) / SSt."""
    rows = frame[[by, measure]].dropna()
    grand = rows[measure].mean()
    between = rows.groupby(by)[measure].agg(lambda g: len(g) * (g.mean() - grand) ** 2).sum()
    total = ((rows[measure] - grand) ** 2).sum()
    k, n = rows[by].nunique(), len(rows)
    return float((between - (k - 1) * (total - between) / (n - k)) / total)


def test_the_demo_trend_sentence_states_the_trend_claim_with_its_evidence(demo: Path) -> None:
    (trend,) = [c for c in _claims(demo) if c["claim_kind"] == "trend"]
    assert trend["value"] in ("rising", "falling", "no_clear_trend", "volatile")
    printed = claim_text(trend, "en")
    sentences = _sentences(demo)
    assert any(printed in s for s in sentences), printed
    if trend["value"] != "rising":
        assert not [s for s in sentences if re.search(r"\brising\b|\bis rising\b", s)]
    monthly = json.loads((demo / "citations.json").read_text(encoding="utf-8"))["citations"]
    assert {c["calculation_id"]: c["verification_status"] for c in monthly}[trend["id"]] == "verified"


def test_the_demo_correlation_sentence_carries_the_outlier_verdict(demo: Path) -> None:
    (corr,) = [c for c in _claims(demo) if c["claim_kind"] == "correlation"]
    assert corr["value"] == "driven_by_extremes"  # a few very large orders make r = 0.88
    printed = claim_text(corr, "en")
    assert "driven by a few extreme values" in printed
    assert any(printed in s for s in _sentences(demo))
    assert not [s for s in _sentences(demo) if "strong positive" in s]


def test_the_demo_main_driver_is_the_breakdown_with_the_largest_epsilon_squared(demo: Path) -> None:
    profile = json.loads((demo / "cache" / "profile.json").read_text(encoding="utf-8"))
    frame = pd.read_parquet(demo / profile["tables"][0]["parquet"])
    drivers = [c for c in _claims(demo) if c["claim_kind"] == "driver"]
    assert {c["test"]["params"]["by"] for c in drivers} == {"Region", "Channel", "Category"}
    eta = {by: _epsilon_squared(frame, by, "Revenue") for by in ("Region", "Channel", "Category")}
    best = max(eta, key=eta.__getitem__)
    assert best != "Region"  # the first breakdown by position is not the one that explains the most
    sentences = _sentences(demo)
    main = [s for s in sentences if "main driver" in s]
    assert main and all(s.startswith(best) or f"{best} is the main driver" in s for s in main), main
    for group in eta:  # never "main driver" of a breakdown the report calls spread evenly
        named_main = any(s.startswith(group) or f"{group} is the main driver" in s for s in main)
        even = any(re.search(rf"spread evenly across the .*\b{group} groups", s) for s in sentences)
        assert not (named_main and even), group
