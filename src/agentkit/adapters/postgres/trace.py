"""The Postgres TraceSink (and TraceReader): one row in `steps` per LLM or tool call."""

import asyncio
import contextlib
from typing import Any

import structlog
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
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
    """Writes steps to `steps` in batches; a write that fails is logged and dropped.

    `record` queues the step and returns at once; one writer task inserts everything queued in
    one autocommitted statement. An idle sink so writes a step the moment it comes, and under load
    the steps of many runs share a round trip instead of queueing for connections. `flush` waits
    until what was recorded before it is written: the loop calls it before it stores a run's final
    status, so a finished run's trace is complete.

    The trace must never fail or stall a run (the spec's rule): a batch gives up after
    `write_timeout_s` and every error is logged and swallowed; `failed_writes` counts lost steps.

    Args:
        engine: The shared engine; the sink uses it in autocommit mode (no BEGIN/COMMIT round trips).
        write_timeout_s: The longest one batch may take, connecting included.
        max_batch: The most steps one statement carries.
    """

    def __init__(self, engine: AsyncEngine, *, write_timeout_s: float = 2.0, max_batch: int = 500) -> None:
        self._writer = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._reader = engine
        self._timeout_s = write_timeout_s
        self._max_batch = max_batch
        self._queue: list[tuple[Step, dict[str, Any]]] = []
        self._queued = 0  # steps ever queued
        self._settled = 0  # steps written or given up on
        self._wake = asyncio.Event()
        self._progress = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self.failed_writes = 0

    async def record(self, step: Step) -> None:
        """Queue the step for the writer task."""
        self._queue.append((step, step_to_row(step)))
        self._queued += 1
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._write_forever(), name="agentkit-trace-writer")
        self._wake.set()

    async def flush(self) -> None:
        """Wait until every step recorded so far is written or given up on."""
        target = self._queued
        if self._settled >= target:
            return
        async with self._progress:
            await self._progress.wait_for(lambda: self._settled >= target)

    async def aclose(self) -> None:
        """Write what is queued, then stop the writer task."""
        await self.flush()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _write_forever(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                batch, self._queue = self._queue[: self._max_batch], self._queue[self._max_batch :]
                await self._write(batch)
                self._settled += len(batch)
                async with self._progress:
                    self._progress.notify_all()

    async def _write(self, batch: list[tuple[Step, dict[str, Any]]]) -> None:
        try:
            async with asyncio.timeout(self._timeout_s), self._writer.connect() as conn:
                await conn.execute(_INSERT_STEP, [row for _, row in batch])
        except IntegrityError as exc:
            if len(batch) > 1:
                # one bad row (its run deleted, say) must not cost the other runs their steps
                for item in batch:
                    await self._write([item])
                return
            self._give_up(batch, exc)
        except Exception as exc:  # any other failure of the trace store is the same to the run: go on
            self._give_up(batch, exc)

    def _give_up(self, batch: list[tuple[Step, dict[str, Any]]], exc: Exception) -> None:
        self.failed_writes += len(batch)
        first = batch[0][0]
        _log.warning(
            "trace_write_failed",
            steps=len(batch),
            run_id=first.run_id,
            step_no=first.step_no,
            error_type=type(exc).__name__,
            error=str(exc)[:300],
        )

    async def steps(self, run_id: RunId) -> list[Step]:
        """The run's steps ordered by step number (what this process recorded is written first)."""
        if not is_uuid(run_id):
            return []
        await self.flush()
        query = select(steps).where(steps.c.run_id == run_id).order_by(steps.c.step_no, steps.c.created_at)
        async with self._reader.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [row_to_step(row) for row in rows]
