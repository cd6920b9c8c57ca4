"""The per-agent usage table printed at the end of a run and by ``insightloom usage``, with the estimated cost."""

from __future__ import annotations

from typing import Any

from rich.table import Table

COLUMNS = ("calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd")
_HEADERS = {"cost_usd": "cost (USD)"}


def cache_read_share(values: dict[str, Any]) -> float:
    """``cache_read / (input + cache_read + cache_write)`` of one usage row, from 0 to 1."""
    sent = values["input_tokens"] + values["cache_read_tokens"] + values["cache_write_tokens"]
    return values["cache_read_tokens"] / sent if sent else 0.0


def usage_table(usage: dict[str, Any]) -> Table:
    """A rich table of ``usage.json``: one row per agent, a total row, and the cache-read share and cost below."""
    headers = [_HEADERS.get(c, c.replace("_tokens", "").replace("_", " ")) for c in COLUMNS]
    total = usage["total"]
    table = Table(
        "agent",
        *headers,
        title="Usage",
        caption=(
            f"estimated cost ${total['cost_usd']:.4f} · cache-read share {cache_read_share(total):.0%} "
            "(prices per model id from the config; offline runs are priced like Claude Sonnet 4.5)"
        ),
    )
    rows = [*usage["agents"].items(), ("total", total)]
    for name, values in rows:
        cells = [f"{values[c]:.4f}" if c == "cost_usd" else f"{values[c]:,}" for c in COLUMNS]
        table.add_row(name, *cells, style="bold" if name == "total" else None)
    return table
