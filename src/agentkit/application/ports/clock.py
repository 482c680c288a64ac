"""The Clock port: time comes in through it so the domain and tests control it."""

from abc import abstractmethod
from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    """Wall time for records and a monotonic time for latencies."""

    @abstractmethod
    def now(self) -> datetime:
        """The current time, timezone-aware (UTC)."""

    @abstractmethod
    def monotonic(self) -> float:
        """Seconds from an arbitrary point; only differences mean anything."""
