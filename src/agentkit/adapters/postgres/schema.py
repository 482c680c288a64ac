"""Where a database's schema stands against this release's Alembic migrations (the script directory)."""

from pathlib import Path

from alembic.script import ScriptDirectory

from agentkit.application.errors import ConfigurationError
from agentkit.application.ports.schema_migrator import SchemaStatus


def find_migrations() -> Path:
    """The Alembic script directory: `migrations/` of a source checkout, or one packaged beside `agentkit`."""
    package = Path(__file__).resolve().parents[2]  # the `agentkit` package folder
    for candidate in (package.parent.parent / "migrations", package / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise ConfigurationError(f"the Alembic migrations were not found next to {package}")


class SchemaRevisions:
    """The revisions this release's migrations know, read once from the script directory.

    The history is one line (one head): a revision the scripts know and that is not the head is
    behind it, one they do not know was written by a newer release.

    Args:
        script_location: The Alembic script directory; found with `find_migrations` by default.
    """

    def __init__(self, script_location: Path | None = None) -> None:
        scripts = ScriptDirectory(str(script_location or find_migrations()))
        head = scripts.get_current_head()  # raises if the history forked: one head is the rule here
        if head is None:
            raise ConfigurationError(f"no migration found in {scripts.dir}")
        self.head = head
        self._known = frozenset(script.revision for script in scripts.walk_revisions())

    def status(self, current: str | None) -> SchemaStatus:
        """Where a database recording revision `current` (None: never migrated) stands."""
        if current == self.head:
            return SchemaStatus(current=current, head=self.head, state="current")
        if current is None or current in self._known:
            return SchemaStatus(current=current, head=self.head, state="behind")
        return SchemaStatus(current=current, head=self.head, state="ahead")
