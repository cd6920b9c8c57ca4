"""UTC timestamps in the one format every job file uses (ISO 8601 ending in ``Z``)."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    """Now, as ``2026-11-30T08:19:02.123Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def compact_utc() -> str:
    """Now, as ``20261130T081902Z`` (used in job ids)."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
