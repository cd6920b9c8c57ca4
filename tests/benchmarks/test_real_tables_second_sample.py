"""The held-out second sample of the real-tables benchmark and the benchmark's two-sample output: the frozen file's
hashes match the exported CSVs, nothing of the first sample comes back under another name, the hand labels speak
the claim contract's verdict words, and the parseable line counts claims, verified claims and audit type E."""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from test_real_tables_subset import LINE, bench

#: The claim contract's verdict words per claim kind (COMMON.md, "Claim kinds and verdict words").
VERDICTS = {
    "trend": {"rising", "falling", "no_clear_trend", "volatile"},
    "driver": {"main", "material", "weak"},
    "concentration": {"dominates", "concentrated", "moderate", "spread_evenly"},
    "correlation": {"strong_positive", "moderate_positive", "weak_positive", "strong_negative", "moderate_negative",
                    "weak_negative", "negligible", "driven_by_extremes"},
    "outlier": {"extreme_values", "no_extreme_values"},
    "sentinel": {"sentinel_code", "no_sentinel"},
    "comparison": {"higher", "lower", "within_noise"},
}  # fmt: skip


def second() -> dict[str, Any]:
    return dict(json.loads(bench.SECOND.read_text(encoding="utf-8")))


def exported(table: str) -> str:
    frame = bench._quiet_data(*table.split("/", 1))
    assert frame is not None, f"{table} does not load offline"
    return str(bench.csv_text(frame))


@pytest.fixture(scope="module")
def first_hashes() -> set[str]:
    """The content hash of every first-sample table, computed from its export (sample.json records none)."""
    return {bench.content_hash(exported(table)) for table in bench.load_sample("first")}


def test_the_second_sample_is_big_takes_every_statsmodels_dataset_and_no_first_sample_package() -> None:
    tables = bench.load_sample("second")
    assert len(tables) >= 150 and len(set(tables)) == len(tables)
    assert {f"statsmodels/{item}" for item in bench.statsmodels_items()} <= set(tables)
    assert len(bench.statsmodels_items()) >= 25  # the wheel's datasets were found, not an empty listing
    first = bench.load_sample("first")
    assert not set(first) & set(tables)
    used = {t.split("/", 1)[0] for t in first}
    assert not used & {t.split("/", 1)[0] for t in tables}
    body = second()
    assert body["made_by"].endswith("--choose-second") and isinstance(body["seed"], int)


def test_the_second_samples_hashes_are_distinct_and_none_is_a_first_sample_table(first_hashes: set[str]) -> None:
    hashes = [entry["sha256"] for entry in second()["tables"]]
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes)
    assert len(set(hashes)) == len(hashes)
    assert len(first_hashes) == len(bench.load_sample("first"))
    assert not first_hashes & set(hashes)


def test_the_frozen_hashes_rows_and_columns_are_those_of_the_exported_csv() -> None:
    entries = {entry["table"]: entry for entry in second()["tables"]}
    picked = ["statsmodels/longley", "statsmodels/co2", "fpp2/a10"]
    picked += random.Random(7).sample(sorted(set(entries) - set(picked)), 3)
    for table in picked:
        text = exported(table)
        entry = entries[table]
        assert bench.content_hash(text) == entry["sha256"], table
        rows = list(csv.reader(io.StringIO(text)))
        assert (len(rows) - 1, len(rows[0])) == (entry["rows"], entry["columns"]), table


def test_the_hand_labels_cover_30_tables_with_real_columns_and_contract_verdicts() -> None:
    labels = bench.load_expectations("second")
    entries = {entry["table"] for entry in second()["tables"]}
    assert len(labels) >= 30 and set(labels) <= entries
    claimed = 0
    for table, label in labels.items():
        assert set(label) <= {"lead", "time_axis", "columns", "claims"}, table
        names = next(csv.reader(io.StringIO(exported(table))))
        for pattern in label.get("columns", {}):
            assert any(fnmatch.fnmatchcase(name, pattern) for name in names), (table, pattern)
        for axis in label.get("time_axis", []):
            assert axis == "wide_years" or axis in names, (table, axis)
        for kind, entries_ in label.get("claims", {}).items():
            for claim in entries_ if isinstance(entries_, list) else [entries_]:
                verdicts = [claim["verdict"]] if isinstance(claim["verdict"], str) else claim["verdict"]
                assert verdicts and set(verdicts) <= VERDICTS[kind], (table, kind, verdicts)
                assert {claim["measure"], claim.get("by", names[0]), claim.get("with", names[0])} <= set(names)
                claimed += 1
    assert claimed >= 30


