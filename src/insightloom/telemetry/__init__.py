"""Usage, cost, transcripts and progress events, attached to agents as Strands hook providers."""

from .hooks import AgentTelemetry
from .usage import UsageLedger

__all__ = ["AgentTelemetry", "UsageLedger"]
