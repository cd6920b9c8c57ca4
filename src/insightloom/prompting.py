"""Load and render the agents' prompt templates.

Prompts are Markdown files shipped in the package (``insightloom/prompts/<name>.md``) so they are versioned with the
code and readable by people who are not Python developers. A user folder can override any of them by file name, which
lets a team tune wording without forking the package.

Templates use :class:`string.Template` (``${var}``, literal ``$`` written ``$$``) rather than ``str.format`` because
prompts are full of braces: JSON, ``{{calc:<id>}}`` references and SQL. Every template has one line
``<!-- dynamic -->``: everything above it is identical for every call of that agent (the cacheable prefix), everything
below holds the per-call values. :func:`split_static` cuts there so the agent factory can put a cache point between the
two parts.

Two placeholders are derived by the product when the caller does not pass them: ``${suggested_analyses}`` (the
analyses the product's own planner chooses from the ``${data_profile}`` the prompt carries) and
``${revision_requests}`` (the reviewer's ``${feedback}`` read into requests, each applicable or refused with its
reason). A hosted Planner thus starts from the same choices and rules as the offline one.
"""

from __future__ import annotations

import importlib.resources
import json
import logging
import re
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from insightloom.config import ROLES
from insightloom.errors import ConfigError

logger = logging.getLogger(__name__)

#: The line that separates the static, cacheable prefix from the per-call part of a prompt.
DYNAMIC_MARKER = "<!-- dynamic -->"

#: Every prompt the package ships; one file each in ``insightloom/prompts/``.
PROMPT_NAMES: tuple[str, ...] = (*ROLES, "planner_revise", "summarization")

#: Placeholders that are fixed per configuration (not per call) and so may sit in the cached prefix.
PER_CONFIG_PLACEHOLDERS: frozenset[str] = frozenset({"max_tokens", "language"})

_NAME_RE = re.compile(r"^[a-z0-9_]{1,64}$")
_MARKER_RE = re.compile(r"^[ \t]*<!-- dynamic -->[ \t]*$", re.MULTILINE)
_PROMPTS_FIX = "Use one of the shipped prompt names, or add '<name>.md' to your prompts folder."
#: Placeholders the product fills from the other values when the caller does not (see :func:`derived_values`).
DERIVED_PLACEHOLDERS: frozenset[str] = frozenset({"suggested_analyses", "revision_requests"})
_PROFILE_RE = re.compile(r"<data_profile>\s*(\{.*\})\s*</data_profile>", re.S)


def _file_name(name: str) -> str:
    """Turn a prompt name (``coder`` or ``coder.md``) into a safe file name.

    Names are validated so that a configured name can never point outside the prompts folder.
    """
    stem = name[:-3] if name.endswith(".md") else name
    if not _NAME_RE.match(stem):
        raise ConfigError(
            f"Prompt name {name!r} is not valid (allowed: lower-case letters, digits and '_').",
            fix=_PROMPTS_FIX,
        )
    return f"{stem}.md"


def builtin_prompts_dir() -> Path:
    """Return the folder of the shipped prompts (for display and tests; loading goes through importlib.resources)."""
    return Path(str(importlib.resources.files("insightloom") / "prompts"))


def _read_override(file_name: str, prompts_dir: Path) -> str | None:
    """Read ``prompts_dir/file_name`` when the user folder has it; ``None`` means use the built-in one."""
    if not prompts_dir.is_dir():
        logger.warning("Prompts folder %s does not exist; using the built-in prompts.", prompts_dir)
        return None
    candidate = prompts_dir / file_name
    if not candidate.is_file():
        return None
    logger.debug("Using prompt override %s", candidate)
    try:
        return candidate.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"Prompt file {candidate} cannot be read: {exc}.",
            fix="Save the prompt override as UTF-8 text, or remove it to use the built-in prompt.",
        ) from exc


def load_prompt(name: str, prompts_dir: Path | None = None) -> str:
    """Return the raw template text of one prompt.

    A file of the same name in ``prompts_dir`` wins over the built-in one, so a deployment can tune a single prompt
    without copying all of them.

    Args:
        name: Prompt name such as ``"coder"`` (``"coder.md"`` is accepted too).
        prompts_dir: Optional user folder with override files.

    Returns:
        The template text, placeholders not yet substituted.

    Raises:
        ConfigError: The name is invalid, or neither the user folder nor the package has the file.
    """
    file_name = _file_name(name)
    if prompts_dir is not None:
        text = _read_override(file_name, Path(prompts_dir))
        if text is not None:
            return text
    resource = importlib.resources.files("insightloom") / "prompts" / file_name
    if not resource.is_file():
        where = f" or in {prompts_dir}" if prompts_dir is not None else ""
        raise ConfigError(f"Prompt file {file_name} not found in the built-in prompts{where}.", fix=_PROMPTS_FIX)
    return resource.read_text(encoding="utf-8")


