"""The SchemaMigrator port: bring the durable store's schema up to date (`agentkit migrate`), or say where it is."""

from abc import abstractmethod
from typing import Literal, Protocol

import msgspec

SchemaState = Literal["current", "behind", "ahead"]


class SchemaStatus(msgspec.Struct, frozen=True, kw_only=True):
    """Where the store's schema stands against the migrations of the running code.

    Attributes:
        current: The revision the store records; None when it was never migrated.
        head: The newest revision the code's migrations know.
        state: `current` at the head; `behind` never migrated or at an older revision (an upgrade
            brings it to the head); `ahead` at a revision the code does not know (a newer release
            migrated it: an upgrade cannot help, and the code may not fit the tables).
    """

    current: str | None
    head: str
    state: SchemaState


class SchemaMigrator(Protocol):
    """Applies the schema migrations of the run store."""

    @abstractmethod
    async def upgrade(self) -> None:
        """Apply every migration not yet applied. Safe to repeat and to run from several processes at once."""

    @abstractmethod
    async def current(self) -> str | None:
        """The revision the store is at, or None when no migration was ever applied (or none apply)."""

    @abstractmethod
    async def status(self) -> SchemaStatus:
        """The store's revision against the code's newest."""
