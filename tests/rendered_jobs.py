"""A finished job with a rendered report, made in a second: intake, verified calculations, a chart, the renderer.

For the report page tests (``tests/service/test_report_html.py``, ``tests/browser/test_report_page.py``): the report
holds a cited value, a chart, and model text that tries to inject HTML (a ``<script>`` in a table cell and an
``<img onerror>`` as a column name), in English or Korean.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from insightloom.config import Settings
from insightloom.fileio import write_json, write_text_atomic
from insightloom.report.render import render_report
from insightloom.service.manager import OWNERS_DIR
from insightloom.workflow import JobOptions, create_job
from repo_paths import DATA

MOON = DATA / "moon-market-en" / "moon-market-fresh-food-sales.csv"
SCRIPT_CELL = "<script>window.__pwned = true</script>"
SCRIPT_COLUMN = '<img src="x" onerror="window.__pwned = true">'
CHART = "charts/amount_by_category.png"
KOREAN_REQUEST = "카테고리별 매출을 분석하고 한국어 보고서를 작성해 주세요"
CALCS: list[dict[str, Any]] = [
    {
        "id": "total_amount",
        "value": 1234567.891,
        "unit": "KRW",
        "decimals": 0,
        "description": "Total Amount",
        "formula": "sum of Amount",
        "check": "SELECT SUM(Amount) FROM sales",
    },
    {
        "id": "order_count",
        "value": 250,
        "unit": None,
        "decimals": 0,
        "description": "Number of orders",
        "formula": "count of rows",
        "check": "SELECT COUNT(*) FROM sales",
    },
]

MARKDOWN = {
    "en": f"""# Sales report

## Summary

Total sales were {{{{calc:total_amount}}}} over {{{{calc:order_count}}}} orders.

![Amount by category]({CHART})

## Details

| Category | {SCRIPT_COLUMN} |
|---|---|
| Fruit | {SCRIPT_CELL} |
| Orders | {{{{calc:order_count}}}} |
""",
    "ko": f"""# 매출 보고서

## 요약

총 매출은 {{{{calc:total_amount}}}}이며 주문은 {{{{calc:order_count}}}}건입니다.

![카테고리별 매출]({CHART})

## 세부 내용

| 카테고리 | {SCRIPT_COLUMN} |
|---|---|
| 과일 | {SCRIPT_CELL} |
""",
}


def _chart(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4, 3), dpi=72)
    figure.add_subplot().bar(["Fruit", "Meat", "Fish"], [3, 5, 2], color="#2457c5")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")


def _citations(calcs: list[dict[str, Any]]) -> dict[str, Any]:
    entries = [
        {
            "citation_id": None,
            "calculation_id": calc["id"],
            "value": calc["value"],
            "description": calc["description"],
            "formula": calc["formula"],
            "source_file": "sales",
            "verification_status": "verified",
            "importance": "high",
            "unit": calc["unit"],
            "decimals": calc["decimals"],
            "verification_method": "check",
            "check_value": calc["value"],
            "reason": "",
        }
        for calc in calcs
    ]
    return {"citations": entries, "metadata": {}}


def rendered_job(root: Path, owner: str | None, *, language: str = "en", request: str | None = None) -> Path:
    """A ``completed`` job of ``owner`` under ``root`` whose report was rendered (report.md, DOCX, citations)."""
    settings = Settings(artifacts=root).with_provider("offline")
    text = request or (KOREAN_REQUEST if language == "ko" else "Analyze this data and write a DOCX report")
    rt = create_job(JobOptions(inputs=[MOON], request=text, settings=settings, cwd=root))
    job_dir = rt.root
    records = [{**calc, "source_file": "sales", "source_columns": ["Amount"], "importance": "high"} for calc in CALCS]
    write_json(job_dir / "calculation_metadata.json", {"calculations": records})
    write_json(job_dir / "citations.json", _citations(CALCS))
    _chart(job_dir / CHART)
    write_json(job_dir / "charts" / "amount_by_category.json", {"caption": "Amount by category"})
    render_report(MARKDOWN[language], job_dir)
    rt.job.update(status="completed", stage="done")
    if owner:  # what the service records beside the jobs, out of the scripts' reach
        write_text_atomic(root / OWNERS_DIR / rt.job.id, owner + "\n")
    return job_dir
