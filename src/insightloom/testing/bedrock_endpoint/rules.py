"""The request rules the strict endpoint enforces, each with a stable name and where it comes from.

Each rule reads one decoded Converse (or CountTokens) request and returns the violations it finds. A violation is
answered as Bedrock answers it, HTTP 400 ``ValidationException``, with the rule's name at the start of the message so
that a failing test says which rule broke. Messages quote Bedrock's own wording where it is known.

The rules and their sources (``RULES`` holds the same list, and docs/testing.md prints it):

- ``roles.first_user``, ``roles.alternate``: a conversation starts with a user message and alternates user and
  assistant (Bedrock's ValidationException texts "A conversation must start with a user message" and "must
  alternate between user and assistant roles"; the Converse ``Message.role`` reference).
- ``content.empty``, ``content.blank_text``: every message has content, and no text block (system or message) is
  empty or whitespace ("The text field in the ContentBlock object at messages.N.content.M is blank";
  langchain-ai/langchainjs#8618, NousResearch/hermes-agent#60628).
- ``tools.result_follows_use``, ``tools.orphan_result``: every toolUse is answered by a toolResult with the same id
  in the next user message, and no toolResult answers a toolUse the previous turn did not make ("Expected
  toolResult blocks at messages.N.content for the following Ids", "The number of toolResult blocks ... exceeds the
  number of toolUse blocks of previous turn"); the break a summarization or history reduction leaves behind.
- ``tools.use_id``: a ``toolUseId`` matches ``^[a-zA-Z0-9_-]{1,64}$`` (``ToolUseBlock.toolUseId`` in the Converse
  API reference).
- ``tools.config_missing``: a request whose history holds toolUse or toolResult blocks carries ``toolConfig``
  ("The toolConfig field must be defined when using toolUse and toolResult content blocks").
- ``tools.config_empty``: ``toolConfig.tools`` has at least one tool (``ToolConfiguration.tools``, min 1 item, in the
  Bedrock Runtime service model).
- ``tools.name``, ``tools.unique``, ``tools.schema_object``: a tool name matches ``^[a-zA-Z0-9_-]{1,64}$``
  (``ToolSpecification.name`` in the Converse API reference), names are unique, and ``inputSchema.json`` is a JSON
  Schema of ``"type": "object"`` (Anthropic's tool-use docs: "input_schema ... type: Input should be 'object'").
- ``cache.max_points``: at most 4 cache points per request, tools, system and messages together (Bedrock's
  prompt-caching page; Anthropic: "A maximum of 4 blocks with cache_control may be provided").
- ``cache.after_reasoning``: no cache point right after a reasoning block ("Cache point cannot be inserted after
  reasoning block", strands-agents/harness-sdk#1820).
- ``cache.unsupported_model``: no cache point to a model family without prompt caching (``FAMILY_RULES``).
- ``params.temperature``, ``params.temperature_with_top_p``: temperature only where the family accepts it, and not
  beside ``topP`` where the family refuses the pair (``FAMILY_RULES``).
- ``params.thinking_temperature``: with extended thinking on, ``temperature`` may only be 1 (Anthropic, "Extended
  thinking": thinking is not compatible with temperature or top_k modifications).
- ``reasoning.signature``: a Claude reasoning block replayed in history carries its signature (Anthropic rejects an
  unsigned ``reasoningText``; Strands' ``BedrockModel._rejects_reasoning_block``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .family_rules import family_rule

__all__ = ["RULES", "Rule", "Violation", "check_request"]

MAX_CACHE_POINTS = 4
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
TOOL_USE_ID_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

Request = Mapping[str, Any]


@dataclass(frozen=True)
class Violation:
    """One broken rule in one request.

    Attributes:
        rule: The rule's stable name (``tools.result_follows_use``...).
        message: What is wrong, naming the place in the request (``messages.3.content.0``).
        model_id: The model the request was sent to.
    """

    rule: str
    message: str
    model_id: str = ""

    def __str__(self) -> str:
        return f"[{self.rule}] {self.message}"


@dataclass(frozen=True)
class Rule:
    """A named rule: ``check(model_id, request)`` yields ``(rule name, message)`` pairs."""

    name: str
    summary: str
    check: Callable[[str, Request], Iterator[str]]


def _messages(request: Request) -> list[Mapping[str, Any]]:
    value = request.get("messages")
    return list(value) if isinstance(value, list) else []


def _content(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    value = message.get("content")
    return [b for b in value if isinstance(b, Mapping)] if isinstance(value, list) else []


def _tools(request: Request) -> list[Mapping[str, Any]]:
    config = request.get("toolConfig")
    tools = config.get("tools") if isinstance(config, Mapping) else None
    return [t for t in tools if isinstance(t, Mapping)] if isinstance(tools, list) else []


def _first_user(_model: str, request: Request) -> Iterator[str]:
    messages = _messages(request)
    if not messages or messages[0].get("role") != "user":
        yield (
            "A conversation must start with a user message. Try again with a conversation that starts with a user "
            "message."
        )


def _alternate(_model: str, request: Request) -> Iterator[str]:
    previous = None
    for index, message in enumerate(_messages(request)):
        role = message.get("role")
        if role not in ("user", "assistant"):
            yield f"messages.{index}.role is {role!r}: a message's role is user or assistant."
        elif role == previous:
            yield (
                f"A conversation must alternate between user and assistant roles (messages.{index - 1} and "
                f"messages.{index} are both {role}). Make sure the conversation alternates between user and "
                "assistant roles and try again."
            )
        previous = role


def _empty(_model: str, request: Request) -> Iterator[str]:
    for index, message in enumerate(_messages(request)):
        if not _content(message):
            yield (
                f"The content field in the Message object at messages.{index} is empty. Add a ContentBlock object to "
                "the content field and try again."
            )


def _blank_text(_model: str, request: Request) -> Iterator[str]:
    def blank(block: Mapping[str, Any]) -> bool:
        return "text" in block and not str(block["text"]).strip()

    for index, block in enumerate(request.get("system") or []):
        if isinstance(block, Mapping) and blank(block):
            yield (
                f"The text field in the SystemContentBlock object at system.{index} is blank. Add text to the text "
                "field, and try again."
            )
    for m_index, message in enumerate(_messages(request)):
        for b_index, block in enumerate(_content(message)):
            if blank(block):
                yield (
                    f"The text field in the ContentBlock object at messages.{m_index}.content.{b_index} is blank. "
                    "Add text to the text field, and try again."
                )
            result = block.get("toolResult")
            for r_index, item in enumerate(result.get("content") or [] if isinstance(result, Mapping) else []):
                if isinstance(item, Mapping) and blank(item):
                    yield (
                        f"The text field in the ToolResultContentBlock object at messages.{m_index}.content.{b_index}"
                        f".toolResult.content.{r_index} is blank. Add text to the text field, and try again."
                    )


def _ids(message: Mapping[str, Any], kind: str) -> list[str]:
    return [str(b[kind].get("toolUseId")) for b in _content(message) if isinstance(b.get(kind), Mapping)]


def _result_follows_use(_model: str, request: Request) -> Iterator[str]:
    messages = _messages(request)
    for index, message in enumerate(messages):
        uses = _ids(message, "toolUse")
        if not uses or message.get("role") != "assistant":
            continue
        following = messages[index + 1] if index + 1 < len(messages) else {}
        answered = set(_ids(following, "toolResult")) if following.get("role") == "user" else set()
        missing = [tool_id for tool_id in uses if tool_id not in answered]
        if missing:
            yield (
                f"Expected toolResult blocks at messages.{index + 1}.content for the following Ids: "
                f"{', '.join(missing)} (the toolUse blocks of messages.{index})."
            )


def _orphan_result(_model: str, request: Request) -> Iterator[str]:
    messages = _messages(request)
    for index, message in enumerate(messages):
        results = _ids(message, "toolResult")
        if not results:
            continue
        previous = messages[index - 1] if index > 0 else None
        made = set(_ids(previous, "toolUse")) if previous is not None and previous.get("role") == "assistant" else set()
        orphans = [tool_id for tool_id in results if tool_id not in made]
        if orphans:
            yield (
                f"The toolResult blocks at messages.{index}.content answer no toolUse of the previous turn: "
                f"{', '.join(orphans)}. The number of toolResult blocks at messages.{index}.content exceeds the "
                "number of toolUse blocks of previous turn."
            )


def _use_id(_model: str, request: Request) -> Iterator[str]:
    for m_index, message in enumerate(_messages(request)):
        for index, block in enumerate(_content(message)):
            for kind in ("toolUse", "toolResult"):
                item = block.get(kind)
                if isinstance(item, Mapping) and not TOOL_USE_ID_RE.match(str(item.get("toolUseId", ""))):
                    yield (
                        f"messages.{m_index}.content.{index}.{kind}.toolUseId {item.get('toolUseId')!r} is invalid: "
                        "an id is 1 to 64 letters, digits, underscores and hyphens."
                    )


def _config_missing(_model: str, request: Request) -> Iterator[str]:
    used = any(
        "toolUse" in block or "toolResult" in block for message in _messages(request) for block in _content(message)
    )
    if used and "toolConfig" not in request:
        yield "The toolConfig field must be defined when using toolUse and toolResult content blocks."


def _config_empty(_model: str, request: Request) -> Iterator[str]:
    config = request.get("toolConfig")
    if isinstance(config, Mapping) and not [t for t in _tools(request) if "toolSpec" in t]:
        yield "toolConfig.tools holds no tool: send at least one toolSpec, or leave toolConfig out."


def _specs(request: Request) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for index, tool in enumerate(_tools(request)):
        spec = tool.get("toolSpec")
        if isinstance(spec, Mapping):
            yield index, spec


def _tool_name(_model: str, request: Request) -> Iterator[str]:
    for index, spec in _specs(request):
        name = str(spec.get("name", ""))
        if not TOOL_NAME_RE.match(name):
            yield (
                f"toolConfig.tools.{index}.toolSpec.name {name!r} is invalid: a tool name is 1 to 64 letters, digits, "
                "underscores and hyphens."
            )


def _tool_unique(_model: str, request: Request) -> Iterator[str]:
    seen: dict[str, int] = {}
    for index, spec in _specs(request):
        name = str(spec.get("name", ""))
        if name in seen:
            yield f"Tool names must be unique: toolConfig.tools.{seen[name]} and .{index} are both {name!r}."
        seen.setdefault(name, index)


def _schema_object(_model: str, request: Request) -> Iterator[str]:
    for index, spec in _specs(request):
        schema = spec.get("inputSchema")
        document = schema.get("json") if isinstance(schema, Mapping) else None
        if not isinstance(document, Mapping) or document.get("type") != "object":
            yield (
                f"toolConfig.tools.{index}.toolSpec.inputSchema.json must be a JSON Schema object with "
                '"type": "object".'
            )


def _cache_points(request: Request) -> Iterator[tuple[str, Sequence[Mapping[str, Any]], int]]:
    """Every cache point as (where, the list it sits in, its index in that list)."""
    tools = _tools(request)
    for index, tool in enumerate(tools):
        if "cachePoint" in tool:
            yield "toolConfig.tools", tools, index
    system = [b for b in request.get("system") or [] if isinstance(b, Mapping)]
    for index, block in enumerate(system):
        if "cachePoint" in block:
            yield "system", system, index
    for m_index, message in enumerate(_messages(request)):
        content = _content(message)
        for index, block in enumerate(content):
            if "cachePoint" in block:
                yield f"messages.{m_index}.content", content, index


def _max_points(_model: str, request: Request) -> Iterator[str]:
    count = sum(1 for _ in _cache_points(request))
    if count > MAX_CACHE_POINTS:
        yield (
            f"A maximum of {MAX_CACHE_POINTS} blocks with cache_control may be provided. Found {count} (tools, "
            "system and messages together)."
        )


def _after_reasoning(_model: str, request: Request) -> Iterator[str]:
    for where, blocks, index in _cache_points(request):
        if index > 0 and "reasoningContent" in blocks[index - 1]:
            yield f"Cache point cannot be inserted after reasoning block ({where}.{index})."


def _unsupported_model(model_id: str, request: Request) -> Iterator[str]:
    rule = family_rule(model_id)
    if not rule.prompt_cache and any(True for _ in _cache_points(request)):
        yield (
            f"You invoked an unsupported model or your request did not allow prompt caching: {model_id} "
            f"({rule.name}) takes no cachePoint blocks."
        )


def _inference(request: Request) -> Mapping[str, Any]:
    config = request.get("inferenceConfig")
    return config if isinstance(config, Mapping) else {}


def _temperature(model_id: str, request: Request) -> Iterator[str]:
    rule = family_rule(model_id)
    if "temperature" in _inference(request) and not rule.temperature:
        yield f"temperature is deprecated for this model ({model_id}, {rule.name}): leave it out."


def _temperature_with_top_p(model_id: str, request: Request) -> Iterator[str]:
    rule = family_rule(model_id)
    config = _inference(request)
    if rule.temperature and not rule.temperature_with_top_p and "temperature" in config and "topP" in config:
        yield (
            f"`temperature` and `top_p` cannot both be specified for this model ({model_id}, {rule.name}). Please use "
            "only one."
        )


def _thinking_temperature(model_id: str, request: Request) -> Iterator[str]:
    extra = request.get("additionalModelRequestFields")
    thinking = extra.get("thinking") if isinstance(extra, Mapping) else None
    enabled = isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
    temperature = _inference(request).get("temperature")
    if enabled and family_rule(model_id).claude and temperature is not None and temperature != 1:
        yield f"`temperature` may only be set to 1 when thinking is enabled (got {temperature})."


def _reasoning_signature(model_id: str, request: Request) -> Iterator[str]:
    if not family_rule(model_id).claude:
        return
    for m_index, message in enumerate(_messages(request)):
        for index, block in enumerate(_content(message)):
            reasoning = block.get("reasoningContent")
            text = reasoning.get("reasoningText") if isinstance(reasoning, Mapping) else None
            if isinstance(text, Mapping) and not text.get("signature"):
                yield f"messages.{m_index}.content.{index}.reasoningContent.reasoningText has no signature."


RULES: tuple[Rule, ...] = (
    Rule("roles.first_user", "the first message is the user's", _first_user),
    Rule("roles.alternate", "roles alternate user / assistant", _alternate),
    Rule("content.empty", "every message has content", _empty),
    Rule("content.blank_text", "no empty or whitespace-only text block", _blank_text),
    Rule(
        "tools.result_follows_use",
        "every toolUse answered by its toolResult in the next user message",
        _result_follows_use,
    ),
    Rule("tools.orphan_result", "no toolResult without its toolUse in the previous turn", _orphan_result),
    Rule("tools.use_id", "toolUseId matches ^[a-zA-Z0-9_-]{1,64}$", _use_id),
    Rule("tools.config_missing", "toolConfig present when the history uses tools", _config_missing),
    Rule("tools.config_empty", "toolConfig has at least one tool", _config_empty),
    Rule("tools.name", "tool names match ^[a-zA-Z0-9_-]{1,64}$", _tool_name),
    Rule("tools.unique", "tool names are unique", _tool_unique),
    Rule("tools.schema_object", "inputSchema.json is an object schema", _schema_object),
    Rule("cache.max_points", "at most 4 cache points per request", _max_points),
    Rule("cache.after_reasoning", "no cache point right after a reasoning block", _after_reasoning),
    Rule("cache.unsupported_model", "no cache point to a model without prompt caching", _unsupported_model),
    Rule("params.temperature", "temperature only where the family accepts it", _temperature),
    Rule("params.temperature_with_top_p", "not temperature and top_p together where refused", _temperature_with_top_p),
    Rule("params.thinking_temperature", "temperature 1 or absent with extended thinking", _thinking_temperature),
    Rule("reasoning.signature", "Claude reasoning blocks in history carry their signature", _reasoning_signature),
)


def check_request(model_id: str, request: Request) -> list[Violation]:
    """Every rule ``request`` to ``model_id`` breaks, in ``RULES`` order (empty when it is valid)."""
    return [Violation(rule.name, message, model_id) for rule in RULES for message in rule.check(model_id, request)]
