"""Estimated cost of model calls from the pricing table in the settings (USD per 1M tokens, by model id)."""

from __future__ import annotations

import fnmatch
import logging
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Price:
    """USD per 1M tokens of each kind."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, input_tokens: int, output_tokens: int, cache_read_tokens: int, cache_write_tokens: int) -> float:
        """The cost of one call's tokens, in USD."""
        return (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_read_tokens * self.cache_read
            + cache_write_tokens * self.cache_write
        ) / 1_000_000


class PriceTable:
    """Looks prices up by exact model id first, then by ``fnmatch`` pattern in table order.

    Args:
        table: ``{model_id_or_pattern: {"input", "output", "cache_read", "cache_write"}}``.
    """

    def __init__(self, table: dict[str, dict[str, float]]) -> None:
        self.table = {key: Price(**value) for key, value in table.items()}
        self._warned: set[str] = set()

    def price(self, model_id: str) -> Price | None:
        """The price for ``model_id``; None (cost counted as 0, warned once) when the table has none."""
        if model_id in self.table:
            return self.table[model_id]
        for pattern, price in self.table.items():
            if fnmatch.fnmatchcase(model_id, pattern):
                return price
        if model_id not in self._warned:
            self._warned.add(model_id)
            logger.warning("no price for model %s: its cost is counted as 0; add it under 'pricing'", model_id)
        return None

    def cost(self, model_id: str, input_tokens: int, output_tokens: int, cache_read: int, cache_write: int) -> float:
        price = self.price(model_id)
        return price.cost(input_tokens, output_tokens, cache_read, cache_write) if price else 0.0
