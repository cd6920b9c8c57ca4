"""Real token counts and a context window for hosted providers whose Strands class counts chars/4.

Strands drives proactive summarization from ``Model.count_tokens``; a chars/4 guess on Korean text or code is off by
a factor of two or more, so every provider we build counts with the product's tokenizer (plus the Claude margin).
"""

from __future__ import annotations

import functools
from typing import Any

from ..context.tokens import count_request, with_margin

DEFAULT_CONTEXT_WINDOW = 128_000


@functools.cache
def counting_subclass(base: type) -> type:
    """A subclass of the provider class ``base`` whose ``count_tokens`` is the real count."""

    async def count_tokens(
        self: Any, messages: Any, tool_specs: Any = None, system_prompt: Any = None, system_prompt_content: Any = None
    ) -> int:
        local = count_request(messages, tool_specs, system_prompt, system_prompt_content)
        config = self.get_config()
        model_id = str(config.get("model_id", "")) if isinstance(config, dict) else ""
        return with_margin(local, model_id, getattr(self, "token_margin", 0.2))

    @property  # type: ignore[misc]
    def context_window_limit(self: Any) -> int:
        return int(getattr(self, "window", DEFAULT_CONTEXT_WINDOW))

    return type(
        f"Counting{base.__name__}",
        (base,),
        {"count_tokens": count_tokens, "context_window_limit": context_window_limit},
    )


def make_counting(base: type, *, token_margin: float, window: int = DEFAULT_CONTEXT_WINDOW, **kwargs: Any) -> Any:
    """Instantiate the counting subclass of ``base`` with the provider's own arguments."""
    model = counting_subclass(base)(**kwargs)
    model.token_margin = token_margin
    model.window = window
    return model
