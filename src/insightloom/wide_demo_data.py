"""The product's wide sample table: the demo orders with 32 more attributes per order.

Long plans need a table with many dimensions worth breaking down by: the context benchmark
(``benchmarks/context_ablation.py --items``) plans 10 to 40 items on it, to show how cost grows with the work. Each
attribute has three or four values and a mild effect on revenue, so every breakdown finds a real difference.
Generation is deterministic for a given seed, like :mod:`insightloom.demo_data`.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from .demo_data import generate_demo_frame

logger = logging.getLogger(__name__)

#: Attribute column → its values; the first value is the most common.
ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "Store Format": ("Cafe", "Flagship", "Kiosk", "Drive-thru"),
    "Payment Method": ("Card", "Mobile", "Cash", "Voucher"),
    "Delivery Speed": ("Standard", "Express", "Pickup"),
    "Promotion": ("No promotion", "Bundle", "Happy hour", "Seasonal"),
    "Loyalty Tier": ("Bronze", "Silver", "Gold"),
    "Device": ("Counter", "Phone", "Tablet", "Desktop"),
    "Packaging": ("Paper", "Reusable", "Box"),
    "Fulfilment Centre": ("Harbor", "Hill", "Market"),
    "Sales Team": ("Alpha", "Beta", "Gamma"),
    "Campaign": ("Spring", "Summer", "Autumn", "Winter"),
    "Menu": ("Classic", "Seasonal", "Limited"),
    "Portion": ("Small", "Medium", "Large"),
    "Flavour": ("Plain", "Vanilla", "Caramel", "Hazelnut"),
    "Diet Label": ("Regular", "Vegan", "Gluten-free"),
    "Bean Origin": ("Brazil", "Ethiopia", "Colombia", "Kenya"),
    "Roast": ("Medium", "Light", "Dark"),
    "Milk Option": ("Whole", "Oat", "Almond", "Dairy-free blend"),
    "Gift Wrap": ("Plain", "Wrapped", "Ribbon"),
    "Order Source": ("Walk-in", "App", "Website", "Phone"),
    "Price Band": ("Mid", "Budget", "Premium"),
    "Basket Type": ("Single", "Small", "Large"),
    "Weather": ("Cloudy", "Sunny", "Rainy"),
    "Time of Day": ("Morning", "Midday", "Afternoon", "Evening"),
    "Staff Shift": ("Early", "Late", "Weekend"),
    "Subscription Plan": ("Pay as you go", "Weekly", "Monthly"),
    "Referral Source": ("Search", "Friend", "Ad", "Social"),
    "Cup Type": ("Paper", "Ceramic", "Own"),
    "Seating": ("Takeaway", "Indoor", "Outdoor"),
    "Queue Length": ("Short", "Medium", "Long"),
    "Music": ("Jazz", "Pop", "Quiet"),
    "Table Service": ("Self-serve", "Served", "Delivered"),
    "Survey Response": ("Positive", "Neutral", "Negative"),
}


def generate_wide_frame(seed: int = 11) -> pd.DataFrame:
    """The demo orders plus every attribute of ``ATTRIBUTES`` (deterministic for ``seed``)."""
    rng = np.random.default_rng(seed)
    frame = generate_demo_frame(seed)
    lift = np.ones(len(frame))
    for name, values in ATTRIBUTES.items():
        weights = rng.dirichlet(np.full(len(values), 4.0))
        weights = np.sort(weights)[::-1]  # the first value is the most common
        picks = rng.choice(len(values), size=len(frame), p=weights)
        frame[name] = np.asarray(values, dtype=object)[picks]
        effects = rng.normal(1.0, 0.04, size=len(values))
        lift *= effects[picks]
    frame["Revenue"] = np.round(frame["Revenue"].to_numpy() * lift, 2)
    return frame


def generate_wide_csv(path: Path, seed: int = 11) -> Path:
    """Write the wide sample table as CSV (parent folders are created); the same seed always gives the same file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = generate_wide_frame(seed)
    frame.to_csv(path, index=False, encoding="utf-8", lineterminator="\n")
    logger.info("wrote wide sample table %s (%d rows x %d columns)", path, len(frame), frame.shape[1])
    return path
