"""The HealthProbe port: is a dependency reachable?"""

from abc import abstractmethod
from typing import Protocol


class HealthProbe(Protocol):
    """Checks one dependency (Postgres, Redis...)."""

    name: str

    @abstractmethod
    async def check(self) -> None:
        """Return if the dependency answers; raise otherwise."""
