"""The Postgres TraceSink (and TraceReader, PromptReader): one row in `steps` per LLM or tool call,
and each message and tool set an LLM call sent once per run (`run_messages`, `run_tool_sets`)."""

import asyncio
import contextlib
import uuid
from collections.abc import Sequence
from typing import Any, Final

import msgspec
import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from agentkit.adapters.outage import is_outage, store_outage
from agentkit.adapters.postgres.driver import driver_connection
from agentkit.adapters.postgres.mapping import is_uuid, row_to_step
from agentkit.adapters.postgres.tables import run_messages, run_tool_sets, steps
from agentkit.adapters.postgres.trace_sql import WRITE_BATCH, StepValues, batch_arguments, step_values
from agentkit.application.backoff import Backoff, Sleep
from agentkit.application.ports.prompt_reader import PromptReader
from agentkit.application.ports.trace_sink import TraceReader, TraceSink
from agentkit.domain.ids import RunId
from agentkit.domain.messages import Message
from agentkit.domain.steps import RunPrompts, Step, StoredMessage, prompt_order
from agentkit.domain.tools import ToolSchema

_log = structlog.get_logger(__name__)
_postgres = store_outage("PostgreSQL")
_READ_FLUSH_S: Final = 1.0

Row = tuple[Step, StepValues]


