"""The deterministic offline model provider."""

from .model import OfflineModel

__all__ = ["OfflineModel"]
