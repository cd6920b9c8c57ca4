"""A test-only scripted model: plays a few fixed replies first, then lets the offline model finish the job."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from insightloom.models.offline import OfflineModel
from insightloom.models.offline.conversation import Conversation, Reply

Step = Reply | Callable[[Conversation], Reply]


class ScriptedModel(OfflineModel):
    """Replies with ``script`` on its first calls (per invocation), then behaves as the offline model would had the
    scripted exchanges never happened. Every conversation it saw is kept in ``seen`` for assertions."""

    def __init__(self, role: str, script: list[Step], **kwargs: Any) -> None:
        super().__init__(role=role, **kwargs)
        self.script = script
        self.used = 0
        self.seen: list[Conversation] = []
        self._scripted_task: object = None

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):  # type: ignore[override]
        conv = Conversation(system_prompt or "", messages, {s["name"] for s in tool_specs or []})
        self.seen.append(conv)
        if self.used < len(self.script):
            step = self.script[self.used]
            self.used += 1
            self._scripted_task = messages[0]
            reply = step(conv) if callable(step) else step
            async for event in self._emit(reply, messages, tool_specs, system_prompt):
                yield event
            return
        # Drop the scripted exchanges (assistant tool call + tool result pairs) so the offline brain sees a clean run.
        same_invocation = bool(messages) and messages[0] == self._scripted_task
        trimmed = [messages[0], *messages[1 + 2 * self.used :]] if same_invocation else messages
        async for event in super().stream(trimmed, tool_specs, system_prompt, **kwargs):
            yield event

    async def _emit(self, reply: Reply, messages, tool_specs, system_prompt):
        import json

        yield {"messageStart": {"role": "assistant"}}
        if reply.text:
            yield {"contentBlockDelta": {"delta": {"text": reply.text}}}
            yield {"contentBlockStop": {}}
        for index, call in enumerate(reply.tool_calls):
            yield {
                "contentBlockStart": {
                    "start": {"toolUse": {"toolUseId": f"scripted_{self.used}_{index}", "name": call.name}}
                }
            }
            payload = call.input if isinstance(call.input, str) else json.dumps(call.input)
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": payload}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if reply.tool_calls else "end_turn"}}
        yield {
            "metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 0}}
        }
