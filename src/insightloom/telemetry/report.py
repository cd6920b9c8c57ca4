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


#: What an offline run's ``offline-<role>`` ids are priced as (``config.default_pricing``).
_OFFLINE_PRICED_AS = "Claude Sonnet 4.5 and Claude Haiku 4.5 list prices (offline run: nothing was charged)"


def cost_line(usage: dict[str, Any]) -> str:
    """``estimated on <models>: $X``: the models whose prices gave the figure, never worded as a charge."""
    models = sorted({str(c.get("model_id") or "") for c in usage.get("model_calls") or []} - {""})
    offline = [m for m in models if m.startswith("offline-")]
    hosted = [m for m in models if not m.startswith("offline-")]
    named = ", ".join(hosted + ([_OFFLINE_PRICED_AS] if offline else [])) or "no model call"
    return f"estimated on {named}: ${usage['total']['cost_usd']:.4f}"


def usage_table(usage: dict[str, Any]) -> Table:
    """A rich table of ``usage.json``: one row per agent, a total row, and the cache-read share and cost below."""
    headers = [_HEADERS.get(c, c.replace("_tokens", "").replace("_", " ")) for c in COLUMNS]
    total = usage["total"]
    table = Table(
        "agent",
        *headers,
        title="Usage",
        caption=(
            f"{cost_line(usage)} · cache-read share {cache_read_share(total):.0%} (list prices per model id from the "
            "config; a bill may differ)"
            + "".join(f"\n{agent}: {note}" for agent, note in sorted((usage.get("cache_notes") or {}).items()))
        ),
    )
    rows = [*usage["agents"].items(), ("total", total)]
    for name, values in rows:
        cells = [f"{values[c]:.4f}" if c == "cost_usd" else f"{values[c]:,}" for c in COLUMNS]
        table.add_row(name, *cells, style="bold" if name == "total" else None)
    return table
