"""Brains: what decides the endpoint's replies.

A brain is any callable ``(ConverseCall) -> BrainReply``. Three are provided:

- :class:`ScriptedBrain` replies from a list, for a plugin's unit tests;
- :class:`ModelBrain` drives any Strands ``Model`` (the product's ``OfflineModel``, or a test's scripted subclass):
  the Converse request becomes Strands messages, and the model's stream is collected into the reply;
- :class:`RoleRouter` picks a brain per agent role, recognising the role from the request's static system prompt,
  so one endpoint serves a whole job whose roles share a model id.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strands.models import Model

from ...ask.prompt import SYSTEM_TEMPLATE as ANSWERER_SYSTEM
from ...prompting import PROMPT_NAMES, load_prompt, split_static

__all__ = [
    "Brain",
    "BrainReply",
    "ConverseCall",
    "ModelBrain",
    "NoBrainError",
    "RoleRouter",
    "ScriptedBrain",
    "offline_router",
]


@dataclass(frozen=True)
class ConverseCall:
    """One model call as the endpoint received it.

    Attributes:
        model_id: The model id or inference profile from the URL.
        messages: The role messages, exactly as sent (cache points included).
        system: The system content blocks, as sent.
        tool_specs: The ``toolSpec`` of every tool, cache points left out.
        inference_config: ``inferenceConfig`` (maxTokens, temperature, topP, stopSequences).
        additional_fields: ``additionalModelRequestFields`` (extended thinking...).
        operation: ``converse`` or ``converse-stream``.
    """

    model_id: str
    messages: list[dict[str, Any]]
    system: list[dict[str, Any]] = field(default_factory=list)
    tool_specs: list[dict[str, Any]] = field(default_factory=list)
    inference_config: dict[str, Any] = field(default_factory=dict)
    additional_fields: dict[str, Any] = field(default_factory=dict)
    operation: str = "converse-stream"

    @classmethod
    def from_request(cls, model_id: str, request: Mapping[str, Any], operation: str) -> ConverseCall:
        """The call a decoded Converse request body makes."""
        tools = (request.get("toolConfig") or {}).get("tools") or []
        return cls(
            model_id=model_id,
            messages=list(request.get("messages") or []),
            system=list(request.get("system") or []),
            tool_specs=[dict(tool["toolSpec"]) for tool in tools if "toolSpec" in tool],
            inference_config=dict(request.get("inferenceConfig") or {}),
            additional_fields=dict(request.get("additionalModelRequestFields") or {}),
            operation=operation,
        )

    @property
    def system_text(self) -> str:
        """The system prompt's text blocks joined, without cache points."""
        return "".join(str(block["text"]) for block in self.system if "text" in block)

    def strands_messages(self) -> list[dict[str, Any]]:
        """The messages as a Strands model takes them: the same blocks, cache points dropped."""
        return [
            {"role": m["role"], "content": [b for b in m.get("content", []) if "cachePoint" not in b]}
            for m in self.messages
        ]


@dataclass(frozen=True)
class BrainReply:
    """A brain's reply.

    Attributes:
        content: Converse content blocks: ``{"text": ...}``, ``{"toolUse": {"toolUseId", "name", "input"}}`` or
            ``{"reasoningContent": {"reasoningText": {"text", "signature"}}}``.
        stop_reason: ``end_turn``, ``tool_use``, ``max_tokens``...
        output_tokens: The output count to report; None counts the content with the product's tokenizer.
        role: The agent role that answered, when a router knows it (the endpoint logs it).
    """

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    output_tokens: int | None = None
    role: str = ""

    @classmethod
    def text(cls, text: str) -> BrainReply:
        """A plain text reply that ends the turn."""
        return cls([{"text": text}])

    @classmethod
    def tool_use(cls, name: str, tool_input: Mapping[str, Any], tool_use_id: str = "tooluse_1") -> BrainReply:
        """A reply that calls one tool."""
        return cls([{"toolUse": {"toolUseId": tool_use_id, "name": name, "input": dict(tool_input)}}], "tool_use")


Brain = Callable[[ConverseCall], BrainReply]


