"""FollowRun: a run's events as they happen, from its event log, resumable, ending with its terminal status."""

import asyncio
import math
from collections.abc import AsyncIterator

from agentkit.application.agent.followers import FOLLOW_S
from agentkit.application.backoff import Backoff
from agentkit.application.errors import StoreUnavailable
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_event_log import EventId, LoggedEvent, RunEventLog, StatusEvent
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.access import load_owned
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run, RunStatus

# Events read at once; a longer backlog is read in several batches.
BATCH = 200
START: EventId = EventId("0-0")
# Events reach the log a moment after the run was stored (a writer sends them in batches): before
# the stored run stands in for events the log does not hold, they are waited for this long.
GRACE_S = 1.0


def _ends(entry: LoggedEvent) -> bool:
    return isinstance(entry.event, StatusEvent) and entry.event.run.is_terminal


def _begins(entries: list[LoggedEvent]) -> bool:
    """Whether the log holds the run from its start: its first event is the run accepted (pending)."""
    if not entries:
        return False
    first = entries[0].event
    return isinstance(first, StatusEvent) and first.run.status is RunStatus.PENDING


class RunFollower:
    """One client's view of one run's events: iterate it for events, and None where a keep-alive is due.

    Rules:
    - Events come in the log's order, each with its id; after `after` when given, else from the first.
    - A client that starts where the log does not reach back to the run's acceptance (trimmed,
      expired, or events dropped while Redis was down) gets the stored run first, as a status event
      with the id it started after (`0-0` for none): what it missed is summed up there. An empty log
      of a run that has not ended is given GRACE_S first: its events may be on their way.
    - The last event is the first terminal status. If the stored run ended but its log says nothing of
      it within GRACE_S (the event was dropped, or the log expired), a status event from the stored
      run ends it.
    - Nothing for `idle_s`: None (the caller sends a keep-alive), and the stored run is read again. A
      log that cannot be read is retried with backoff, None meanwhile; the run is never failed for it.
    - The process stopping ends the iteration: the client resumes elsewhere with its last event's id.
    - While it follows a run that has not ended, it says so (`RunEvents.publish_followed`) when it
      starts and every third of FOLLOW_S after: the run's executor, wherever it is, streams its
      model's answers (fragments as `delta` events) for as long as that word is fresh.
    """

    def __init__(
        self,
        *,
        run: Run,
        after: EventId | None,
        backlog: list[LoggedEvent],
        runs: RunRepository,
        log: RunEventLog,
        scheduler: RunScheduler,
        idle_s: float,
        events: RunEvents | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.run = run
        self._events = events
        self._clock = clock
        self._announced = -math.inf
        self._after = after
        self._backlog = backlog
        self._runs = runs
        self._log = log
        self._scheduler = scheduler
        self._idle_s = idle_s
        self._backoff = Backoff(first_s=0.2, cap_s=max(idle_s, 0.2))
        # how long to wait for events that are being written (the writer sends them a moment after)
        self._grace_s = min(idle_s, GRACE_S)

    async def __aiter__(self) -> AsyncIterator[LoggedEvent | None]:
        """The events, and None when nothing came for `idle_s`."""
        position = self._after or START
        batch = self._backlog
        if self._after is None and not _begins(batch):
            if not batch and not self.run.is_terminal:
                batch = await self._read_quietly(position, self._grace_s)  # the first may be on its way
            if not _begins(batch):
                yield LoggedEvent(id=position, event=StatusEvent(run=self.run))
                if self.run.is_terminal:
                    return
        failures = 0
        while True:
            await self._announce()
            for entry in batch:
                yield entry
                position = entry.id
                if _ends(entry):
                    return
            if len(batch) == BATCH:  # more of the backlog
                batch = await self._read_quietly(position, 0)
                continue
            if self.run.is_terminal:  # the stored run ended and the log has not said so
                batch = await self._read_quietly(position, self._grace_s)  # its end may be on its way
                if batch:
                    continue
                yield LoggedEvent(id=position, event=StatusEvent(run=self.run))
                return
            if not self._scheduler.accepting:
                return
            try:
                batch = await self._log.read(self.run.id, after=position, block_s=self._idle_s, limit=BATCH)
            except StoreUnavailable:
                failures += 1
                batch = []
                yield None
                await self._refresh()
                await asyncio.sleep(self._backoff.delay(failures))
                continue
            failures = 0
            if not batch:
                yield None
                await self._refresh()

    async def _announce(self) -> None:
        """Say that the run is followed, if it has not ended and the last word of it is getting old."""
        events, clock = self._events, self._clock
        if events is None or clock is None or self.run.is_terminal:
            return
        now = clock.monotonic()
        if now - self._announced >= FOLLOW_S / 3:
            self._announced = now
            await events.publish_followed(self.run.id)

    async def _refresh(self) -> None:
        """Read the stored run again (it stays as it was while the store is down)."""
        try:
            stored = await self._runs.get(self.run.id)
        except StoreUnavailable:
            return
        if stored is not None:
            self.run = stored

    async def _read_quietly(self, position: EventId, block_s: float) -> list[LoggedEvent]:
        try:
            return await self._log.read(self.run.id, after=position, block_s=block_s, limit=BATCH)
        except StoreUnavailable:
            return []


class FollowRun:
    """Open a run's events for its owner; another owner's run does not exist (RunNotFound).

    Both the run and the first batch of its log are read when the client connects, so an outage of
    either is an error then (StoreUnavailable), before any event is sent; later outages are ridden out.
    """

    def __init__(
        self,
        *,
        runs: RunRepository,
        log: RunEventLog,
        scheduler: RunScheduler,
        idle_s: float = 15.0,
        events: RunEvents | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._runs = runs
        self._log = log
        self._scheduler = scheduler
        self._idle_s = idle_s
        self._events = events
        self._clock = clock

    async def execute(self, run_id: RunId, owner: OwnerId | None, *, after: EventId | None = None) -> RunFollower:
        """The follower of the run, starting after the event `after` (None: from the first).

        Raises:
            RunNotFound: no such run for this owner.
            StoreUnavailable: the run or its log could not be read.
        """
        run = await load_owned(self._runs, run_id, owner)
        backlog = await self._log.read(run.id, after=after, block_s=0, limit=BATCH)
        return RunFollower(
            run=run,
            after=after,
            backlog=backlog,
            runs=self._runs,
            log=self._log,
            scheduler=self._scheduler,
            idle_s=self._idle_s,
            events=self._events,
            clock=self._clock,
        )
