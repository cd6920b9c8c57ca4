"""The demo dataset: deterministic, ~1,500 orders, and the patterns the demo analysis should find."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

from insightloom.demo_data import column_definitions, generate_demo_csv
from repo_paths import REPO


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a = generate_demo_csv(tmp_path / "a.csv")
    b = generate_demo_csv(tmp_path / "b.csv", seed=7)
    c = generate_demo_csv(tmp_path / "c.csv", seed=8)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_shape_missing_values_and_patterns(tmp_path: Path) -> None:
    df = pd.read_csv(generate_demo_csv(tmp_path / "demo.csv"), parse_dates=["Date"])
    assert 1300 <= len(df) <= 1800
    assert list(df.columns) == [d["column_name"] for d in column_definitions()]
    assert 0.005 <= df.isna().any(axis=1).mean() <= 0.02  # about 1% of rows have a blank
    assert df["Date"].dt.year.eq(2024).all()
    quarter = df["Date"].dt.quarter
    assert (df.loc[quarter == 4, "Region"] == "West").mean() > (df.loc[quarter == 1, "Region"] == "West").mean() + 0.1
    per_order = df.groupby("Channel")["Revenue"].mean()
    assert per_order.idxmax() == "Catering" and per_order["Catering"] > 5 * per_order["Online"]
    days = df.groupby("Date").size()
    weekend = days.index.day_of_week >= 5
    assert days[weekend].mean() > 1.2 * days[~weekend].mean()
    monthly = df.groupby(df["Date"].dt.month)["Revenue"].sum()
    assert monthly[12] > monthly[6]
    revenue = df["Revenue"]
    assert (revenue > revenue.quantile(0.75) + 10 * (revenue.quantile(0.75) - revenue.quantile(0.25))).sum() >= 3


def test_definitions_give_the_currency_unit() -> None:
    revenue = next(d for d in column_definitions() if d["column_name"] == "Revenue")
    assert "(unit: USD)" in revenue["column_desc"]


def test_make_demo_data_script_writes_the_file(tmp_path: Path) -> None:
    out = tmp_path / "demo.csv"
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "make_demo_data.py"), str(out), "--columns",
                             str(tmp_path / "cols.json")], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == generate_demo_csv(tmp_path / "again.csv").read_bytes()
    assert (tmp_path / "cols.json").is_file()


def test_wide_sample_table_is_deterministic_and_plans_up_to_forty_items(tmp_path: Path) -> None:
    from insightloom.analysis.planning import plan_markdown
    from insightloom.intake import ingest
    from insightloom.plan import parse_plan
    from insightloom.wide_demo_data import ATTRIBUTES, generate_wide_csv

    first = generate_wide_csv(tmp_path / "a.csv")
    assert first.read_bytes() == generate_wide_csv(tmp_path / "b.csv").read_bytes()
    frame = pd.read_csv(first)
    assert len(ATTRIBUTES) == 32 and set(ATTRIBUTES) <= set(frame.columns)
    assert all(frame[name].nunique() == len(values) for name, values in ATTRIBUTES.items())
    job = tmp_path / "job"
    profile = ingest([first], job).to_dict()
    roles = {c["name"]: c["role"] for c in profile["tables"][0]["columns"]}
    assert all(roles[name] == "category" for name in ATTRIBUTES)
    named = ", ".join(f"`{name}`" for name in ATTRIBUTES)
    plan = parse_plan(plan_markdown(profile, f"Break Revenue down by each of: {named}."))
    assert sum(len(section.items) for section in plan.sections) == 8 + 32
