"""The offline Coder: one analysis script per open plan item, then the standard response."""

from __future__ import annotations

import json
import re

from ..conversation import Conversation, Reply
from .role_helpers import language, standard_response


def coder(conv: Conversation) -> Reply:
    from ..analyst import parse_item, script_for

    profile = conv.json_tag("data_profile") or {"tables": [], "aliases": {}, "language": "en"}
    lang = language(conv)
    section = conv.tag("plan_section") or ""
    items = [m.group(1).strip() for m in re.finditer(r"^\s*-\s*\[ \]\s+(.*)$", section, re.M)]
    runs = [e for e in conv.exchanges() if e.name == "write_and_execute_tool"]
    if len(runs) < len(items):
        item = items[len(runs)]
        spec = parse_item(item, profile)
        if spec is not None:
            name, source = script_for(spec, profile, lang)
            return Reply.call("write_and_execute_tool", file_path=name, content=source, timeout=120)
        return Reply.call(
            "write_and_execute_tool",
            file_path=f"{len(runs) + 1:02d}_note.py",
            content=f"print({json.dumps('No offline analysis matches: ' + item)})\n",
            timeout=30,
        )
    completed, insights, files = [], [], []
    for item, run in zip(items, runs, strict=False):
        if run.status == "success":
            completed.append(item)
            first = next((ln.strip() for ln in run.result.splitlines() if ln.strip().startswith(("stdout", "|"))), "")
            insights.append(f"{item.split(':')[0]}: done" + (f" ({first[:80]})" if first else ""))
            files.append(f"code/{run.input.get('file_path', '')}")
        else:
            insights.append(f"{item.split(':')[0]}: failed ({run.result.splitlines()[0][:120] if run.result else ''})")
    status = "SUCCESS" if len(completed) == len(items) else ("PARTIAL_SUCCESS" if completed else "ERROR")
    return Reply(
        text=standard_response(status, completed, insights, files + ["all_results.txt", "calculation_metadata.json"])
    )
