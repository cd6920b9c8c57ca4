"""One valid document per job-folder file, with variants for each branch the contracts distinguish.

These are the seeds of the contract tests: the package's schemas must accept each of them, and the reference
compatibility test mutates them to explore what the reference schemas accept.
"""

from __future__ import annotations

from typing import Any

TS = "2026-12-01T08:00:00Z"
ROLES = ("coordinator", "planner", "supervisor", "coder", "validator", "reporter", "tracker", "auditor")
USAGE_ROW = {
    "calls": 2,
    "input_tokens": 1200,
    "output_tokens": 300,
    "cache_read_tokens": 900,
    "cache_write_tokens": 100,
    "cost_usd": 0.0123,
}


def _event(kind: str, data: dict[str, Any], event_id: int = 1) -> dict[str, Any]:
    return {"id": event_id, "ts": TS, "job_id": "20261201T080000Z-0123456789ab", "kind": kind, "data": data}


EXAMPLES: dict[str, list[Any]] = {
    "job": [
        {"id": "20261201T080000Z-0123456789ab", "status": "queued", "stage": None, "created_at": TS, "updated_at": TS},
        {
            "id": "20261201T080000Z-0123456789ab",
            "status": "failed",
            "stage": "supervise",
            "created_at": TS,
            "updated_at": TS,
            "error": "The job reached its ceiling on model calls.",
        },
        {
            "id": "j",
            "status": "completed",
            "stage": "done",
            "created_at": TS,
            "updated_at": TS,
            "revision": 1,
        },
    ],
    "shared_state": [
        {"messages": "", "clues": "", "full_plan": "# Plan\n", "history": []},
        {
            "messages": "Response from coder: ...",
            "clues": "Here is clues from coder: ...",
            "full_plan": "# Plan\n## steps\n",
            "history": [{"agent": "coder", "message": "done"}],
        },
    ],
    "calculation_metadata": [
        {"generated_at": TS, "calculations": []},
        {
            "generated_at": TS,
            "calculations": [
                {
                    "id": "total_revenue",
                    "value": 16431923,
                    "description": "Total revenue",
                    "formula": "SUM(Amount)",
                    "source_file": "sales.csv",
                    "source_columns": ["Amount"],
                    "importance": "high",
                    "check": 'SELECT SUM("Amount") FROM data',
                    "unit": "KRW",
                    "decimals": 0,
                },
                {
                    "id": "top_region",
                    "value": "West",
                    "description": "Region with the most revenue",
                    "formula": "argmax(SUM(Amount) by Region)",
                    "source_file": "sales.csv",
                    "source_columns": ["Region", "Amount"],
                    "importance": "low",
                    "check": None,
                    "unit": None,
                    "decimals": None,
                },
            ],
        },
    ],
    "citations": [
        {"metadata": {"generated_at": TS, "total_calculations": 0, "cited_calculations": 0}, "citations": []},
        {
            "metadata": {"generated_at": TS, "total_calculations": 2, "cited_calculations": 1},
            "citations": [
                {
                    "citation_id": "[1]",
                    "calculation_id": "total_revenue",
                    "value": 16431923,
                    "description": "Total revenue",
                    "formula": "SUM(Amount)",
                    "source_file": "sales.csv",
                    "verification_status": "verified",
                },
                {
                    "citation_id": None,
                    "calculation_id": "share_west",
                    "value": 45.2,
                    "description": "West's share of revenue",
                    "formula": "100 * SUM(Amount WHERE West) / SUM(Amount)",
                    "source_file": "sales.csv",
                    "verification_status": "needs_review",
                },
            ],
        },
    ],
    "audit_findings": [
        {
            "audit_metadata": {"audited_at": TS, "docx_path": "final_report.docx", "retry_count": 0},
            "verdict": "pass",
            "stats": {"type_a": 0, "type_b": 0, "type_c": 0, "type_d": 0},
            "findings": [],
        },
        {
            "audit_metadata": {"audited_at": TS, "docx_path": "final_report.docx", "retry_count": 2},
            "verdict": "needs_review",
            "stats": {"type_a": 1, "type_b": 1, "type_c": 0, "type_d": 0},
            "findings": [
                {
                    "type": "A",
                    "severity": "error",
                    "location": "paragraph 4",
                    "body_excerpt": "grew 12.5% in March",
                    "suggested_fix": "cite the number with {{calc:ID}}",
                },
                {
                    "type": "B",
                    "severity": "error",
                    "location": "table 1, row 2",
                    "body_excerpt": "836 [2]",
                    "suggested_fix": "re-render the report",
                    "marker": "[2]",
                    "body_value": "836",
                    "cited_value": 835,
                    "cited_calculation_id": "row_count",
                },
            ],
        },
    ],
    "profile": [
        {"tables": [], "aliases": {}, "language": "en"},  # an older profile: no semantics keys at all
        {
            "tables": [
                {
                    "view": "sales",
                    "file": "sales.csv",
                    "sheet": None,
                    "parquet": "cache/sales.parquet",
                    "rows": 3,
                    "title_rows_skipped": 1,
                    "text_numeric_columns": [],
                    "rate_pairs": [
                        {
                            "key": "ctr",
                            "label": "CTR",
                            "numerator": "clicks",
                            "denominator": "impressions",
                            "scale": 100,
                        }
                    ],
                    "headline_measures": [{"column": "Revenue", "reason": "currency (USD)"}],
                    "time_axis": {"kind": "wide_years", "column": None, "columns": ["2001", "2002"], "period": "year"},
                    "columns": [
                        {
                            "name": "Revenue",
                            "dtype": "float64",
                            "role": "measure",
                            "missing": 0,
                            "distinct": 3,
                            "samples": [1.5],
                            "unit": "USD",
                            "unit_scale": 1000,
                            "aggregation": "sum",
                            "semantic": "currency",
                            "calc_id_stem": "revenue",
                        },
                    ],
                }
            ],
            "aliases": {"data": "sales"},
            "language": "en",
        },
    ],
    "request": [
        {
            "request": "Analyze this sales data",
            "language": "en",
            "inputs": ["sales.csv"],
            "columns_file": None,
            "cwd": "/home/me",
            "created_at": TS,
        },
        {
            "request": "Revenue by customer segment",
            "language": "en",
            "inputs": [],
            "columns_file": None,
            "cwd": "/home/me",
            "source": {
                "kind": "database",
                "url": "postgresql://analyst@db.example:5432/shop",
                "tables": ["orders", "public.customers"],
                "query": "SELECT region, sum(amount) AS revenue FROM orders GROUP BY region",
                "query_name": "by_region",
            },
            "created_at": TS,
        },
    ],
    "usage": [
        {"agents": {role: dict(USAGE_ROW) for role in ROLES}, "total": dict(USAGE_ROW, calls=16)},
    ],
    "event": [
        _event("stage", {"name": "intake"}),
        _event("agent_start", {"agent": "coder"}, 2),
        _event("agent_end", {"agent": "coder"}, 3),
        _event("tool_call", {"agent": "supervisor", "tool": "coder"}, 4),
        _event("tool_result", {"agent": "coder", "tool": "write_and_execute_tool"}, 5),
        _event("usage", dict(USAGE_ROW), 6),
        _event("plan_review_request", {"plan": "# Plan\n", "revision": 0, "max_revisions": 3}, 7),
        _event("plan_revised", {"plan": "# Plan (Revised)\n", "revision": 1}, 8),
        _event("error", {"message": "a script failed"}, 9),
        _event("completed", {"report": "final_report.docx"}, 10),
        _event("completed", {"report": None}, 10),
        _event("needs_review", {"report": "final_report.docx"}, 11),
        _event("failed", {"error": "boom"}, 12),
        _event("cancelled", {}, 13),
    ],
    "ask_event": [
        {
            "ts": TS,
            "job_id": "20250101T000000Z-aaaaaaaaaaaa",
            "ask_id": "3b61b49ef2b042608f52138009b2de97",
            "seq": 1,
            "kind": "retrieved",
            "data": {
                "mode": "bm25",
                "hits": 4,
                "relevant": 4,
                "threshold": 0.2,
                "top_score": 0.87,
                "fragments": ["F2"],
            },
        },
        {
            "ts": TS,
            "job_id": "20250101T000000Z-aaaaaaaaaaaa",
            "ask_id": "3b61b49ef2b042608f52138009b2de97",
            "seq": 3,
            "kind": "answered",
            "data": {"citations": ["F2"], "model_calls": 1, "retried": False, "seconds": 0.04},
        },
        {
            "ts": TS,
            "job_id": "20250101T000000Z-aaaaaaaaaaaa",
            "ask_id": "0c5d1e6f2b042608f52138009b2de9aa",
            "seq": 2,
            "kind": "abstained",
            "data": {"reason": "no_relevant_fragments", "model_calls": 0},
        },
    ],
}
