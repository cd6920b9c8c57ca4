"""Analyses across a join: a joined view (``orders+customers``) in load_df, the trackers, checks and plans, and the
joins that would multiply rows refused with the keys and the fix (docs/related-tables.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tracker_job import calcs, sql_rows

from insightloom.analysis.catalog import AnalysisSpec, join_refusal, parse_item
from insightloom.analysis.planning import plan_analyses, plan_markdown
from insightloom.analysis_utils import (
    JoinRefused,
    flush_checks,
    load_df,
    run_standard,
    track_calculation,
    track_group_values,
    track_total,
)
from related_tables import CUSTOMERS, ORDERS, related_job


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return related_job(tmp_path, monkeypatch, orders=ORDERS, customers=CUSTOMERS)


def _profile(job: Path) -> dict:
    return json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))


def test_load_df_of_a_joined_view_is_the_left_join_keeping_every_child_row(shop: Path) -> None:
    joined = load_df("orders+customers")
    expected = ORDERS.merge(CUSTOMERS, on="customer_id", how="left")
    assert list(joined.columns) == ["order_id", "customer_id", "amount", "segment", "region"]
    pd.testing.assert_frame_equal(joined, expected, check_dtype=False)
    assert load_df("data+customers").equals(joined)  # the first input's alias works as the child


def test_a_breakdown_across_the_join_matches_pandas_and_its_checks_join_in_duckdb(shop: Path) -> None:
    groups = track_group_values("amount_by_segment", "orders+customers", "amount", "segment", "sum")
    expected = ORDERS.merge(CUSTOMERS, on="customer_id").groupby("segment")["amount"].sum().sort_values(ascending=False)
    assert [(row.label, row.value) for row in groups.rows] == list(expected.items())
    assert flush_checks() >= len(groups.rows)
    record = calcs(shop)["amount_by_segment_1"]
    assert record["join"] == {"view": "orders+customers", "child": "orders", "on": [
        {"parent": "customers", "child_column": "customer_id", "parent_column": "customer_id",
         "cardinality": "many_to_one", "match_rate": 0.9}]}  # fmt: skip
    assert 'LEFT JOIN "customers"' in record["check"] and "basis" not in record
    # The unmatched order (C9) is in no group, but still in the total the shares divide by.
    assert sql_rows(shop, record["check"]) == [(expected.iloc[0],)]
    share = calcs(shop)["amount_by_segment_share_1"]["value"]
    assert share == pytest.approx(100 * expected.iloc[0] / ORDERS["amount"].sum())


def test_a_hand_written_check_may_name_the_joined_view(shop: Path) -> None:
    check = """SELECT SUM("amount") FROM "orders+customers" WHERE "segment" = 'Corporate';"""
    track_calculation("corporate_amount", 22.0, "Corporate revenue", "sum", "orders.csv", ["amount", "segment"],
                      "high", check=check)  # fmt: skip
    assert flush_checks() == 1
    assert calcs(shop)["corporate_amount"]["join"]["view"] == "orders+customers"
    total = track_total("orders+customers", "amount", "amount_total")  # a tracker reads the joined view alike
    assert flush_checks() == 1 and total == "{{calc:amount_total}}"
    assert calcs(shop)["amount_total"]["value"] == pytest.approx(ORDERS["amount"].sum())


def test_the_planner_breaks_the_child_measure_down_by_the_parents_categories(shop: Path) -> None:
    profile = _profile(shop)
    joined = [s for s in plan_analyses(profile, "revenue by customer segment") if s.view == "orders+customers"]
    assert [(s.kind, s.measure, s.by, s.agg) for s in joined] == [("breakdown", "amount", "segment", "sum"),
                                                                  ("breakdown", "amount", "region", "sum")]  # fmt: skip
    item = joined[0].item_text("en")
    assert item.endswith("(table `orders` joined with `customers`)") and parse_item(item, profile) == joined[0]
    assert parse_item(joined[0].item_text("ko"), profile) == joined[0]
    plan = plan_markdown(profile, "revenue by customer segment")
    assert "`orders.customer_id` → `customers.customer_id`: many-to-one, 90.0% of rows matched" in plan


def test_run_standard_of_a_joined_breakdown_tracks_the_match_share(shop: Path) -> None:
    run_standard(AnalysisSpec("breakdown", "orders+customers", "amount", "segment", agg="sum").item_text())
    flush_checks()
    tracked = calcs(shop)
    assert tracked["orders_customers_amount_by_segment_matched"]["value"] == pytest.approx(90.0)
    assert tracked["orders_customers_amount_by_segment_1"]["value"] == pytest.approx(34.25)  # Consumer: C1 and C3
    driver = tracked["claim_driver_orders_customers_amount_by_segment"]
    assert driver["join"]["view"] == "orders+customers" and 'JOIN "customers"' in driver["test"]["sql"]


def test_the_one_side_of_a_one_to_many_is_refused_naming_the_keys_and_the_fix(shop: Path) -> None:
    with pytest.raises(JoinRefused) as refused:
        load_df("customers+orders")
    text = str(refused.value)
    assert "customers.customer_id = orders.customer_id" in text and "one-to-many" in text
    assert "join the other way, 'orders+customers'" in text
    with pytest.raises(JoinRefused, match="use a joined view the profile's relationships list: orders"):
        load_df("orders+nowhere")


def test_a_many_to_many_join_is_refused_as_a_tool_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tickets = pd.DataFrame({"ticket_id": range(1, 7), "customer_id": ["C1", "C1", "C2", "C2", "C3", "C3"],
                            "minutes": [5.0, 6.0, 7.0, 8.0, 9.0, 10.0]})  # fmt: skip
    job = related_job(tmp_path, monkeypatch, orders=ORDERS, tickets=tickets)
    assert _profile(job)["relationships"]["many_to_many"]
    item = AnalysisSpec("breakdown", "orders+tickets", "amount", "minutes", agg="sum").item_text()
    for attempt in (lambda: load_df("orders+tickets"), lambda: run_standard(item),
                    lambda: track_total("orders+tickets", "amount", "t")):  # fmt: skip
        with pytest.raises(JoinRefused) as refused:
            attempt()
        text = str(refused.value)
        assert "orders.customer_id = tickets.customer_id" in text and "many-to-many" in text
        assert "aggregate 'tickets' to one row per 'customer_id' first" in text
    refusal = join_refusal(item, _profile(job))
    assert refusal is not None and "would multiply rows" in str(refusal)
    assert not [s for s in plan_analyses(_profile(job)) if s.view and "+" in s.view]  # never planned


def test_data_whose_parent_key_repeats_is_refused_by_the_merge(shop: Path) -> None:
    path = shop / "cache" / "customers.parquet"
    pd.concat([CUSTOMERS, CUSTOMERS.head(1)]).to_parquet(path, index=False)  # a key repeated after intake
    with pytest.raises(JoinRefused, match="1 'customer_id' value"):
        load_df("orders+customers")
