"""The product's own demo dataset: a year of orders for a fictional bakery and coffee shop, "Loom & Loaf".

`insightloom demo` needs data that is ours to ship (the shared test data is not) and that has patterns worth finding,
so the offline analysis shows what the product does: seasonality with a December peak, one region (West) growing
through the year, catering orders with far higher revenue per order, busier weekends, a few very large outlier
orders and about 1% missing values. Generation is deterministic for a given seed (numpy's seeded Generator).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

YEAR = 2024
REGIONS = ("North", "South", "East", "West")
CHANNELS = ("Online", "In-store", "Catering")
CATEGORIES = ("Coffee", "Pastry", "Bread", "Cakes", "Merchandise")
_PRICES = {"Coffee": 4.5, "Pastry": 3.8, "Bread": 6.5, "Cakes": 32.0, "Merchandise": 18.0}
_CATEGORY_P = {
    "Online": (0.30, 0.20, 0.15, 0.20, 0.15),
    "In-store": (0.45, 0.30, 0.15, 0.07, 0.03),
    "Catering": (0.25, 0.35, 0.15, 0.25, 0.00),
}
_DISCOUNTS = (0.0, 5.0, 10.0, 15.0, 20.0)
_MISSING_COLUMNS = ("Region", "Customer Segment", "Discount %")

DEFINITIONS = (
    ("Order ID", "Order number (identifier, not analysed)"),
    ("Date", "Date the order was placed (format: YYYY-MM-DD)"),
    ("Region", "Store region that fulfilled the order (North, South, East, West)"),
    ("Channel", "Sales channel: Online, In-store or Catering"),
    ("Category", "Product category of the order (Coffee, Pastry, Bread, Cakes, Merchandise)"),
    ("Customer Segment", "Customer type: New, Returning or Business"),
    ("Units", "Number of items in the order"),
    ("Revenue", "Order revenue after discount (unit: USD)"),
    ("Discount %", "Discount applied to the order, in percent"),
)


def column_definitions() -> list[dict[str, str]]:
    """Column descriptions in the ``column_definitions.json`` format (units such as "(unit: USD)")."""
    return [{"column_name": name, "column_desc": desc} for name, desc in DEFINITIONS]


def _daily_rate(days: pd.DatetimeIndex) -> np.ndarray:
    """Expected orders per day: a seasonal curve with a December peak, and busier weekends."""
    doy = days.day_of_year.to_numpy()
    season = 1.0 + 0.25 * np.cos(2 * np.pi * (doy - 355) / 366)
    season += np.where(days.month.to_numpy() == 12, 0.35, 0.0)
    weekend = np.where(days.day_of_week.to_numpy() >= 5, 1.45, 1.0)
    return 3.7 * season * weekend


def _regions(rng: np.random.Generator, progress: np.ndarray) -> np.ndarray:
    """Regions whose mix shifts towards West through the year (West grows from ~15% to ~40%)."""
    west = 0.15 + 0.25 * progress
    rest = (1.0 - west) / 3.0
    draws = rng.random(len(progress))
    idx = np.where(draws < rest, 0, np.where(draws < 2 * rest, 1, np.where(draws < 3 * rest, 2, 3)))
    return np.asarray(REGIONS, dtype=object)[idx]


def _orders(rng: np.random.Generator) -> pd.DataFrame:
    days = pd.date_range(f"{YEAR}-01-01", f"{YEAR}-12-31", freq="D")
    counts = rng.poisson(_daily_rate(days))
    dates = np.repeat(days.to_numpy(), counts)
    n = len(dates)
    progress = (pd.DatetimeIndex(dates).day_of_year.to_numpy() - 1) / 365.0
    channel = rng.choice(CHANNELS, size=n, p=(0.52, 0.40, 0.08))
    category = np.array([rng.choice(CATEGORIES, p=_CATEGORY_P[c]) for c in channel], dtype=object)
    segment = np.where(
        channel == "Catering",
        rng.choice(("Business", "Returning"), size=n, p=(0.8, 0.2)),
        rng.choice(("New", "Returning", "Business"), size=n, p=(0.35, 0.6, 0.05)),
    )
    units = np.where(channel == "Catering", rng.poisson(18, size=n) + 6, rng.poisson(2.2, size=n) + 1)
    discount = rng.choice(_DISCOUNTS, size=n, p=(0.55, 0.15, 0.15, 0.1, 0.05))
    price = np.array([_PRICES[c] for c in category]) * rng.normal(1.0, 0.06, size=n).clip(0.8, 1.2)
    revenue = np.round(units * price * (1 - discount / 100.0), 2)
    return pd.DataFrame(
        {
            "Order ID": [f"LL-{i + 1:05d}" for i in range(n)],
            "Date": pd.DatetimeIndex(dates).strftime("%Y-%m-%d"),
            "Region": _regions(rng, progress),
            "Channel": channel,
            "Category": category,
            "Customer Segment": segment,
            "Units": units.astype(int),
            "Revenue": revenue,
            "Discount %": discount,
        }
    )


def _add_outliers(frame: pd.DataFrame, rng: np.random.Generator) -> None:
    """A handful of very large event orders (catering for conferences), far above the usual range."""
    picks = rng.choice(frame.index[frame["Channel"] == "Catering"], size=4, replace=False)
    frame.loc[picks, "Units"] = rng.integers(300, 480, size=4)
    frame.loc[picks, "Revenue"] = np.round(frame.loc[picks, "Units"] * 7.5, 2)


def _add_missing(frame: pd.DataFrame, rng: np.random.Generator) -> None:
    """Blank about 1% of the rows' Region, Customer Segment or Discount % cells, as real exports have."""
    rows = rng.choice(frame.index, size=max(1, len(frame) // 100), replace=False)
    for row in rows:
        frame.loc[row, rng.choice(_MISSING_COLUMNS)] = np.nan


def generate_demo_frame(seed: int = 7) -> pd.DataFrame:
    """The demo orders as a DataFrame (deterministic for ``seed``)."""
    rng = np.random.default_rng(seed)
    frame = _orders(rng)
    frame = frame.astype({"Region": object, "Customer Segment": object, "Discount %": float})
    _add_outliers(frame, rng)
    _add_missing(frame, rng)
    return frame


def generate_demo_csv(path: Path, seed: int = 7) -> Path:
    """Write the demo dataset as CSV.

    Args:
        path: Target file (parent folders are created).
        seed: Random seed; the same seed always gives the same file.

    Returns:
        The path written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = generate_demo_frame(seed)
    frame.to_csv(path, index=False, encoding="utf-8", lineterminator="\n")
    logger.info("wrote demo dataset %s (%d rows)", path, len(frame))
    return path


def write_column_definitions(path: Path) -> Path:
    """Write :func:`column_definitions` as ``column_definitions.json``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(column_definitions(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path
