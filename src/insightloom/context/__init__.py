"""The context-engine layer: real token counts, token budgets, bounded tool history and prompt-cache simulation.

- ``tokens``: cl100k_base counts of text and of whole model requests (no network, hash-checked encoding).
- ``budget``: ``TokenBudget`` packs named regions into a token limit, never cutting a sentence.
- ``history``: reduces an agent's older tool exchanges to stubs (a Strands hook).
- ``prompt_cache``: simulates Bedrock prefix caching for the offline model.
"""

from .budget import Fragment, Packing, TokenBudget, compress_text
from .tokens import count_request, count_tokens, count_with_margin

__all__ = ["Fragment", "Packing", "TokenBudget", "compress_text", "count_request", "count_tokens", "count_with_margin"]
