"""The job folder's file contracts as JSON Schema, owned and shipped by the package.

Each schema describes one file a job leaves behind (``job.json``, ``citations.json`` ...) or one line of
``events.jsonl``. Tools and plugins that read job folders can validate against them; ``insightloom schema NAME``
prints one. The schemas extend the reference contracts of the design (extra keys are allowed everywhere except in
``shared_state.json``); they never narrow them.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from ..errors import BadInputError

#: Schema name → the job-folder file it describes.
SCHEMA_FILES: dict[str, str] = {
    "ask_event": "ask_events.jsonl (one line)",
    "audit_findings": "audit_findings.json",
    "calculation_metadata": "calculation_metadata.json",
    "citations": "citations.json",
    "event": "events.jsonl (one line)",
    "job": "job.json",
    "profile": "cache/profile.json",
    "request": "request.json",
    "shared_state": "shared_state.json",
    "usage": "usage.json",
}
SCHEMA_NAMES = tuple(SCHEMA_FILES)

__all__ = ["SCHEMA_FILES", "SCHEMA_NAMES", "check_document", "load_schema", "schema_text"]


def _normalise(name: str) -> str:
    """Accept ``job``, ``job.json``, ``job.schema.json`` and ``events``/``events.jsonl`` for the same schema."""
    stem = name.strip().lower().removesuffix(".json").removesuffix(".schema").removesuffix(".jsonl")
    return "event" if stem == "events" else stem


def schema_text(name: str) -> str:
    """The schema's JSON text exactly as shipped.

    Raises:
        BadInputError: ``name`` is not one of ``SCHEMA_NAMES``.
    """
    key = _normalise(name)
    if key not in SCHEMA_FILES:
        raise BadInputError(f"There is no schema named {name!r}.", f"use one of: {', '.join(SCHEMA_NAMES)}.")
    return resources.files(__package__).joinpath(f"{key}.schema.json").read_text(encoding="utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """The schema as a fresh dict (callers may change it), e.g. ``load_schema("citations")``.

    Raises:
        BadInputError: ``name`` is not one of ``SCHEMA_NAMES``.
    """
    document: dict[str, Any] = json.loads(schema_text(name))
    return document


def check_document(name: str, document: Any, where: str, *, fix: str) -> None:
    """Refuse ``document`` (read from ``where``) unless it matches schema ``name``, naming the first wrong field.

    Raises:
        BadInputError: The document does not match; the message names the field and the fix is ``fix``.
    """
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    validator = Draft202012Validator(load_schema(name))
    error = next(iter(sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))), None)
    if error is None:
        return
    field = ".".join(str(part) for part in error.absolute_path)
    at = f" field {field!r}:" if field else ""
    raise BadInputError(f"{where}:{at} {error.message} (it does not match the {SCHEMA_FILES[name]} contract).", fix=fix)
