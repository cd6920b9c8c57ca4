"""The knowledge base: only verified numbers enter a fragment, ids are stable, old jobs are indexed lazily."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from insightloom.ask.fragments import KNOWLEDGE_FILE, build_knowledge, calc_tag, index_job, load_knowledge
from insightloom.config import Settings
from insightloom.intake.inputs import resolve_inputs
from insightloom.report.labels import load_labels, uncited_claims
from insightloom.workflow import AutoApprove, JobOptions, run_job
from repo_paths import DATA

RESULTS = """## Revenue overview
- plan_item: Compute revenue
- script: code/02_kpis.py
- calculations: total_revenue, margin_share, west_share
- charts: charts/revenue.png
### findings
- Total revenue is {{calc:total_revenue}}. The margin was {{calc:margin_share}} of revenue.
- West holds {{calc:west_share}} of revenue, ahead of 98765 typed orders.
### table
| Region | Share |
| --- | --- |
| West | {{calc:west_share}} |
| East | {{calc:margin_share}} |
"""

REPORT = """# Sales report

## Findings

Revenue reached {{calc:total_revenue}} in the period. The margin of {{calc:margin_share}} needs review.

- West leads with {{calc:west_share}}.
- East follows.
"""


def calc(calc_id: str, value: object, unit: str, status: str, importance: str = "high") -> dict:
    return {"id": calc_id, "value": value, "unit": unit, "status": status, "importance": importance}


CALCS = [
    calc("total_revenue", 1234567.4, "KRW", "verified"),
    calc("margin_share", 77.77, "%", "needs_review"),
    calc("west_share", 45.23, "%", "verified", "medium"),
]


def make_job(root: Path, calcs: list[dict] = CALCS, job_id: str = "20250101T000000Z-aaaaaaaaaaaa") -> Path:
    """A finished job folder with the files the knowledge base reads."""
    (root / "cache").mkdir(parents=True)
    (root / "charts").mkdir()
    job = {"id": job_id, "status": "completed", "created_at": "2025-01-01T00:00:00Z"}
    (root / "job.json").write_text(json.dumps({**job, "updated_at": "2025-01-02T00:00:00Z"}), encoding="utf-8")
    metadata = [
        {
            "id": c["id"],
            "value": c["value"],
            "description": f"Value of {c['id']}",
            "formula": "df['x'].quantile(0.9)",
            "source_file": "sales.csv",
            "source_columns": ["x"],
            "importance": c["importance"],
            "unit": c["unit"],
        }
        for c in calcs
    ]
    (root / "calculation_metadata.json").write_text(
        json.dumps({"generated_at": "2025-01-01T00:00:00Z", "calculations": metadata}), encoding="utf-8"
    )
    citations = [
        {
            "citation_id": None,
            "calculation_id": c["id"],
            "value": c["value"],
            "description": f"Value of {c['id']}",
            "formula": "df['x'].quantile(0.9)",
            "source_file": "sales.csv",
            "verification_status": c["status"],
            "unit": c["unit"],
        }
        for c in calcs
    ]
    meta = {"generated_at": "2025-01-01T00:00:00Z", "total_calculations": len(calcs), "cited_calculations": 0}
    (root / "citations.json").write_text(json.dumps({"metadata": meta, "citations": citations}), encoding="utf-8")
    (root / "all_results.txt").write_text(RESULTS, encoding="utf-8")
    (root / "report.md").write_text(REPORT, encoding="utf-8")
    column = {"name": "Amount", "role": "measure", "dtype": "int64", "unit": "KRW", "min": 3046, "max": 148660}
    column["description"] = "Order amount in KRW since 2019, from 12 stores"
    region = {"name": "Region", "role": "category", "dtype": "string", "top_values": [{"value": "West", "count": 40}]}
    profile = {"tables": [{"name": "sales.csv", "columns": [column, region]}], "language": "en"}
    (root / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    chart = {"title": "Revenue by region", "caption": "West leads with 55.5% of 3 regions"}
    (root / "charts" / "revenue.json").write_text(json.dumps(chart), encoding="utf-8")
    return root


def test_verified_values_enter_with_their_id(tmp_path: Path) -> None:
    fragments = build_knowledge(make_job(tmp_path / "job"))
    results = next(f for f in fragments if f.source == "results")
    assert f"1,234,567 KRW {calc_tag('total_revenue')}" in results.text
    assert results.values == {"total_revenue": "1,234,567 KRW", "west_share": "45.2%"}
    assert results.calc_ids == ("total_revenue", "west_share")
    assert "West | 45.2% [calc:west_share]" in results.text
    calcs = {f.section: f for f in fragments if f.source == "calculation"}
    assert calcs["Value of total_revenue"].text.startswith(
        "Value of total_revenue: 1,234,567 KRW [calc:total_revenue]."
    )
    assert calcs["Value of total_revenue"].importance == 1.0 and calcs["Value of west_share"].importance == 0.6
    assert all(f.job_id == "20250101T000000Z-aaaaaaaaaaaa" and f.date == "2025-01-02T00:00:00Z" for f in fragments)
    assert {f.source for f in fragments} == {"results", "calculation", "report", "chart", "columns", "profile"}


def test_unverified_values_and_typed_numbers_never_enter(tmp_path: Path) -> None:
    fragments = build_knowledge(make_job(tmp_path / "job"))
    everything = "\n".join(f.text for f in fragments)
    assert "77.8" not in everything and "margin_share" not in everything
    assert all("margin_share" not in f.values for f in fragments)
    # The sentence and the table row citing it are dropped whole; the other sentences stay.
    assert "The margin" not in everything and "East |" not in everything and "East follows." in everything
    assert "98765" not in everything and "55.5" not in everything
    columns = next(f for f in fragments if f.source == "columns")
    assert columns.text == "Column `Amount` (measure, KRW): Order amount in KRW since, from stores"
    # Outside the rendered values, nothing is a number by the report's own rule.
    labels = load_labels(tmp_path / "job")
    for fragment in fragments:
        rest = fragment.text
        for calc_id, value in fragment.values.items():
            rest = rest.replace(f"{value} {calc_tag(calc_id)}", "")
        assert uncited_claims(rest, labels) == [], fragment
        if fragment.source in ("columns", "profile"):
            assert not re.search(r"\d", fragment.text)


def test_personal_and_identifier_columns_enter_no_fragment(tmp_path: Path) -> None:
    root = make_job(tmp_path / "job")
    columns = [
        {"name": "Trainee / Phone", "role": "pii", "dtype": "string", "description": "Trainee phone number"},
        {"name": "Overall Rank", "role": "identifier", "dtype": "int64", "description": "Rank of the trainee"},
        {"name": "Age Group", "role": "category", "dtype": "string", "description": "Age group (e.g., 20s, 30s)"},
        {"name": "Promo", "role": "category", "dtype": "string", "top_values": [{"value": "FRUITPROMO5", "count": 9}]},
    ]
    profile = {"tables": [{"name": "trainees.xlsx", "columns": columns}], "language": "en"}
    (root / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    fragments = build_knowledge(root)
    described = [f.text for f in fragments if f.source == "columns"]
    profile_text = next(f.text for f in fragments if f.source == "profile")
    assert described == ["Column `Age Group` (category): Age group"]  # "20s" goes whole, not as a stray "s"
    assert "Phone" not in profile_text and "Rank" not in profile_text
    assert "Column Age Group is a category (string)." in profile_text and "leading values: FRUITPROMO." in profile_text
    assert not any("phone" in f.text.lower() or "rank" in f.text.lower() for f in fragments)


def test_ids_are_stable_and_survive_new_calculations(tmp_path: Path) -> None:
    root = make_job(tmp_path / "job")
    first = build_knowledge(root)
    assert [f.id for f in first] == [f"F{i}" for i in range(1, len(first) + 1)]
    assert build_knowledge(root) == first
    # A follow-up analysis adds a verified calculation: the unchanged fragments keep their ids.
    make_job(tmp_path / "again", [*CALCS, calc("east_total", 42.0, "count", "verified")])
    again = build_knowledge(tmp_path / "again", previous=first)
    old = {(f.source, f.section, f.text): f.id for f in first}
    for fragment in again:
        if (fragment.source, fragment.section, fragment.text) in old:
            assert fragment.id == old[(fragment.source, fragment.section, fragment.text)]
    added = [f for f in again if (f.source, f.section, f.text) not in old]
    assert [f.id for f in added] == [f"F{len(first) + 1}"] and "42 [calc:east_total]" in added[0].text


def test_load_knowledge_writes_once_and_rebuilds_when_a_source_changes(tmp_path: Path) -> None:
    root = make_job(tmp_path / "job")
    assert not (root / KNOWLEDGE_FILE).exists()
    fragments = load_knowledge(root)
    stored = json.loads((root / KNOWLEDGE_FILE).read_text(encoding="utf-8"))
    assert [f["id"] for f in stored["fragments"]] == [f.id for f in fragments]
    assert load_knowledge(root) == fragments
    # A newer citations.json (a verification flipped) makes the stored base stale.
    data = json.loads((root / "citations.json").read_text(encoding="utf-8"))
    data["citations"][1]["verification_status"] = "verified"
    (root / "citations.json").write_text(json.dumps(data), encoding="utf-8")
    later = (root / KNOWLEDGE_FILE).stat().st_mtime + 10
    os.utime(root / "citations.json", (later, later))
    rebuilt = load_knowledge(root)
    assert any("77.8% [calc:margin_share]" in f.text for f in rebuilt)
    assert index_job(root) == len(rebuilt)


def test_a_job_without_validation_holds_no_numbers(tmp_path: Path) -> None:
    root = make_job(tmp_path / "job")
    (root / "citations.json").unlink()
    fragments = build_knowledge(root)
    assert fragments and all(not f.values for f in fragments)
    assert not any(re.search(r"\d", f.text) for f in fragments if f.source != "chart")


@pytest.fixture(scope="session")
def offline_jobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Finished offline jobs on the English and Korean datasets."""
    root = tmp_path_factory.mktemp("ask_jobs")
    jobs = {}
    for name, folder in (("en", DATA / "moon-market-en"), ("ko", DATA / "yummy-food")):
        inputs, columns = resolve_inputs([folder], None)
        options = JobOptions(
            inputs=inputs,
            columns_file=columns,
            request="Analyze this data and write a DOCX report",
            settings=Settings().with_provider("offline"),
            job_dir=root / name,
            cwd=root,
        )
        outcome = run_job(options, AutoApprove())
        assert outcome.status == "completed", outcome.error
        jobs[name] = outcome.job_dir
    return jobs


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["en", "ko"])
def test_a_real_job_holds_only_verified_numbers(offline_jobs: dict[str, Path], name: str) -> None:
    root = offline_jobs[name]
    citations = json.loads((root / "citations.json").read_text(encoding="utf-8"))["citations"]
    status = {c["calculation_id"]: c["verification_status"] for c in citations}
    assert index_job(root) == len(fragments := load_knowledge(root))
    assert {f.source for f in fragments} >= {"results", "calculation", "report", "chart", "columns", "profile"}
    held = {calc_id for f in fragments for calc_id in f.calc_ids}
    assert held and all(status[calc_id] == "verified" for calc_id in held)
    assert held == {calc_id for calc_id, s in status.items() if s == "verified"}
    labels = load_labels(root)
    for fragment in fragments:
        rest = fragment.text
        for calc_id, value in fragment.values.items():
            assert f"{value} {calc_tag(calc_id)}" in fragment.text
            rest = rest.replace(f"{value} {calc_tag(calc_id)}", "")
        assert "[calc:" not in rest and uncited_claims(rest, labels) == [], fragment


@pytest.mark.parametrize("name", ["report.md", "all_results.txt"])
def test_a_planted_link_in_place_of_a_source_file_is_never_read(tmp_path: Path, name: str) -> None:
    job = make_job(tmp_path / "job")
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nThe launch code is swordfish.\n", encoding="utf-8")
    (job / name).unlink(missing_ok=True)
    os.symlink(secret, job / name)  # a script may leave any link in its job folder
    assert not any("swordfish" in fragment.text for fragment in build_knowledge(job))
