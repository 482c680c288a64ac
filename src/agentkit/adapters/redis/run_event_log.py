"""Redis RunEventLog: one stream per run, written in batches behind the loop, read by any process."""

import asyncio
import contextlib
import contextvars
from collections import deque
from typing import Any

import msgspec
import structlog
from redis.asyncio import Redis

from agentkit.adapters.outage import store_outage
from agentkit.application.ports.run_event_log import (
    DeltaEvent,
    EventId,
    LoggedEvent,
    RunEvent,
    RunEventLog,
    StepEvent,
)
from agentkit.domain.ids import RunId

logger = structlog.get_logger(__name__)

_encoder = msgspec.json.Encoder()
_decoder: msgspec.json.Decoder[RunEvent] = msgspec.json.Decoder(RunEvent)
_FIELD = b"e"
_BATCH = 500
# One command per batch, however many events and runs it holds: each event XADDed to its run's
# stream (trimmed to about ARGV[1] entries), the stream's expiry set to ARGV[2] seconds from now.
_APPEND_LUA = """
local max_len, ttl = ARGV[1], ARGV[2]
local ids = {}
for i, key in ipairs(KEYS) do
    ids[i] = redis.call('XADD', key, 'MAXLEN', '~', max_len, '*', 'e', ARGV[i + 2])
    redis.call('EXPIRE', key, ttl)
end
return ids
"""
# Streamed steps whose fragments' entry ids are remembered until the step is logged (then they are
# deleted); past it the oldest are forgotten and their fragments stay until the stream expires.
_MOST_STREAMED = 10_000
_redis = store_outage("Redis")