def placeholders(text: str) -> set[str]:
    """Return the names of the ``${var}``/``$var`` placeholders in a template (``$$`` is not one)."""
    found: set[str] = set()
    for match in string.Template.pattern.finditer(text):
        named = match.group("named") or match.group("braced")
        if named:
            found.add(named)
    return found


def profile_from_prompt(text: str) -> dict[str, Any] | None:
    """The profile dict inside a ``<data_profile>`` block (``DataProfile.to_prompt()``); None when there is none."""
    found = _PROFILE_RE.search(text or "")
    if not found:
        return None
    try:
        profile = json.loads(found.group(1))
    except ValueError:
        return None
    return profile if isinstance(profile, dict) and profile.get("tables") else None


def derived_values(values: Mapping[str, object]) -> dict[str, str]:
    """``suggested_analyses`` and ``revision_requests`` from ``data_profile``, ``request``, ``language``,
    ``previous_plan`` and ``feedback``, by the product's planning and revision rules.

    They are computed from the profile text the Planner itself reads, so they are exactly what the offline Planner
    chooses from the same prompt.
    """
    from insightloom.analysis.planning import suggested_items
    from insightloom.analysis.revision import plan_requests, requests_markdown

    profile = profile_from_prompt(str(values.get("data_profile", "")))
    language = str(values.get("language", "en"))
    out = {
        "suggested_analyses": suggested_items(profile, str(values.get("request", "")), language)
        if profile
        else "(no data profile)"
    }
    feedback = str(values.get("feedback", ""))
    requests = plan_requests(feedback, profile, str(values.get("previous_plan", ""))) if feedback.strip() else []
    out["revision_requests"] = requests_markdown(requests, language)
    return out


def render_prompt(name: str, prompts_dir: Path | None = None, **values: object) -> str:
    """Load a prompt and substitute its placeholders.

    Extra values are ignored, so callers can pass one superset of values to every prompt; a missing value is an error
    rather than a silently empty section of the prompt.

    Args:
        name: Prompt name such as ``"planner"``.
        prompts_dir: Optional user folder with override files.
        **values: Placeholder values; each is converted with ``str()``. The derived ones
            (:data:`DERIVED_PLACEHOLDERS`) are computed by :func:`derived_values` unless given.

    Returns:
        The rendered prompt text (still containing the ``<!-- dynamic -->`` line).

    Raises:
        ConfigError: The prompt is missing, a placeholder has no value, or the template has a stray ``$``.
    """
    text = load_prompt(name, prompts_dir)
    template = string.Template(text)
    if (placeholders(text) & DERIVED_PLACEHOLDERS) - values.keys():
        values = {**derived_values(values), **values}
    try:
        return template.substitute(values)
    except KeyError as exc:
        missing = exc.args[0]
        raise ConfigError(
            f"Prompt {_file_name(name)} needs a value for placeholder ${{{missing}}}, but none was given.",
            fix=f"Pass {missing}=... when rendering the prompt, or remove the placeholder from the prompt file.",
        ) from exc
    except ValueError as exc:
        raise ConfigError(
            f"Prompt {_file_name(name)} has an invalid placeholder: {exc}.",
            fix="Write a literal dollar sign as '$$' and placeholders as '${name}'.",
        ) from exc


def split_static(text: str) -> tuple[str, str]:
    """Split a (rendered) prompt into its static prefix and its dynamic part.

    The static part is identical on every call of the same agent and configuration, so a prompt cache point placed
    after it is reused; the dynamic part carries the per-call values. The marker line itself is dropped.

    Args:
        text: Prompt text containing a ``<!-- dynamic -->`` line.

    Returns:
        ``(static, dynamic)``. A text without the marker is all static: ``(text, "")``.
    """
    match = _MARKER_RE.search(text)
    if match is None:
        logger.debug("Prompt has no %s marker; treating it as fully static.", DYNAMIC_MARKER)
        return text, ""
    static = text[: match.start()].rstrip("\n")
    dynamic = text[match.end() :].lstrip("\n")
    return static, dynamic
