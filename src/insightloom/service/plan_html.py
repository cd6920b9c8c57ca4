"""The plan as safe HTML for the web page.

Plans are model output, and a model can be talked into writing ``<script>``: raw HTML is escaped (markdown-it with
``html`` off), links to ``javascript:`` and similar are not made links (markdown-it's link validation), and the
page inserts nothing else as HTML. ``- [ ]`` / ``- [x]`` items become read-only checkboxes.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt

_TASK = re.compile(r"<li>(<p>)?\[([ xX])\] ")


@lru_cache(maxsize=1)
def _renderer() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def _checkbox(match: re.Match[str]) -> str:
    checked = " checked" if match.group(2) in "xX" else ""
    return f'<li class="task">{match.group(1) or ""}<input type="checkbox" disabled{checked}> '


def plan_html(markdown: str) -> str:
    """Render a plan (Markdown) to HTML that is safe to insert into the page."""
    return _TASK.sub(_checkbox, _renderer().render(markdown))
