"""A service holds its database to this release's schema at start-up: migrated, or refused in one line.

`agentkit serve` and `agentkit worker` on a configured PostgreSQL read its Alembic revision before
anything else. At the code's head they start. Behind it (never migrated, or an older release's
revision) they refuse, naming `agentkit migrate`, unless MIGRATE_ON_START is set: then they migrate
first (behind an advisory lock, so replicas starting together migrate once). Ahead of it (a revision
a newer release wrote) they refuse whatever MIGRATE_ON_START says: this code does not know those
tables, and an upgrade cannot bring a schema back. A database that cannot be read (down, missing,
refusing the credentials) is refused too, with what the server said.
"""

from collections.abc import Coroutine
from typing import Any, Final, TypeVar

import structlog
from sqlalchemy.engine import URL

from agentkit.adapters.outage import outage_cause
from agentkit.adapters.postgres import AlembicSchemaMigrator, create_engine
from agentkit.application.errors import SchemaMismatch, StoreUnavailable
from agentkit.application.ports.schema_migrator import SchemaStatus
from agentkit.entrypoints.wiring.settings import StateSettings

_log = structlog.get_logger(__name__)

T = TypeVar("T")

_MIGRATE: Final = "run `agentkit migrate`, or set MIGRATE_ON_START=true to migrate at start-up"


async def schema_checked(url: URL, state: StateSettings) -> None:
    """Return once the database at `url` has this release's schema (migrated first, with MIGRATE_ON_START).

    Raises:
        SchemaMismatch: the schema is behind the code (and MIGRATE_ON_START is not set) or ahead of it.
        StoreUnavailable: the database could not be read or migrated; the message says what the server said.
    """
    engine = create_engine(
        url,
        pool_size=1,
        max_overflow=0,
        connect_timeout_s=state.database_connect_timeout_s,
        pool_timeout_s=state.database_pool_timeout_s,
        statement_timeout_s=state.database_statement_timeout_s,
    )
    migrator = AlembicSchemaMigrator(engine)
    try:
        status = await _read(migrator.status(), "cannot read the database schema of", url)
        if status.state == "behind" and state.migrate_on_start:
            await _read(migrator.upgrade(), "cannot migrate the database schema of", url)
            _log.info("schema_migrated", from_revision=status.current, to_revision=status.head)
            return
    finally:
        await engine.dispose()
    if status.state != "current":
        raise SchemaMismatch(mismatch(status))
    _log.debug("schema_current", revision=status.current)


async def _read(call: Coroutine[Any, Any, T], doing: str, url: URL) -> T:
    # the server's own words (a missing database, a refused password) and where: an operator's next step
    try:
        return await call
    except StoreUnavailable as exc:
        shown = url.set(drivername="postgresql").render_as_string(hide_password=True)
        raise StoreUnavailable(f"{doing} {shown}: {outage_cause(exc)}") from exc


def mismatch(status: SchemaStatus) -> str:
    """The one line that tells an operator why a service will not start on this schema, and what to do."""
    if status.current is None:
        return f"the database has no AgentKit schema (this release needs revision {status.head}): {_MIGRATE}"
    if status.state == "behind":
        return f"the database schema is at revision {status.current}, behind this release's {status.head}: {_MIGRATE}"
    return (
        f"the database schema is at revision {status.current}, which this release does not know (its newest is "
        f"{status.head}): a newer AgentKit migrated it; run that release, or first downgrade the schema to "
        f"{status.head} with its migrations"
    )
