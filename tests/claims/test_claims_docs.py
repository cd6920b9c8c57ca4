"""docs/claims.md and the claims table stay in step: every kind, verdict, threshold and wording, and no other."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from insightloom.claims.table import KINDS

DOC = Path(__file__).resolve().parents[2] / "docs" / "claims.md"
_SECTION_RE = re.compile(r"^## `(\w+)`\n(.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
_VERDICT_ROW_RE = re.compile(r"^\| `(\w+)` \| (.*?) \| `(.*?)` \| `(.*?)` \|$", re.MULTILINE)
_THRESHOLD_RE = re.compile(r"^- `(\w+)` = ([-\d.e]+)$", re.MULTILINE)


def _sections() -> dict[str, str]:
    return {match.group(1): match.group(2) for match in _SECTION_RE.finditer(DOC.read_text(encoding="utf-8"))}


def test_the_doc_documents_exactly_the_table_kinds() -> None:
    assert list(_sections()) == list(KINDS)


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_lists_its_verdicts_thresholds_and_wording(kind: str) -> None:
    section = _sections()[kind]
    spec = KINDS[kind]
    rows = {m.group(1): (m.group(3), m.group(4)) for m in _VERDICT_ROW_RE.finditer(section)}
    assert list(rows) == list(spec.verdicts)
    for verdict, (english, korean) in rows.items():
        assert english == spec.wording[verdict]["en"] and korean == spec.wording[verdict]["ko"]
    thresholds = {name: float(value) for name, value in _THRESHOLD_RE.findall(section)}
    assert thresholds == {name: float(value) for name, value in spec.thresholds.items()}
    assert f"Test: {spec.test}." in section
    for key in (*spec.inputs, *spec.evidence):
        assert f"`{key}`" in section


def test_the_lead_rule_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "## The summary's lead rule" in text and "lead_order(records)" in text
