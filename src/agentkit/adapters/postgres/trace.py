"""The Postgres TraceSink (and TraceReader): one row in `steps` per LLM or tool call."""

import asyncio

import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.postgres.mapping import is_uuid, row_to_step, step_to_row
from agentkit.adapters.postgres.tables import steps
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.domain.ids import RunId
from agentkit.domain.steps import Step

_log = structlog.get_logger(__name__)
# Built once: SQLAlchemy then reuses its cache key and compiled form on every write.
_INSERT_STEP = steps.insert()


class SqlaTraceSink(TraceSink, TraceReader):
    """Writes each step as one autocommitted INSERT; a write that fails is logged and dropped.

    The trace must never fail or stall a run (the spec's rule), so `record` gives up after
    `write_timeout_s` and swallows every error after logging it. `failed_writes` counts them.

    Args:
        engine: The shared engine; the sink uses it in autocommit mode (no BEGIN/COMMIT round trips).
        write_timeout_s: The longest a step write may take, connecting included.
    """

    def __init__(self, engine: AsyncEngine, *, write_timeout_s: float = 2.0) -> None:
        self._writer = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._reader = engine
        self._timeout_s = write_timeout_s
        self.failed_writes = 0

    async def record(self, step: Step) -> None:
        """Insert the step, or log why it could not be."""
        try:
            async with asyncio.timeout(self._timeout_s), self._writer.connect() as conn:
                await conn.execute(_INSERT_STEP, step_to_row(step))
        except Exception as exc:  # any failure of the trace store is the same to the run: go on
            self.failed_writes += 1
            _log.warning(
                "trace_write_failed",
                run_id=step.run_id,
                step_no=step.step_no,
                error_type=type(exc).__name__,
                error=str(exc)[:300],
            )

    async def steps(self, run_id: RunId) -> list[Step]:
        """The run's steps ordered by step number."""
        if not is_uuid(run_id):
            return []
        query = select(steps).where(steps.c.run_id == run_id).order_by(steps.c.step_no, steps.c.created_at)
        async with self._reader.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [row_to_step(row) for row in rows]