class RedisRunEventLog(RunEventLog):
    """Each run's events in the stream `{prefix}run-events:{run_id}`, its entry ids the event ids.

    `append` queues the event and returns; one writer task per process sends what is queued, in the
    order appended, one script call per batch (XADD with an approximate MAXLEN, and EXPIRE), so the
    loop never waits for Redis. While a batch is on its way the next one gathers: under load the
    batches grow and the cost per event falls. A batch Redis does not take is dropped, logged once per outage (the
    stored run and trace are the truth; followers fall back on the stored run). A stream expires
    `ttl_s` after its last event.

    Reads that wait (XREAD BLOCK) hold a connection for as long as they wait: they go to `reader`, a
    client of their own whose reply timeout is longer than `max_block_s`, so followers neither wait on
    the service's pool nor time out there.

    Args:
        redis: The service's client (appends and reads that do not wait).
        reader: The client for waiting reads (the same as `redis` when reads never wait long).
        prefix: The key prefix of this deployment (REDIS_KEY_PREFIX).
        max_len: Events a stream keeps, about (the oldest are trimmed).
        ttl_s: Seconds a stream lives after its last event.
        max_block_s: The longest a read waits (shorter than `reader`'s reply timeout).
        max_queued: Events queued for the writer at most; past it appends are dropped (Redis too slow).
    """

    def __init__(
        self,
        redis: Redis,
        *,
        reader: Redis | None = None,
        prefix: str = "agentkit:",
        max_len: int = 10_000,
        ttl_s: int = 3600,
        max_block_s: float = 1.0,
        max_queued: int = 100_000,
    ) -> None:
        self._redis = redis
        self._reader = reader or redis
        self._prefix = f"{prefix}run-events:"
        self._max_len = max_len
        self._ttl_s = ttl_s
        self._max_block_s = max_block_s
        self._max_queued = max_queued
        self._append = redis.register_script(_APPEND_LUA)
        self._queued: deque[tuple[RunId, RunEvent]] = deque()
        self._wake = asyncio.Event()
        self._drained = asyncio.Event()  # set while the writer has nothing queued or in flight
        self._drained.set()
        self._writer: asyncio.Task[None] | None = None
        self._dropped = 0  # events dropped since the last batch Redis took
        # the stream entries of fragments of steps not logged yet, by (run, step): deleted with the step
        self._fragments: dict[tuple[RunId, int], list[Any]] = {}

    def key(self, run_id: RunId) -> str:
        """The run's stream."""
        return self._prefix + run_id

    def append(self, run_id: RunId, event: RunEvent) -> None:
        """Queue the event for the writer."""
        if len(self._queued) >= self._max_queued:
            self._lost(1, "the writer's queue is full")
            return
        if self._writer is None:
            try:
                # a context of its own: the first appender's (a request's log bindings) is not the writer's
                self._writer = asyncio.get_running_loop().create_task(
                    self._write(), name="agentkit-run-event-log", context=contextvars.Context()
                )
            except RuntimeError:  # no event loop: nobody could follow it anyway
                return
        self._queued.append((run_id, event))
        self._drained.clear()
        self._wake.set()

    @_redis
    async def read(
        self, run_id: RunId, *, after: EventId | None, block_s: float, limit: int = 100
    ) -> list[LoggedEvent]:
        """XREAD after `after`, blocking up to `block_s` (at most `max_block_s`)."""
        streams: dict[Any, Any] = {self.key(run_id): after or "0-0"}
        reply: Any
        if block_s <= 0:
            reply = await self._redis.xread(streams, count=limit)
        else:
            block_ms = max(1, round(min(block_s, self._max_block_s) * 1000))
            reply = await self._reader.xread(streams, count=limit, block=block_ms)
        found: list[LoggedEvent] = []
        for _, entries in reply or ():
            for entry_id, fields in entries:
                raw = fields.get(_FIELD)
                if raw is None:
                    continue
                try:
                    event = _decoder.decode(raw)
                except msgspec.DecodeError:
                    logger.warning("run_event_unreadable", run_id=run_id, event_id=entry_id)
                    continue
                text = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
                found.append(LoggedEvent(id=EventId(text), event=event))
        return found

    async def aclose(self, timeout_s: float = 2.0) -> None:
        """Send what is queued (for at most `timeout_s`), then stop the writer."""
        if self._writer is None:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                await self._drained.wait()
        if self._queued:
            self._lost(len(self._queued), "the process stopped")
            self._queued.clear()
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer
        self._writer = None

    async def _write(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queued:
                await self._send(self._take())
            self._drained.set()

    def _take(self) -> list[tuple[RunId, RunEvent]]:
        queued = self._queued
        batch = [queued.popleft() for _ in range(min(len(queued), _BATCH))]
        # a step logged in this batch makes its fragments in this batch moot: they are not sent at all
        logged = {(run_id, event.step.step_no) for run_id, event in batch if type(event) is StepEvent}
        if logged:
            batch = [
                (run_id, event)
                for run_id, event in batch
                if type(event) is not DeltaEvent or (run_id, event.step_no) not in logged
            ]
        return batch

    async def _send(self, batch: list[tuple[RunId, RunEvent]]) -> None:
        if not batch:
            return
        keys = [self._prefix + run_id for run_id, _ in batch]
        args: list[bytes | int] = [self._max_len, self._ttl_s, *(_encoder.encode(event) for _, event in batch)]
        try:
            ids = await self._append(keys=keys, args=args)
        except Exception as exc:
            self._lost(len(batch), str(exc)[:200])
            return
        if self._dropped:
            logger.info("run_events_logged_again", dropped=self._dropped)
            self._dropped = 0
        await self._trim_fragments(batch, ids)

    async def _trim_fragments(self, batch: list[tuple[RunId, RunEvent]], ids: list[Any]) -> None:
        """Remember where fragments went; delete those of each step now logged (the step has them all)."""
        fragments = self._fragments
        done: list[tuple[RunId, list[Any]]] = []
        for (run_id, event), entry_id in zip(batch, ids, strict=False):
            if type(event) is DeltaEvent:
                fragments.setdefault((run_id, event.step_no), []).append(entry_id)
                if len(fragments) > _MOST_STREAMED:
                    del fragments[next(iter(fragments))]
            elif fragments and type(event) is StepEvent:
                written = fragments.pop((run_id, event.step.step_no), None)
                if written:
                    done.append((run_id, written))
        for run_id, entry_ids in done:
            try:
                await self._redis.xdel(self._prefix + run_id, *entry_ids)
            except Exception as exc:  # they expire with the stream; a reader past them meets the step
                logger.info("run_event_fragments_kept", run_id=run_id, error=str(exc)[:200])

    def _lost(self, count: int, why: str) -> None:
        if not self._dropped:  # once per outage; the recovery says how many were lost
            logger.warning("run_events_dropped", reason=why)
        self._dropped += count
