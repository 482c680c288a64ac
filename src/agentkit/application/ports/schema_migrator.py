"""The SchemaMigrator port: bring the durable store's schema up to date (`agentkit migrate`)."""

from abc import abstractmethod
from typing import Protocol


class SchemaMigrator(Protocol):
    """Applies the schema migrations of the run store."""

    @abstractmethod
    async def upgrade(self) -> None:
        """Apply every migration not yet applied. Safe to repeat and to run from several processes at once."""

    @abstractmethod
    async def current(self) -> str | None:
        """The revision the store is at, or None when no migration was ever applied (or none apply)."""
