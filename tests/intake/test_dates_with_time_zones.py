"""ISO dates with a time zone (``Z``, ``+09:00``) become one naive UTC clock: every date compares with every other."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from intake_helpers import ingest_one


def test_zulu_and_offset_dates_are_naive_utc(tmp_path: Path) -> None:
    csv = tmp_path / "riders.csv"
    csv.write_text(
        "date,riders\n2005-04-05T00:00:00Z,236\n2005-04-06T09:00:00+09:00,156\n2005-04-07T00:00:00Z,101\n",
        encoding="utf-8",
    )
    table, frame = ingest_one(csv, tmp_path / "job")
    assert table.column("date").role == "date"
    assert frame["date"].dt.tz is None
    assert list(frame["date"]) == [pd.Timestamp("2005-04-05"), pd.Timestamp("2005-04-06"), pd.Timestamp("2005-04-07")]
    assert frame["date"].min() < pd.Timestamp("2005-04-06 12:00")  # compares with a naive timestamp, no TypeError
