"""The SchemaMigrator of the in-memory store: it has no schema, so there is nothing to migrate."""

from agentkit.application.ports.schema_migrator import SchemaMigrator


class InMemorySchemaMigrator(SchemaMigrator):
    """Does nothing, so `agentkit migrate` is harmless without a database."""

    async def upgrade(self) -> None:
        """Nothing to apply."""

    async def current(self) -> str | None:
        """No revision."""
        return None
