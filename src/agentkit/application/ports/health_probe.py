"""The HealthProbe port: is a dependency reachable, and ready for this process?"""

from abc import abstractmethod
from typing import Protocol


class NotReady(Exception):
    """The dependency answers, but this process cannot use it as it is; `state` says why (`schema_behind`).

    Args:
        state: A short word for /health's checks, in place of `ok` or `down`.
    """

    def __init__(self, state: str) -> None:
        super().__init__(state)
        self.state = state


class HealthProbe(Protocol):
    """Checks one dependency (Postgres, Redis...)."""

    name: str

    @abstractmethod
    async def check(self) -> None:
        """Return if the dependency answers and is ready; raise NotReady if it answers but is not ready, anything
        else if it does not answer."""
