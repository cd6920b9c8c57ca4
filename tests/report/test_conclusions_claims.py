"""Conclusions draw only on verified claims, and never print two that contradict each other (issue 20).

The claims are tracked with the product's ``track_claim`` on a small table and verified by the Validator, as in a
job: the main driver is the breakdown with the largest eta squared (not the first by position), its concentration
is that same breakdown's, "main driver" is never printed for a breakdown whose total is spread evenly, and a claim
that failed its re-computation is never cited.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from insightloom.analysis_utils import flush_checks, track_value
from insightloom.analysis_utils.claims import track_claim
from insightloom.analysis_utils.result_notes import ResultSection, format_section
from insightloom.calc_refs import CLAIM_REF_RE
from insightloom.claims.wording import claim_text
from insightloom.intake import ingest
from insightloom.report.conclusions import conclusions
from insightloom.report.draft import draft_report
from insightloom.report.render import check_markdown
from insightloom.validation import validate_job

VIEW = "sales"


def _job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame) -> Path:
    job = tmp_path / "job"
    job.mkdir()
    frame.to_csv(tmp_path / "sales.csv", index=False)
    ingest([tmp_path / "sales.csv"], job)
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(job))
    return job


def _driver_sql(candidates: tuple[str, ...]) -> str:
    return " UNION ALL ".join(
        f"SELECT '{c}' AS breakdown, CAST({c} AS VARCHAR) AS grp, CAST(amount AS DOUBLE) AS v FROM {VIEW}"
        for c in candidates
    )


def _breakdowns(candidates: tuple[str, ...]) -> None:
    """A driver and a concentration claim per breakdown of amount, tracked like the standard breakdown does."""
    for by in candidates:
        params = {"measure": "amount", "by": by, "candidates": list(candidates)}
        track_claim("driver", f"claim_driver_amount_by_{by}", VIEW, _driver_sql(candidates), params,
                    description=f"How much of amount {by} explains", columns=[by, "amount"])  # fmt: skip
        track_claim("concentration", f"claim_concentration_amount_by_{by}", VIEW,
                    f"SELECT {by} AS grp, SUM(amount) AS v FROM {VIEW} GROUP BY 1", {"measure": "amount", "by": by},
                    description=f"Concentration of amount by {by}", columns=[by, "amount"])  # fmt: skip


def _top_group(by: str, frame: pd.DataFrame) -> None:
    totals = frame.groupby(by)["amount"].sum().sort_values(ascending=False)
    order = f"SELECT {by} AS g, SUM(amount) AS v FROM {VIEW} GROUP BY 1 ORDER BY v DESC"
    cols = [by, "amount"]
    track_value(f"amount_by_{by}_top", str(totals.index[0]), f"Largest {by}", "top group", VIEW, cols, "high",
                f"SELECT g FROM ({order}) LIMIT 1")  # fmt: skip
    for i in (1, 2):
        track_value(f"amount_by_{by}_{i}", float(totals.iloc[i - 1]), f"amount of group {i}", "group total", VIEW,
                    cols, "high", f"SELECT v FROM ({order}) LIMIT 1 OFFSET {i - 1}")  # fmt: skip
    share = 100 * float(totals.iloc[0] / totals.sum())
    track_value(f"amount_by_{by}_share_1", share, f"Share of the top {by}", "top / total * 100", VIEW, cols, "high",
                f"SELECT 100 * MAX(v) / SUM(v) FROM ({order})", "%")  # fmt: skip


def _trend() -> None:
    cte = f"WITH p AS (SELECT month AS period, SUM(amount) AS v FROM {VIEW} GROUP BY 1) "
    track_claim("trend", "claim_trend_amount_per_month", VIEW, cte + "SELECT v FROM p ORDER BY period",
                {"measure": "amount", "by": "month", "period": "month", "agg": "sum"},
                description="Trend of amount per month", columns=["month", "amount"])  # fmt: skip


def _validated(job: Path) -> Path:
    flush_checks()
    validate_job(job)
    return job


def _statuses(job: Path) -> dict[str, str]:
    data = json.loads((job / "citations.json").read_text(encoding="utf-8"))
    return {c["calculation_id"]: c["verification_status"] for c in data["citations"]}


def _records(job: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))
    return {c["id"]: c for c in data["calculations"]}


def _cited(lines: list[str]) -> list[str]:
    return [cid for line in lines for cid in CLAIM_REF_RE.findall(line)]


def _printed(job: Path, lines: list[str], language: str = "en") -> str:
    """The lines as a reader sees them: each claim reference replaced by its sentence."""
    records = _records(job)
    return "\n".join(CLAIM_REF_RE.sub(lambda m: claim_text(records[m.group(1)], language), line) for line in lines)


def _sales(seed: int = 1) -> pd.DataFrame:
    """region comes first but explains nothing; channel explains most of amount (Web orders are ten times larger)."""
    rng = np.random.default_rng(seed)
    n = 120
    channel = np.where(np.arange(n) % 4 == 0, "Web", "Store")
    amount = np.where(channel == "Web", 1000.0, 100.0) + rng.normal(0, 5, n)
    months = [f"2024-{1 + i % 6:02d}" for i in range(n)]
    region = rng.choice(["North", "South", "East"], n)
    return pd.DataFrame({"region": region, "channel": channel, "month": months, "amount": amount.round(2)})


def test_the_main_driver_is_the_largest_epsilon_squared_not_the_first_breakdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _sales()
    job = _job(tmp_path, monkeypatch, frame)
    _breakdowns(("region", "channel"))
    _top_group("channel", frame)
    _top_group("region", frame)
    _validated(job)
    records = _records(job)
    assert records["claim_driver_amount_by_channel"]["value"] == "main"
    assert records["claim_driver_amount_by_region"]["value"] == "weak"
    lines = conclusions(job)
    assert _cited(lines)[:2] == ["claim_driver_amount_by_channel", "claim_concentration_amount_by_channel"]
    assert "claim_driver_amount_by_region" not in _cited(lines)
    assert "{{calc:amount_by_channel_top}}" in lines[0] and "{{calc:amount_by_channel_share_1}}" in lines[0]
    printed = _printed(job, lines)
    assert "channel is the main driver of amount" in printed and "region is the main driver" not in printed
    assert all(check_markdown(line, job) == [] for line in lines)


def test_never_main_driver_and_spread_evenly_for_the_same_breakdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # North: 10 small orders, South: 2 large ones; the means differ (eta squared near 1), the totals are 50/50
    frame = pd.DataFrame({"region": ["North"] * 10 + ["South"] * 2, "amount": [10.0] * 10 + [49.0, 51.0],
                          "channel": ["Web", "Store"] * 6, "month": ["2024-01"] * 12})  # fmt: skip
    job = _job(tmp_path, monkeypatch, frame)
    _breakdowns(("region", "channel"))
    _validated(job)
    records = _records(job)
    assert records["claim_driver_amount_by_region"]["value"] == "main"
    assert records["claim_concentration_amount_by_region"]["value"] == "spread_evenly"
    lines = conclusions(job)
    printed = _printed(job, lines)
    assert "claim_concentration_amount_by_region" in _cited(lines)
    assert "spread evenly" in printed and "main driver" not in printed
    assert "claim_driver_amount_by_region" not in _cited(lines)


def test_a_claim_that_failed_its_recomputation_is_never_cited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path, monkeypatch, _sales())
    _breakdowns(("region", "channel"))
    flush_checks()
    path = job / "calculation_metadata.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for record in data["calculations"]:
        if record["id"] == "claim_driver_amount_by_channel":
            record["value"] = "weak"  # tampered: the data say main
    path.write_text(json.dumps(data), encoding="utf-8")
    validate_job(job)
    assert _statuses(job)["claim_driver_amount_by_channel"] == "needs_review"
    lines = conclusions(job)
    assert "claim_driver_amount_by_channel" not in _cited(lines)
    assert lines and all(check_markdown(line, job) == [] for line in lines)


def test_trend_and_a_correlation_driven_by_extremes_are_concluded_in_korean_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(4)
    n = 60
    units, amount = rng.integers(1, 10, n).astype(float), rng.normal(50, 10, n).round(2)
    units[:3], amount[:3] = [200.0, 250.0, 300.0], [2000.0, 2500.0, 3000.0]
    months = [f"2024-{1 + i // 10:02d}" for i in range(n)]
    frame = pd.DataFrame({"month": months, "units": units, "amount": amount + np.arange(n) * 10})
    job = _job(tmp_path, monkeypatch, frame)
    _trend()
    track_claim("correlation", "claim_corr_units_amount", VIEW,
                f"SELECT CAST(units AS DOUBLE) AS x, CAST(amount AS DOUBLE) AS y FROM {VIEW} "
                "WHERE units IS NOT NULL AND amount IS NOT NULL",
                {"measure": "amount", "by": "units", "x": "units", "y": "amount"},
                description="Correlation of units and amount", columns=["units", "amount"])  # fmt: skip
    _validated(job)
    records = _records(job)
    assert records["claim_corr_units_amount"]["value"] == "driven_by_extremes"
    english, korean = conclusions(job), conclusions(job, language="ko")
    assert _cited(english) == _cited(korean) == ["claim_trend_amount_per_month", "claim_corr_units_amount"]
    assert "driven by a few extreme values" in _printed(job, english)
    assert "극단값" in _printed(job, korean, "ko") and "`month` 기준 `amount`을(를) 모든 기간으로 판단하면" in korean[0]


def test_no_verified_claim_means_no_conclusion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path, monkeypatch, _sales())
    _top_group("channel", _sales())
    _validated(job)
    assert conclusions(job) == []


def _notes(*sections: tuple[str, list[str]]) -> str:
    return "".join(format_section(ResultSection(title, findings=findings)) for title, findings in sections)


def _citations(*entries: dict[str, Any]) -> str:
    rows = [{"citation_id": None, "verification_status": "verified", **e} for e in entries]
    return json.dumps({"metadata": {}, "citations": rows})


def _claim_entry(claim_id: str, kind: str, verdict: str, **evidence: float) -> dict[str, Any]:
    return {"calculation_id": claim_id, "kind": "claim", "claim_kind": kind, "value": verdict, "evidence": evidence}


REGION = ("Revenue by Region", ["Region has {{calc:region_groups}} groups.", "Region: {{claim:driver_region}}."])
CHANNEL = ("Revenue by Channel", ["Channel has {{calc:channel_groups}} groups.", "Channel: {{claim:driver_channel}}."])
TREND = ("Trend", ["The data covers {{calc:periods}} periods.", "The trend verdict is {{claim:trend}}."])


def _summary(markdown: str) -> list[str]:
    block = markdown.split("## Executive summary", 1)[1].split("\n## ", 1)[0]
    return [line[2:] for line in block.splitlines() if line.startswith("- ")]


def test_the_summary_leads_with_the_strongest_claim_and_never_echoes_the_request() -> None:
    citations = _citations(
        {"calculation_id": "region_groups", "value": 4},
        {"calculation_id": "channel_groups", "value": 3},
        {"calculation_id": "periods", "value": 12},
        _claim_entry("driver_region", "driver", "material", epsilon_sq=0.09),
        _claim_entry("driver_channel", "driver", "main", epsilon_sq=0.23),
        _claim_entry("trend", "trend", "volatile", tau=0.2),
    )
    request = "Analyze this sales data and write a DOCX report"
    markdown = draft_report(_notes(REGION, CHANNEL, TREND), citations, title="Sales", request=request, language="en")
    assert request not in markdown and "answers the request" not in markdown
    summary = _summary(markdown)
    # lead rule: the largest epsilon squared first (Channel, though Region comes first), then the other sections' leads
    assert summary == [CHANNEL[1][1], REGION[1][1], TREND[1][1]]


def test_a_claim_that_is_not_verified_never_leads_or_appears() -> None:
    citations = json.loads(_citations(
        {"calculation_id": "region_groups", "value": 4},
        _claim_entry("driver_region", "driver", "material", epsilon_sq=0.09),
        _claim_entry("driver_channel", "driver", "main", epsilon_sq=0.23),
        {"calculation_id": "channel_groups", "value": 3},
    ))  # fmt: skip
    citations["citations"][2]["verification_status"] = "needs_review"
    markdown = draft_report(_notes(REGION, CHANNEL), json.dumps(citations), title="Sales", language="en")
    assert "driver_channel" not in markdown
    assert _summary(markdown) == [REGION[1][1], CHANNEL[1][0]]


def test_the_closing_sentence_is_printed_only_when_true() -> None:
    citations = _citations({"calculation_id": "region_groups", "value": 4})
    notes = _notes(("Revenue by Region", ["Region has {{calc:region_groups}} groups."]))
    closing = "The key figures above sum up the verified results"
    bare = draft_report(notes, citations, title="Sales", language="en")
    assert closing not in bare and "## Conclusions" not in bare  # no key figures above, so nothing to point at
    table = "| Measure | Value |\n| --- | --- |\n| Groups | {{calc:region_groups}} |"
    assert closing in draft_report(notes, citations, title="Sales", language="en", table=table)
    concluded = draft_report(notes, citations, title="Sales", language="en", table=table, conclusions=("Done.",))
    assert closing not in concluded and "- Done." in concluded
