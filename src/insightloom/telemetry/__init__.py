"""Usage per model call, estimated cost, transcripts and progress events, attached to agents as Strands hooks."""

from .hooks import AgentTelemetry
from .pricing import PriceTable
from .usage import CallRecord, UsageLedger

__all__ = ["AgentTelemetry", "CallRecord", "PriceTable", "UsageLedger"]
