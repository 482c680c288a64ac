"""The DemoSeeder port: create or reset the demo database that sql_readonly reads."""

from abc import abstractmethod
from typing import Protocol


class DemoSeeder(Protocol):
    """Seeds the demo database and its read-only role."""

    @abstractmethod
    async def seed(self) -> str:
        """Create or reset the demo data; return a one-line summary of what is there."""