class NoBrainError(LookupError):
    """No brain answers this call (the router did not recognise its role, or a script ran out)."""


class ScriptedBrain:
    """Replies from a list, in order, and keeps every call it answered.

    Args:
        replies: The replies, or callables that build one from the call.
    """

    def __init__(self, replies: Iterable[BrainReply | Brain]) -> None:
        self._replies = list(replies)
        self.calls: list[ConverseCall] = []
        self._lock = threading.Lock()

    def __call__(self, call: ConverseCall) -> BrainReply:
        with self._lock:
            if len(self.calls) >= len(self._replies):
                raise NoBrainError(
                    f"the script has {len(self._replies)} replies and this is call {len(self.calls) + 1}"
                )
            step = self._replies[len(self.calls)]
            self.calls.append(call)
        return step(call) if callable(step) else step


class ModelBrain:
    """Drives a Strands ``Model`` as a brain: the request goes in as Strands messages, its stream comes back.

    Each call runs the model's async stream on a private event loop in the endpoint's request thread.

    Args:
        model: Any Strands model; its ``stream`` gets messages, tool specs, the system prompt (and its content
            blocks) as a Strands agent would pass them.
    """

    def __init__(self, model: Model) -> None:
        self.model = model
        self._lock = threading.Lock()  # one call at a time: a scripted model keeps per-call state

    def __call__(self, call: ConverseCall) -> BrainReply:
        with self._lock:
            config = self.model.get_config()
            budget = call.inference_config.get("maxTokens")
            if isinstance(config, dict) and "max_tokens" in config and budget:
                self.model.update_config(max_tokens=int(budget))  # the request's budget, as a hosted model has
            return asyncio.run(self._collect(call))

    async def _collect(self, call: ConverseCall) -> BrainReply:
        system = [b for b in call.system if "cachePoint" not in b]
        blocks: list[dict[str, Any]] = []
        current: dict[str, Any] | None = None
        tool_input = ""
        stop_reason, output_tokens = "end_turn", None
        stream = self.model.stream(
            call.strands_messages(),  # type: ignore[arg-type]
            call.tool_specs or None,  # type: ignore[arg-type]
            call.system_text or None,
            system_prompt_content=system or None,  # type: ignore[arg-type]
        )
        async for event in stream:
            if "contentBlockStart" in event:
                start: Mapping[str, Any] = event["contentBlockStart"].get("start") or {}
                if "toolUse" in start:
                    current, tool_input = {"toolUse": dict(start["toolUse"])}, ""
            elif "contentBlockDelta" in event:
                delta: Mapping[str, Any] = event["contentBlockDelta"]["delta"]
                current = _apply_delta(current, delta)
                tool_input += str(delta.get("toolUse", {}).get("input", ""))
            elif "contentBlockStop" in event and current is not None:
                if "toolUse" in current:
                    current["toolUse"]["input"] = _tool_input(tool_input)
                blocks.append(current)
                current = None
            elif "messageStop" in event:
                stop_reason = str(event["messageStop"].get("stopReason", stop_reason))
            elif "metadata" in event:
                output_tokens = event["metadata"].get("usage", {}).get("outputTokens")
        if current is not None:
            blocks.append(current)
        return BrainReply(blocks, stop_reason, output_tokens)


def _tool_input(raw: str) -> Any:
    """A streamed tool input, decoded; text that is no JSON (a model's slip) is kept as the raw string, which the
    stream sends on unchanged, as Bedrock relays what the model wrote."""
    try:
        return json.loads(raw or "{}")
    except ValueError:
        return raw


def _apply_delta(current: dict[str, Any] | None, delta: Mapping[str, Any]) -> dict[str, Any]:
    """Fold one text or reasoning delta into the open block (a tool-use delta is gathered by the caller)."""
    if "text" in delta:
        current = current if current is not None and "text" in current else {"text": ""}
        current["text"] += str(delta["text"])
    elif "reasoningContent" in delta:
        if current is None or "reasoningContent" not in current:
            current = {"reasoningContent": {"reasoningText": {"text": ""}}}
        reasoning = current["reasoningContent"]["reasoningText"]
        reasoning["text"] += str(delta["reasoningContent"].get("text", ""))
        if "signature" in delta["reasoningContent"]:
            reasoning["signature"] = delta["reasoningContent"]["signature"]
    return current if current is not None else {"text": ""}


