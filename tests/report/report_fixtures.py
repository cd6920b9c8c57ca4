"""Helpers for report tests: a validated job folder with a chart, built without the other modules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from insightloom.validation import validate_job


def _calc(calc_id: str, value: Any, check: str | None, **extra: Any) -> dict[str, Any]:
    entry = {
        "id": calc_id,
        "value": value,
        "description": f"{calc_id.replace('_', ' ').capitalize()}",
        "formula": f"SQL: {check}" if check else "by hand",
        "source_file": "sales.csv",
        "source_columns": ["amount"],
        "importance": "high",
    }
    if check:
        entry["check"] = check
    entry.update(extra)
    return entry


def build_job(job: Path, *, korean: bool = False) -> Path:
    """Write a table, its profile, calculations (verified, tampered, unchecked), a chart and its sidecar; validate."""
    regions = ["서울", "부산"] if korean else ["North", "South"]
    frame = pd.DataFrame({"region": [regions[i % 2] for i in range(10)], "amount": [1_642_000 + i for i in range(10)]})
    (job / "cache").mkdir(parents=True)
    frame.to_parquet(job / "cache" / "sales.parquet", index=False)
    profile = {
        "tables": [{"view": "sales", "file": "sales.csv", "parquet": "cache/sales.parquet"}],
        "aliases": {"data": "sales"},
    }
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    total = int(frame["amount"].sum())
    share = float(frame.loc[frame["region"] == regions[0], "amount"].sum() / total * 100)
    calcs = [
        _calc("total_revenue", total, "SELECT SUM(amount) FROM data", unit="KRW"),
        _calc("order_count", 10, "SELECT COUNT(*) FROM data", unit="count"),
        _calc(
            "top_share",
            share,
            f"SELECT 100.0 * SUM(amount) FILTER (WHERE region = '{regions[0]}') / SUM(amount) FROM data",
            unit="%",
        ),
        _calc("roas", 0.5123, "SELECT 0.5123 FROM data LIMIT 1", unit="ratio"),
        _calc("tampered", total + 100, "SELECT SUM(amount) FROM data", unit="KRW"),
        _calc("unchecked", 3, None, unit="count"),
    ]
    (job / "calculation_metadata.json").write_text(
        json.dumps({"generated_at": "2025-01-01T00:00:00Z", "calculations": calcs}), encoding="utf-8"
    )
    (job / "charts").mkdir()
    fig = Figure(figsize=(6, 3), dpi=50)
    fig.add_subplot().bar(["a", "b"], [1, 2])
    fig.savefig(job / "charts" / "revenue.png")
    sidecar = {"title": "Revenue", "alt": "Bar chart of revenue by region", "caption": "Revenue by region"}
    (job / "charts" / "revenue.json").write_text(json.dumps(sidecar), encoding="utf-8")
    validate_job(job)
    return job


ENGLISH_MD = """# Sales Report

## Summary
Total revenue was {{calc:total_revenue}} across {{calc:order_count}} orders in 2025.

- North took {{calc:top_share}} of revenue; ROAS was {{calc:roas}}.
- Revenue again: {{calc:total_revenue}}.

![Revenue by region bar chart](charts/revenue.png)

## Breakdown
| Metric | Value |
|---|---|
| Orders | {{calc:order_count}} |
| **Revenue** | {{calc:total_revenue}} |

See Figure 1 and Table 1 for details from 2025-09-01.
"""

KOREAN_MD = """# 매출 보고서

## 요약
총 매출은 {{calc:total_revenue}}이며 주문은 {{calc:order_count}}건입니다.
"""
