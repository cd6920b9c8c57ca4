"""Intake of one known table written in every CSV dialect a real export uses: line endings (LF, CRLF, CR only, mixed),
a byte-order mark or none, the delimiter and the quoting. Each reads back to the same rows and types, or the test
fails: a raw parser error (exit 1) is a failure too, since only ``BadInputError`` (exit 2) may leave intake."""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from insightloom.intake import ingest

HEADER = ["customer", "region", "units", "amount", "ordered"]
ROWS = [
    ['Kim, "Jr"', "North", 3, 1204.5, "2024-01-05"],  # a delimiter and quotes inside a cell
    ["Lee", "South", 12, 88.25, "2024-01-19"],
    ["Park Ji-woo", "North", 7, 0.5, "2024-02-02"],
    ["O'Neil", "East", 1, 19999.99, "2024-02-29"],
    ["Choi", "South", 40, 310.0, "2024-03-11"],
    ["Jung", "West", 9, 75.75, "2024-03-30"],
]
QUOTING = {"minimal": csv.QUOTE_MINIMAL, "all": csv.QUOTE_ALL, "text": csv.QUOTE_NONNUMERIC}


def _csv_bytes(delimiter: str, quoting: str, ending: str, bom: bool) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, quoting=QUOTING[quoting], lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(ROWS)
    lines = out.getvalue().split("\n")[:-1]  # no cell holds a line break, so every "\n" ends a row
    if ending == "mixed":
        text = "".join(line + ("\r\n", "\r", "\n")[i % 3] for i, line in enumerate(lines))
    else:
        text = "".join(line + ending for line in lines)
    return ("\ufeff" if bom else "").encode("utf-8") + text.encode("utf-8")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    delimiter=st.sampled_from([",", ";", "\t", "|"]),
    quoting=st.sampled_from(sorted(QUOTING)),
    ending=st.sampled_from(["\n", "\r\n", "\r", "mixed"]),
    bom=st.booleans(),
)
@example(delimiter=",", quoting="minimal", ending="\r", bom=True)  # an old Mac export with a BOM: always tried
def test_every_dialect_reads_back_the_known_table(
    delimiter: str, quoting: str, ending: str, bom: bool, tmp_path_factory: object
) -> None:
    folder: Path = tmp_path_factory.mktemp("dialect")  # type: ignore[attr-defined]
    source = folder / ("orders.tsv" if delimiter == "\t" and bom else "orders.csv")
    source.write_bytes(_csv_bytes(delimiter, quoting, ending, bom))
    profile = ingest([source], folder / "job")
    table = profile.tables[0]
    frame = pd.read_parquet(folder / "job" / table.parquet)
    assert list(frame.columns) == HEADER and table.rows == len(ROWS)
    assert frame["customer"].tolist() == [r[0] for r in ROWS]
    assert frame["region"].tolist() == [r[1] for r in ROWS]
    assert frame["units"].tolist() == [r[2] for r in ROWS]
    assert frame["amount"].tolist() == [r[3] for r in ROWS]
    assert [d.date() for d in pd.to_datetime(frame["ordered"])] == [dt.date.fromisoformat(str(r[4])) for r in ROWS]