#: The prompt each role's calls are recognised by, beyond the role's own (the revision is still the Planner).
_PROMPT_ROLE = {"planner_revise": "planner"}


class RoleRouter:
    """Sends each call to the brain of the agent role that made it.

    The role is recognised from the static part of the product's prompt templates: the text of each template above
    its ``<!-- dynamic -->`` line, up to its first placeholder, is what every call of that role starts its system
    prompt with. The summarization prompt is recognised as ``summarization``.

    Args:
        brains: A brain per role (``coder``, ``planner``... and optionally ``summarization``).
        fallback: The brain for calls whose role has no brain, or is not recognised; None refuses them.
        prompts_dir: The prompt override folder the job uses, if any.
    """

    def __init__(
        self, brains: Mapping[str, Brain], *, fallback: Brain | None = None, prompts_dir: Path | None = None
    ) -> None:
        self.brains = dict(brains)
        self.fallback = fallback
        pairs = _fingerprints(PROMPT_NAMES, prompts_dir) + [("answerer", _prefix(ANSWERER_SYSTEM))]
        self._fingerprints = sorted(pairs, key=lambda pair: -len(pair[1]))

    def role_of(self, call: ConverseCall) -> str | None:
        """The role whose prompt the call's system prompt starts with, or None."""
        text = call.system_text.lstrip()
        return next((role for role, prefix in self._fingerprints if text.startswith(prefix)), None)

    def __call__(self, call: ConverseCall) -> BrainReply:
        role = self.role_of(call)
        brain = self.brains.get(role or "", self.fallback)
        if brain is None:
            known = ", ".join(sorted(self.brains))
            raise NoBrainError(
                f"no brain for this call: its system prompt is the {role or 'unrecognised'} prompt "
                f"(brains: {known}); starts {call.system_text[:80]!r}"
            )
        return dataclasses.replace(brain(call), role=role or "")


#: How much of a prompt's fixed opening identifies it: enough to tell the shipped prompts apart, short enough to
#: stay clear of the parts a caller adapts (the answerer drops a tool's line when it has no tool).
FINGERPRINT_CHARS = 200


def _prefix(template: str) -> str:
    """A template's fixed opening: its text up to its first placeholder (``$name`` or ``{name}``), at most
    :data:`FINGERPRINT_CHARS` characters."""
    return re.split(r"[$]|(?<!{){(?!{)", template, maxsplit=1)[0].strip()[:FINGERPRINT_CHARS]


def _fingerprints(names: Sequence[str], prompts_dir: Path | None) -> list[tuple[str, str]]:
    pairs = []
    for name in names:
        prefix = _prefix(split_static(load_prompt(name, prompts_dir))[0])
        if len(prefix) >= 20:  # too short a prefix would match other prompts
            pairs.append((_PROMPT_ROLE.get(name, name), prefix))
    return pairs


def offline_router(prompts_dir: Path | None = None, *, reply_size: str = "real") -> RoleRouter:
    """A router to the product's offline model, one per role: the brain that makes a whole job behind the endpoint
    (its summarization calls go to a model of their own).

    Args:
        prompts_dir: The prompt override folder the job uses, if any.
        reply_size: ``real`` (default): replies at a hosted model's length (``models.offline.real_size``), so a
            job behind the endpoint sends requests of a real job's size; ``compact``: the offline model's own.
    """
    from ...models.offline.model import OfflineModel
    from ...models.offline.roles import ROLES as OFFLINE_ROLES

    brains: dict[str, Brain] = {
        role: ModelBrain(OfflineModel(role=role, reply_size=reply_size)) for role in OFFLINE_ROLES
    }
    brains["summarization"] = ModelBrain(OfflineModel(role="coordinator"))
    return RoleRouter(brains, prompts_dir=prompts_dir)