class SqlaTraceSink(TraceSink, TraceReader, PromptReader):
    """Writes steps to `steps` in batches; a batch is retried until it is stored.

    `record` queues the step and returns at once; one writer task inserts everything queued in
    one autocommitted statement (`trace_sql`: the steps, and the messages and tool sets they were
    the first to send), through asyncpg directly (see `driver`). An idle sink so writes a step the
    moment it comes, and under load the steps of many runs share a round trip instead of queueing
    for connections. `flush` waits until what was recorded before it is stored: the loop calls it
    before it stores a run's final status, so a run is seen to end only once its trace is complete.

    A batch that fails because the store is unavailable (down, restarting, frozen, too slow:
    `write_timeout_s`) is retried with backoff, in order, until it is written; nothing is dropped
    for an outage. A batch that fails for its content is split in halves until the bad rows are
    alone; only a row the database refuses on its own (its run was deleted) is given up, logged and
    counted in `failed_writes`. Recording never waits for the database, so the trace never stalls a
    run's steps; a run waits for its trace only at its end.

    Args:
        engine: The shared engine; the sink writes in autocommit mode (no BEGIN/COMMIT round trips).
        write_timeout_s: The longest one try of a batch may take, waiting for a connection included;
            a try that takes longer is retried.
        max_batch: The most steps one statement carries.
        backoff: The waits between tries of a batch that failed for an outage.
        sleep: Waits between tries (tests pass a fake).
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        write_timeout_s: float = 5.0,
        max_batch: int = 500,
        backoff: Backoff | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._engine = engine
        self._timeout_s = write_timeout_s
        self._max_batch = max_batch
        self._backoff = backoff or Backoff(first_s=0.05, cap_s=2.0)
        self._sleep = sleep
        self._queue: list[Row] = []
        self._queued = 0  # steps ever queued
        self._settled = 0  # steps written or given up on
        self._wake = asyncio.Event()
        self._progress = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self.failed_writes = 0
        self.retried_writes = 0  # tries of a batch that failed for an outage and were made again

    def backlog(self) -> int:
        """Steps recorded and not yet written (nor given up on)."""
        return self._queued - self._settled

    async def record(self, step: Step) -> None:
        """Queue the step for the writer task."""
        self._queue_step(step)
        self._start()

    async def record_batch(self, steps: Sequence[Step]) -> None:
        """Queue the steps, in order, for the writer task."""
        for step in steps:
            self._queue_step(step)
        self._start()

    def _queue_step(self, step: Step) -> None:
        # the row's id is given here, once: a batch written again after a timeout (the first try may
        # have landed, only its answer lost) adds nothing twice
        self._queue.append((step, step_values(step, str(uuid.uuid4()))))  # the step keeps what it sent until written
        self._queued += 1

    def _start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._write_forever(), name="agentkit-trace-writer")
        self._wake.set()

    async def flush(self) -> None:
        """Wait until every step recorded so far is written (or, for a row the database refuses, given up on).

        While the store is down this waits: the caller bounds it (the loop does, with its retry budget).
        """
        target = self._queued
        if self._settled >= target:
            return
        async with self._progress:
            await self._progress.wait_for(lambda: self._settled >= target)

    def flushed(self) -> bool:
        """Whether every step recorded so far is written (or given up on)."""
        return self._settled >= self._queued

    async def aclose(self, timeout_s: float = 5.0) -> None:
        """Write what is queued, waiting at most `timeout_s`, then stop the writer task.

        Steps still unwritten then (the store is down at shutdown) are lost; they are logged as such.
        """
        try:
            async with asyncio.timeout(timeout_s):
                await self.flush()
        except TimeoutError:
            _log.error("trace_steps_abandoned", steps=self.backlog(), waited_s=timeout_s)
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

    async def _write(self, batch: list[Row]) -> None:
        """Store the batch: retried through an outage, split around a bad row."""
        retry = 0
        while True:
            try:
                async with asyncio.timeout(self._timeout_s), driver_connection(self._engine) as conn:
                    await conn.execute(WRITE_BATCH, *batch_arguments(batch))
                if retry:
                    _log.info("trace_write_recovered", steps=len(batch), retries=retry)
                return
            except Exception as exc:
                if not is_outage(exc):
                    await self._split(batch, exc)
                    return
                retry += 1
                self.retried_writes += 1
                if retry & (retry - 1) == 0:  # the 1st, 2nd, 4th... retry of this batch
                    self._log_failure("trace_write_retrying", batch, exc, retry=retry)
                await self._sleep(self._backoff.delay(retry))

    async def _split(self, batch: list[Row], exc: Exception) -> None:
        # one bad row (its run deleted, say) must not cost the other runs their steps
        if len(batch) == 1:
            self.failed_writes += 1
            self._log_failure("trace_write_failed", batch, exc)
            return
        half = len(batch) // 2
        await self._write(batch[:half])
        await self._write(batch[half:])

    def _log_failure(self, event: str, batch: list[Row], exc: Exception, **extra: Any) -> None:
        first = batch[0][0]
        _log.warning(
            event,
            steps=len(batch),
            run_id=first.run_id,
            step_no=first.step_no,
            error_type=type(exc).__name__,
            error=str(exc)[:300],
            **extra,
        )

    @_postgres
    async def steps(self, run_id: RunId) -> list[Step]:
        """The run's steps ordered by step number (what this process recorded is written first, if it can be)."""
        if not is_uuid(run_id):
            return []
        # A reader in this process sees what it recorded; while the store is down the read below
        # says so (StoreUnavailable) rather than waiting on the writer.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_READ_FLUSH_S):
                await self.flush()
        query = select(steps).where(steps.c.run_id == run_id).order_by(steps.c.step_no, steps.c.created_at)
        async with self._engine.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [row_to_step(row) for row in rows]

    @_postgres
    async def prompts(self, run_id: RunId) -> RunPrompts:
        """The run's messages in order and its tool sets by digest."""
        if not is_uuid(run_id):
            return RunPrompts()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_READ_FLUSH_S):
                await self.flush()
        message_query = select(run_messages).where(run_messages.c.run_id == run_id).order_by(run_messages.c.seq)
        tool_query = select(run_tool_sets).where(run_tool_sets.c.run_id == run_id)
        async with self._engine.connect() as conn:
            message_rows_ = (await conn.execute(message_query)).mappings().all()
            tool_rows = (await conn.execute(tool_query)).mappings().all()
        return RunPrompts(
            messages=tuple(
                StoredMessage(
                    seq=row["seq"], sent_digest=row["digest"], message=msgspec.convert(row["message"], Message)
                )
                for row in sorted(message_rows_, key=lambda row: prompt_order(row["seq"]))
            ),
            tool_sets={row["digest"]: msgspec.convert(row["schemas"], tuple[ToolSchema, ...]) for row in tool_rows},
        )
