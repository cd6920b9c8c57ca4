"""The offline Reporter's retry: only the passages the audit flagged change; every other line stays as it was."""

from __future__ import annotations

import json

from insightloom.report.repair import patch_report

DRAFT = """# Report

## Summary

Revenue was {{calc:total}} over {{calc:rows}} orders.

- Counted by hand, revenue was 9,999 KRW [1]. North led.
- Returns were 12 [99] last month. Refunds were quick.

## Table

| Metric | Value |
| --- | --- |
| Orders | 836 [2] |
| Extra | 5 [42] |

Another 12,345 returns came later. Closing words stay.
"""


def _findings(*findings: dict) -> str:
    return json.dumps({"verdict": "retry", "findings": list(findings)})


def test_b_replaces_the_typed_value_with_the_reference() -> None:
    patched = patch_report(DRAFT, _findings(
        {"type": "B", "marker": "[1]", "body_value": "9,999 KRW", "cited_calculation_id": "total"},
        {"type": "B", "marker": "[2]", "body_value": "836", "cited_calculation_id": "rows"},
    ))  # fmt: skip
    assert "- Counted by hand, revenue was {{calc:total}}. North led." in patched
    assert "| Orders | {{calc:rows}} |" in patched
    assert _unchanged(patched, {"Counted by hand", "| Orders"})


def test_c_drops_the_sentence_or_empties_the_cell() -> None:
    patched = patch_report(DRAFT, _findings(
        {"type": "C", "marker": "[99]", "body_value": "12"},
        {"type": "C", "marker": "[42]", "body_value": "5"},
    ))  # fmt: skip
    assert "- Refunds were quick." in patched and "[99]" not in patched
    assert "| Extra | - |" in patched
    assert _unchanged(patched, {"Returns were", "Refunds were", "| Extra"})


def test_a_drops_the_uncited_sentence_but_not_calc_ids_or_other_numbers() -> None:
    patched = patch_report(DRAFT, _findings({"type": "A", "body_value": "12,345"}))
    assert "Closing words stay." in patched and "12,345" not in patched
    assert _unchanged(patched, {"Another", "Closing"})


def test_d_and_findings_not_in_the_markdown_change_nothing() -> None:
    findings = _findings(
        {"type": "D", "cited_calculation_id": "total", "body_excerpt": "Total"},
        {"type": "B", "marker": "[7]", "body_value": "1.5", "cited_calculation_id": "x"},  # DOCX edited afterwards
    )
    assert patch_report(DRAFT, findings) == DRAFT


def _unchanged(patched: str, touched: set[str]) -> bool:
    """Every line of the draft that mentions none of ``touched`` is still there, in order."""
    keep = [line for line in DRAFT.splitlines() if not any(t in line for t in touched)]
    remaining = iter(patched.splitlines())
    return all(any(line == other for other in remaining) for line in keep)
