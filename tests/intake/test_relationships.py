"""Relationships between a job's tables: candidate keys, foreign keys with their match rate and cardinality, and the
many-to-many pairs a join must refuse (docs/related-tables.md)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pandas as pd
import pytest

from insightloom.contracts import load_schema
from insightloom.intake import ingest, relationships
from insightloom.intake.profile import DataProfile
from related_tables import write_csvs


def _relationships(tmp_path: Path, **frames: pd.DataFrame) -> dict:
    profile = ingest(write_csvs(tmp_path / "in", **frames), tmp_path / "job")
    stored = json.loads((tmp_path / "job" / "cache" / "profile.json").read_text(encoding="utf-8"))
    jsonschema.validate(stored, load_schema("profile"))
    assert DataProfile.from_dict(stored).to_dict() == stored  # the round trip keeps them
    assert profile.relationships is not None
    return profile.relationships


CUSTOMERS = pd.DataFrame({"customer_id": [f"C{i}" for i in range(1, 9)], "segment": ["Consumer", "Corporate"] * 4,
                          "region": ["East", "West", "North", "South"] * 2})  # fmt: skip


def _orders(ids: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"order_id": range(100, 100 + len(ids)), "customer_id": ids,
                         "amount": [10.5 + i for i in range(len(ids))]})  # fmt: skip


def test_a_foreign_key_by_name_is_many_to_one_with_its_match_rate(tmp_path: Path) -> None:
    rel = _relationships(tmp_path, orders=_orders([f"C{1 + i % 8}" for i in range(30)]), customers=CUSTOMERS)
    assert {"view": "customers", "column": "customer_id", "natural": True} in rel["candidate_keys"]
    assert {"view": "orders", "column": "order_id", "natural": True} in rel["candidate_keys"]
    (fk,) = rel["foreign_keys"]
    assert (fk["child"], fk["child_column"], fk["parent"], fk["parent_column"]) == (
        "orders", "customer_id", "customers", "customer_id")  # fmt: skip
    assert fk["match_rate"] == 1.0 and fk["cardinality"] == "many_to_one" and fk["matched_by"] == "name"
    assert fk["view"] == "orders+customers" and fk["sampled"] is False and fk["checked_rows"] == 30
    assert rel["many_to_many"] == []


def test_the_match_rate_is_the_share_of_child_rows_found_in_the_parent_key(tmp_path: Path) -> None:
    ids = [f"C{1 + i % 8}" for i in range(16)] + ["C99", "C98", "C97", "C99"]  # 4 of 20 rows find no customer
    rel = _relationships(tmp_path, orders=_orders(ids), customers=CUSTOMERS)
    (fk,) = rel["foreign_keys"]
    assert fk["match_rate"] == 0.8 and fk["matched_rows"] == 16 and fk["checked_rows"] == 20


def test_a_key_named_after_the_parent_table_pairs_with_its_id(tmp_path: Path) -> None:
    customers = CUSTOMERS.rename(columns={"customer_id": "id"})
    rel = _relationships(tmp_path, orders=_orders([f"C{1 + i % 8}" for i in range(12)]), customers=customers)
    (fk,) = rel["foreign_keys"]
    assert (fk["child_column"], fk["parent"], fk["parent_column"]) == ("customer_id", "customers", "id")


def test_two_tables_keyed_alike_are_one_to_one_and_listed_once(tmp_path: Path) -> None:
    details = pd.DataFrame({"customer_id": [f"C{i}" for i in range(1, 7)], "signup_channel": ["web", "shop"] * 3})
    rel = _relationships(tmp_path, customers=CUSTOMERS, details=details)
    (fk,) = rel["foreign_keys"]
    assert fk["cardinality"] == "one_to_one"
    assert (fk["child"], fk["parent"], fk["match_rate"]) == ("details", "customers", 1.0)  # the covered side


def test_unrelated_tables_get_no_relationship(tmp_path: Path) -> None:
    orders = _orders([f"C{1 + i % 8}" for i in range(10)])
    weather = pd.DataFrame({"day": pd.date_range("2024-01-01", periods=10).strftime("%Y-%m-%d"),
                            "temperature": [3.5 + i for i in range(10)], "station": ["A", "B"] * 5})  # fmt: skip
    rel = _relationships(tmp_path, orders=orders, weather=weather)
    assert rel["foreign_keys"] == [] and rel["many_to_many"] == []


def test_each_tables_own_row_id_is_no_reference_to_the_other(tmp_path: Path) -> None:
    left = pd.DataFrame({"id": range(1, 31), "amount": [float(i) for i in range(30)]})
    right = pd.DataFrame({"id": range(1, 11), "segment": ["a", "b"] * 5})
    rel = _relationships(tmp_path, left=left, right=right)
    assert rel["foreign_keys"] == [] and rel["many_to_many"] == []


def test_a_key_repeated_on_both_sides_is_many_to_many_and_no_foreign_key(tmp_path: Path) -> None:
    tickets = pd.DataFrame({"ticket_id": range(1, 13), "customer_id": [f"C{1 + i % 4}" for i in range(12)],
                            "minutes": [5.0 + i for i in range(12)]})  # fmt: skip
    rel = _relationships(tmp_path, orders=_orders([f"C{1 + i % 6}" for i in range(18)]), tickets=tickets)
    assert rel["foreign_keys"] == []
    (pair,) = rel["many_to_many"]
    assert (pair["left"], pair["left_column"], pair["right"], pair["right_column"]) == (
        "orders", "customer_id", "tickets", "customer_id")  # fmt: skip
    assert 0 < pair["overlap"] < 1


def test_an_id_named_column_pairs_by_values_when_names_differ(tmp_path: Path) -> None:
    orders = _orders([f"C{1 + i % 8}" for i in range(20)]).rename(columns={"customer_id": "buyer_code"})
    rel = _relationships(tmp_path, orders=orders, customers=CUSTOMERS)
    (fk,) = rel["foreign_keys"]
    assert (fk["child_column"], fk["parent_column"], fk["matched_by"]) == ("buyer_code", "customer_id", "values")


def test_a_large_child_is_probed_on_a_sample_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relationships, "MATCH_SAMPLE_ROWS", 10)
    rel = _relationships(tmp_path, orders=_orders([f"C{1 + i % 8}" for i in range(50)]), customers=CUSTOMERS)
    (fk,) = rel["foreign_keys"]
    assert fk["sampled"] is True and fk["checked_rows"] == 10 and fk["match_rate"] == 1.0


def test_one_table_has_no_relationships_and_the_prompt_carries_them_compactly(tmp_path: Path) -> None:
    single = ingest(write_csvs(tmp_path / "one", orders=_orders(["C1", "C2"])), tmp_path / "j1")
    assert single.relationships is None and "relationships" not in single.to_dict()
    two = ingest(write_csvs(tmp_path / "two", orders=_orders(["C1", "C1", "C2"]), customers=CUSTOMERS), tmp_path / "j2")
    prompt = two.to_prompt()
    assert '"view":"orders+customers"' in prompt and '"cardinality":"many_to_one"' in prompt
    assert "checked_rows" not in prompt and '"customers.customer_id"' in prompt
