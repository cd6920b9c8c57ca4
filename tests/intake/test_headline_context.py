"""The table around a column moves it in the headline ranking: dated copies, lags, OHLC, parts, background."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from insightloom.intake import ingest
from insightloom.intake.headline_context import context_points

RNG = np.random.default_rng(29)


def _lead(tmp_path: Path, frame: pd.DataFrame, name: str = "data.csv") -> list[str]:
    path = tmp_path / "in" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    table = ingest([path], tmp_path / "job").to_dict()["tables"][0]
    return [h["column"] for h in table["headline_measures"]]


def _total(points: dict[str, list[tuple[float, str | None]]], name: str) -> float:
    return sum(p for p, _ in points.get(name, []))


def test_the_latest_of_a_few_dated_copies_leads_and_the_earlier_are_baselines() -> None:
    points = context_points(["age", "re74", "re75", "re78", "BILLS103", "BILLS104"])
    assert _total(points, "re78") > 0 > _total(points, "re75")
    assert _total(points, "re74") < 0 and _total(points, "BILLS104") > 0 > _total(points, "BILLS103")
    assert any("re74, re75, re78" in str(reason) for _, reason in points["re78"])


def test_a_long_numbered_set_from_one_is_parts_and_none_of_them_leads() -> None:
    names = [f"item_{i:02d}" for i in range(1, 28)] + ["time_to_delivery"]
    points = context_points(names)
    assert all(_total(points, name) < 0 for name in names[:-1])
    assert "time_to_delivery" not in points


def test_lags_observation_counts_and_positions_never_lead() -> None:
    points = context_points(["Lag1", "lag_2", "daily_obs_count", "percent_complete", "childNum", "oscar_no", "Today"])
    assert all(_total(points, name) <= -30 for name in ("Lag1", "lag_2", "daily_obs_count", "childNum", "oscar_no"))
    assert _total(points, "percent_complete") < 0 and "Today" not in points


def test_the_close_leads_open_high_and_low() -> None:
    points = context_points(["date", "open", "high", "low", "close", "volume"])
    assert _total(points, "close") > 0 > _total(points, "low")
    assert "volume" not in points
    assert "close" not in context_points(["close", "distance"])  # a lone close (a distance, a date) is not a price


def test_weather_is_background_except_in_a_weather_table() -> None:
    assert _total(context_points(["Demand", "Temperature"], "elecdaily.csv"), "Temperature") < 0
    assert "temp" not in context_points(["temp", "wind"], "weather.csv")


def test_background_covariates_rank_below_the_outcome(tmp_path: Path) -> None:
    n = 80
    frame = pd.DataFrame({
        "income": RNG.uniform(400, 5000, n).round(1), "foodexp": RNG.uniform(200, 2000, n).round(1),
        "age": RNG.integers(18, 80, n), "education": RNG.integers(8, 20, n),
    })  # fmt: skip
    assert _lead(tmp_path, frame)[0] == "foodexp"


def test_a_chicks_weight_leads_its_group_numbers(tmp_path: Path) -> None:
    chicks = np.repeat(np.arange(1, 51), 12)
    frame = pd.DataFrame({
        "weight": RNG.integers(35, 373, chicks.size), "Time": np.tile(np.arange(0, 24, 2), 50),
        "Chick": chicks, "Diet": (chicks - 1) // 13 + 1,
    })  # fmt: skip
    ranked = _lead(tmp_path, frame, "ChickWeight.csv")
    assert ranked[0] == "weight"
    assert ranked.index("Chick") > ranked.index("weight")


def test_an_abbreviated_table_name_names_its_subject(tmp_path: Path) -> None:
    n = 60
    frame = pd.DataFrame({"year": RNG.integers(1974, 2016, n), "sex": RNG.choice(["F", "M"], n),
                          "education": RNG.integers(0, 20, n), "vocabulary": RNG.integers(0, 10, n)})  # fmt: skip
    assert _lead(tmp_path, frame, "Vocab.csv")[0] == "vocabulary"
