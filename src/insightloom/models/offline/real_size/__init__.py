"""Replies of a hosted model's size around the offline model's decisions (``offline_reply_size: real``).

The offline model decides as a capable LLM would but writes about a tenth as much: one-line ``run_standard`` scripts,
a report with no method notes, tool calls with no word before them. Cost estimates, the context ablation and the
strict Bedrock endpoint's lane then measure transcripts far shorter than a real job's. This layer keeps every
decision and writes what a hosted model writes around it:

- a sentence or two before each tool call, saying what the call is for (Claude's usual turn shape);
- the Coder's scripts at a real script's length, written with ``coder_analysis_utils``: load the view, check the
  columns the item uses, print coverage and a pandas cross-check, then record the tracked figures
  (:mod:`.scripts`);
- the Reporter's report with method notes under each finding and an appendix of how every cited figure was
  computed and checked, sent section by section (:mod:`.report`).

Where the sizes come from: the issue's measurements of the demo (the offline Coder wrote 1,143 output tokens over 9
calls, the Reporter 2,176 over 6) against what a hosted model writes on the same job, about ten times as much; and
the prompts' own asks (``prompts/coder.md``'s example is a full script: load, tracked calculations with checks,
notes; ``prompts/reporter.md`` asks for an interpretation per theme, a table, conclusions and a note on
limitations). ``tests/models/test_real_size.py`` holds the demo to at least 8,000 Coder and 10,000 Reporter output
tokens.
"""

from __future__ import annotations

from collections.abc import Callable

from ..conversation import Conversation, Reply, ToolCall
from .report import sized_render
from .scripts import sized_script

REPLY_SIZES = ("compact", "real")

#: What a hosted model says before calling each tool (any other tool gets the generic line).
_BEFORE: dict[str, str] = {
    "write_and_execute_tool": (
        "Next I run `{file_path}`. It loads the view through coder_analysis_utils, checks that the columns the plan "
        "item uses are present and typed as the profile says, prints their coverage and a pandas cross-check, and "
        "records the item's figures as tracked calculations so that the Validator can re-compute each of them."
    ),
    "file_read": (
        "I read `{path}` first: the notes and citations the other agents left are the only source of the figures "
        "I may cite, so I take them from the file rather than from memory."
    ),
    "render_section": (
        "I store the report section by section, starting with '{heading}', so that a refusal names only the failing "
        "section's passages and the sections already stored stay as they are. Each section is stored on its own, and "
        "a refused one is resent alone. "
        "Every figure in it is a reference to a verified calculation and "
        "every verdict a reference to its checked claim, so nothing in it is typed from memory."
    ),
    "render_report": "Every section is written; I render the report and read what the renderer says about it.",
    "update_plan": "I update the plan to record what the last agent finished, so the next step starts from it.",
    "validate_calculations": (
        "I re-compute every tracked calculation independently and compare it with the recorded value before any "
        "figure can be cited."
    ),
}
_GENERIC = "I call `{name}` for the next step of my part of the plan."


#: Tools that only read: a hosted model asks for several of them in one reply (parallel tool calls).
READ_ONLY_TOOLS = frozenset({"file_read", "summary_table", "draft_conclusions"})
MAX_BATCHED_READS = 3


def real_size(reply: Reply, conv: Conversation, decide: Callable[[Conversation], Reply] | None = None) -> Reply:
    """``reply`` as a hosted model would write it: the same decisions at a real model's length.

    Args:
        reply: The offline brain's reply.
        conv: The conversation it answers.
        decide: The brain itself: a read-only call is batched with the next reads the brain would make once it is
            answered (asked with a placeholder result; the real results decide everything after them).
    """
    if not reply.tool_calls:
        return reply
    calls: list[ToolCall] = []
    for call in _batched_reads(list(reply.tool_calls), conv, decide):
        if call.name == "write_and_execute_tool" and isinstance(call.input.get("content"), str):
            call = ToolCall(call.name, {**call.input, "content": sized_script(call.input["content"], conv)})
            calls.append(call)
        elif call.name == "render_report" and isinstance(call.input.get("markdown"), str):
            calls.extend(sized_render(call.input["markdown"], conv))
        else:
            calls.append(call)
    text = reply.text or " ".join(_before(call) for call in calls[:1])
    return Reply(text=text, tool_calls=tuple(calls))


def _batched_reads(
    calls: list[ToolCall], conv: Conversation, decide: Callable[[Conversation], Reply] | None
) -> list[ToolCall]:
    while decide is not None and len(calls) < MAX_BATCHED_READS and all(c.name in READ_ONLY_TOOLS for c in calls):
        following = decide(_answered(conv, calls)).tool_calls
        if not following or any(c.name not in READ_ONLY_TOOLS or c in calls for c in following):
            break
        calls += following
    return calls


def _answered(conv: Conversation, calls: list[ToolCall]) -> Conversation:
    """``conv`` with ``calls`` made and answered by a placeholder: what the brain would do next."""
    ids = [f"lookahead_{index}" for index in range(len(calls))]
    uses = [{"toolUse": {"toolUseId": i, "name": c.name, "input": c.input}} for i, c in zip(ids, calls, strict=True)]
    results = [{"toolResult": {"toolUseId": i, "status": "success", "content": [{"text": "(pending)"}]}} for i in ids]
    messages = [*conv.messages, {"role": "assistant", "content": uses}, {"role": "user", "content": results}]
    return Conversation(conv.system_prompt, messages, conv.tool_names)  # type: ignore[arg-type]


def _before(call: ToolCall) -> str:
    template = _BEFORE.get(call.name, _GENERIC)
    try:
        return template.format(name=call.name, **{k: str(v)[:80] for k, v in call.input.items()})
    except (KeyError, IndexError):
        return _GENERIC.format(name=call.name)


__all__ = ["MAX_BATCHED_READS", "READ_ONLY_TOOLS", "REPLY_SIZES", "real_size"]
