"""The per-agent usage table printed at the end of a run and by ``insightloom usage``."""

from __future__ import annotations

from typing import Any

from rich.table import Table

COLUMNS = ("calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd")


def usage_table(usage: dict[str, Any]) -> Table:
    """A rich table of ``usage.json``: one row per agent and a total row."""
    table = Table("agent", *(c.replace("_tokens", "").replace("_", " ") for c in COLUMNS), title="Usage")
    rows = [*usage["agents"].items(), ("total", usage["total"])]
    for name, values in rows:
        cells = [f"{values[c]:.4f}" if c == "cost_usd" else f"{values[c]:,}" for c in COLUMNS]
        table.add_row(name, *cells, style="bold" if name == "total" else None)
    return table
