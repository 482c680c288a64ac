"""The Postgres RunListing: keyset pages over `runs` by (created_at, id), newest first."""

from sqlalchemy import bindparam, select, tuple_
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.outage import store_outage
from agentkit.adapters.postgres.mapping import is_uuid, row_to_run
from agentkit.adapters.postgres.tables import runs
from agentkit.application.errors import CursorNotFound
from agentkit.application.ports.run_listing import RunCursor, RunFilter, RunListing
from agentkit.domain.run import Run

_postgres = store_outage("PostgreSQL")


class SqlaRunListing(RunListing):
    """One indexed statement per page (`ix_runs_owner_created_at_id`); a page never depends on an offset."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine.execution_options(isolation_level="AUTOCOMMIT")

    @_postgres
    async def list_runs(self, where: RunFilter, *, after: RunCursor | None, limit: int) -> list[Run]:
        """At most `limit` runs matching `where`, newest first, older than `after`."""
        query = select(runs)
        if where.owner is not None:
            query = query.where(runs.c.owner == where.owner)
        if where.statuses:
            query = query.where(runs.c.status.in_(sorted(status.value for status in where.statuses)))
        if where.session_id is not None:
            query = query.where(runs.c.session_id == where.session_id)
        if where.parent_run_id is not None:
            if not is_uuid(where.parent_run_id):
                return []  # no run has such an id, so no run has it as its parent
            query = query.where(runs.c.parent_run_id == where.parent_run_id)
        if where.agent is not None:
            query = query.where(runs.c.agent == where.agent)
        if where.created_before is not None:
            query = query.where(runs.c.created_at < where.created_before)
        if where.created_after is not None:
            query = query.where(runs.c.created_at >= where.created_after)
        if after is not None:
            if not is_uuid(after.id):
                raise CursorNotFound("the cursor names no page of this listing; start again without it")
            position = tuple_(
                bindparam("after_created_at", after.created_at, type_=runs.c.created_at.type),
                bindparam("after_id", after.id, type_=runs.c.id.type),
            )
            query = query.where(tuple_(runs.c.created_at, runs.c.id) < position)
        query = query.order_by(runs.c.created_at.desc(), runs.c.id.desc()).limit(limit)
        async with self._engine.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [row_to_run(row) for row in rows]
