"""The context-engine layer: token counting (and, later, budgets and packing)."""

from .tokens import count_tokens, count_with_margin

__all__ = ["count_tokens", "count_with_margin"]
