"""Helpers shared by the offline roles."""

from __future__ import annotations

import re

from ..conversation import Conversation


def standard_response(status: str, completed: list[str], insights: list[str], files: list[str]) -> str:
    """The standard response format every tool agent returns."""

    def bullets(lines: list[str]) -> str:
        return "\n".join(f"- {line}" for line in lines) if lines else "- none"

    return (
        f"## Status\n{status}\n## Completed Tasks\n{bullets(completed)}\n## Key Insights\n{bullets(insights)}\n"
        f"## Generated Files\n{bullets(files)}"
    )


def language(conv: Conversation) -> str:
    found = re.findall(r"language\W+(ko|en)\b", conv.system_prompt)
    return found[-1] if found else "en"


def plan_items(conv: Conversation) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^\s*-\s*\[ \]\s+(.*)$", conv.tag("plan_section") or "", re.M)]
