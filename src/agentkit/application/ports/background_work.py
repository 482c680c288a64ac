"""The BackgroundWork port: duties a serving process runs beside its requests and runs (webhook sending)."""

from abc import abstractmethod
from typing import Protocol


class BackgroundWork(Protocol):
    """Something that works in the background between `start` and `stop`."""

    @abstractmethod
    async def start(self) -> None:
        """Begin working in the background (once)."""

    @abstractmethod
    async def stop(self) -> None:
        """Finish what can be finished quickly and stop; what is left is picked up after a restart."""