def fake_job(job: Path, claims: int, verified: int, type_e: int) -> Path:
    """A job folder holding ``claims`` claim records (``verified`` of them verified) and an audit with type E."""
    (job / "cache").mkdir(parents=True)
    calcs = [{"id": f"c{i}", "kind": "claim", "value": "rising"} for i in range(claims)]
    calcs.append({"id": "total", "value": 3.0})  # a number, no claim
    (job / "calculation_metadata.json").write_text(json.dumps({"calculations": calcs}), encoding="utf-8")
    status = ["verified"] * verified + ["needs_review"] * (claims - verified)
    citations = [{"calculation_id": f"c{i}", "verification_status": s} for i, s in enumerate(status)]
    citations.append({"calculation_id": "total", "verification_status": "verified"})
    (job / "citations.json").write_text(json.dumps({"citations": citations}), encoding="utf-8")
    (job / "audit_findings.json").write_text(json.dumps({"stats": {"type_a": 0, "type_e": type_e}}), encoding="utf-8")
    return job


def test_claim_counts_read_the_metadata_the_citations_and_the_audit(tmp_path: Path) -> None:
    assert bench.claim_counts(fake_job(tmp_path / "a", claims=3, verified=2, type_e=1)) == (3, 2, 1)
    assert bench.claim_counts(tmp_path / "missing") == (0, 0, 0)


def test_the_summary_line_names_the_sample_and_sums_claims_over_its_tables() -> None:
    results = [
        bench.Outcome("a/x", "completed", 2.0, claims=3, claims_verified=3, type_e=0),
        bench.Outcome("a/y", "completed", 4.0, findings=["f"], claims=2, claims_verified=1, type_e=2),
        bench.Outcome("a/z", "crash", 9.0, "timeout"),
    ]
    line = bench.summary_line(results, "second")
    assert re.fullmatch(LINE.replace("<name>", "second"), line)
    assert line == (
        "sample=second tables=3 completed=2 needs_review=0 failed=1 lint_clean=1 median_s=4.0 max_s=9.0 "
        "claims=5 claims_verified=4 type_e=2"
    )


def test_only_and_limit_pick_tables_per_sample_and_old_runs_relint_as_the_first(tmp_path: Path) -> None:
    first, other = bench.load_sample("first"), bench.load_sample("second")
    assert bench.select_tables("second", [], 3) == other[:3]
    assert bench.select_tables("first", [other[0], first[5]], 0) == [first[5]]
    assert bench.sample_work(tmp_path, "second") == tmp_path / "second"
    (tmp_path / "results.json").write_text("[]", encoding="utf-8")  # a --jobs folder from before two samples
    assert bench.sample_work(tmp_path, "first") == tmp_path


def test_the_third_sample_is_frozen_and_shares_no_table_name_or_hash_with_the_other_two(first_hashes: set[str]) -> None:
    body = json.loads(bench.THIRD.read_text(encoding="utf-8"))
    tables = [entry["table"] for entry in body["tables"]]
    assert len(tables) == bench.THIRD_SIZE and len(set(tables)) == len(tables)
    assert body["made_by"].endswith("--choose-third") and body["seed"] == bench.THIRD_SEED
    earlier = bench.load_sample("first") + bench.load_sample("second")
    names = {table.split("/", 1)[1].lower() for table in earlier}
    assert not names & {table.split("/", 1)[1].lower() for table in tables}
    hashes = {entry["sha256"] for entry in body["tables"]}
    assert len(hashes) == len(tables)
    assert not hashes & (first_hashes | {entry["sha256"] for entry in second()["tables"]})
    for entry in random.Random(3).sample(body["tables"], 3):
        assert bench.content_hash(exported(entry["table"])) == entry["sha256"], entry["table"]
    assert bench.load_sample("third") == tables
    labels = bench.load_expectations("third")
    assert len(labels) >= 30 and set(labels) <= set(tables)
    assert all(set(label) <= {"lead", "time_axis", "columns"} and label for label in labels.values())
    assert bench.DEFAULT_SAMPLES == ("first", "second")  # the two run by default; the third when named
