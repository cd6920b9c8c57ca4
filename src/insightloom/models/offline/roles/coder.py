"""The offline Coder: one analysis script per open plan item it can analyse, then the standard response.

An item it cannot analyse gets no script: it is reported as not possible, with the reason, so the Tracker marks it
``[~]`` and the job goes on honestly instead of ticking work that was never done.
"""

from __future__ import annotations

from typing import Any

from ..conversation import Conversation, Reply
from .role_helpers import language, plan_items, standard_response


def _not_possible_reason(item: str, profile: dict[str, Any]) -> str:
    from ..analyst import join_refusal, parse_item_text

    refused = join_refusal(item, profile)
    if refused is not None:
        return str(refused)
    if parse_item_text(item) is not None:
        return "it names a table or column that is not in the data profile, or one that may not be analysed"
    return "no analysis the offline model can run matches this wording"


def _final(doable: list[str], runs: list[Any], impossible: list[str], profile: dict[str, Any]) -> Reply:
    completed, insights, files = [], [], []
    for item, run in zip(doable, runs, strict=False):
        if run.status == "success":
            completed.append(item)
            first = next((ln.strip() for ln in run.result.splitlines() if ln.strip().startswith(("stdout", "|"))), "")
            insights.append(f"{item.split(':')[0]}: done" + (f" ({first[:80]})" if first else ""))
            files.append(f"code/{run.input.get('file_path', '')}")
        else:
            insights.append(f"{item.split(':')[0]}: failed ({run.result.splitlines()[0][:120] if run.result else ''})")
    settled = completed + [f"{item} — not possible: {_not_possible_reason(item, profile)}" for item in impossible]
    status = "SUCCESS" if len(completed) == len(doable) else ("PARTIAL_SUCCESS" if completed else "ERROR")
    if impossible and status == "SUCCESS":
        status = "PARTIAL_SUCCESS"
    return Reply(
        text=standard_response(status, settled, insights, files + ["all_results.txt", "calculation_metadata.json"])
    )


def _spec_or_request(item: str, profile: dict[str, Any]) -> Any:
    from ....statistics.request import parse_item as parse_stat_item
    from ..analyst import parse_item

    return parse_stat_item(item) or parse_item(item, profile)


def coder(conv: Conversation) -> Reply:
    from ..analyst import script_for

    profile = conv.json_tag("data_profile") or {"tables": [], "aliases": {}, "language": "en"}
    specs = [(item, _spec_or_request(item, profile)) for item in plan_items(conv)]
    doable = [(item, spec) for item, spec in specs if spec is not None]
    impossible = [item for item, spec in specs if spec is None]
    runs = [e for e in conv.exchanges() if e.name == "write_and_execute_tool"]
    if len(runs) < len(doable):
        name, source = script_for(doable[len(runs)][1], profile, language(conv))
        return Reply.call("write_and_execute_tool", file_path=name, content=source, timeout=120)
    return _final([item for item, _ in doable], runs, impossible, profile)
