"""The MetricsExporter port: the process's metrics in a scraper's format."""

from abc import abstractmethod
from typing import Protocol


class MetricsExporter(Protocol):
    """Renders the current metrics (GET /metrics)."""

    @property
    @abstractmethod
    def content_type(self) -> str:
        """The media type of `render`'s bytes."""

    @abstractmethod
    def render(self) -> bytes:
        """Every metric now."""
