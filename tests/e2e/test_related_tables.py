"""Issue 23's related tables, end to end: a two-table input with a foreign key yields a report with a verified
cross-table breakdown (revenue by customer segment, the segment held by the customers table)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from jobcheck import check_job
from test_offline_jobs import assert_every_printed_number_verified, cli

from insightloom.report.formatting import format_value
from related_tables import write_csvs

pytestmark = pytest.mark.e2e


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(23)
    customers = pd.DataFrame({
        "customer_id": [f"C{i:03d}" for i in range(1, 41)],
        "segment": rng.choice(["Consumer", "Corporate", "Home Office"], 40),
        "region": rng.choice(["East", "West", "North", "South"], 40),
    })  # fmt: skip
    orders = pd.DataFrame({
        "order_id": range(1001, 1241),
        "customer_id": rng.choice(customers["customer_id"], 240),
        "amount": np.round(rng.gamma(2.0, 60.0, 240), 2),
        "date": pd.date_range("2024-01-01", periods=240, freq="D").strftime("%Y-%m-%d"),
    })  # fmt: skip
    return orders, customers


def test_two_related_tables_yield_a_verified_breakdown_across_the_join(tmp_path: Path) -> None:
    orders, customers = _tables()
    write_csvs(tmp_path, orders=orders, customers=customers)
    done = cli("run", "orders.csv", "customers.csv", "-r", "Analyze revenue by customer segment and write a DOCX "
               "report", "--provider", "offline", "--yes", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    job = Path(done.stdout.strip().splitlines()[-1])
    assert job.is_relative_to(tmp_path.resolve())
    facts = check_job(job, min_charts=2, min_markers=10)
    assert_every_printed_number_verified(job)

    profile = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))
    (fk,) = profile["relationships"]["foreign_keys"]
    assert (fk["child"], fk["child_column"], fk["parent"], fk["parent_column"]) == (
        "orders", "customer_id", "customers", "customer_id")  # fmt: skip
    assert fk["match_rate"] == 1.0 and fk["cardinality"] == "many_to_one"

    expected = orders.merge(customers, on="customer_id").groupby("segment")["amount"].sum()
    calcs = {c["id"]: c for c in json.loads((job / "calculation_metadata.json").read_text())["calculations"]}
    citations = {c["calculation_id"]: c for c in json.loads((job / "citations.json").read_text())["citations"]}
    groups = {calc["description"].removeprefix("Total for segment = "): calc for key, calc in calcs.items()
              if re.fullmatch(r"orders_customers_amount_by_segment_\d+", key)}  # fmt: skip
    assert sorted(groups) == sorted(expected.index)
    for segment, calc in groups.items():
        assert calc["value"] == pytest.approx(expected[segment], abs=0.005)
        assert calc["join"]["view"] == "orders+customers" and 'LEFT JOIN "customers"' in calc["check"]
        cited = citations[calc["id"]]
        assert cited["verification_status"] == "verified" and cited["verification_method"] == "check"
        printed = format_value(calc["value"], calc.get("unit"), calc.get("decimals"))
        assert f"{printed} {cited['citation_id']}" in facts["text"], (segment, printed)
    assert "(table `orders` joined with `customers`)" in (job / "plan.md").read_text(encoding="utf-8")
