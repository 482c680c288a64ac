"""In-memory RunEventLog: each run's events in this process, for state in memory and the library."""

import asyncio
import bisect
import contextlib
from collections import OrderedDict

from agentkit.application.ports.run_event_log import (
    DeltaEvent,
    EventId,
    LoggedEvent,
    RunEvent,
    RunEventLog,
    StepEvent,
    event_key,
)
from agentkit.domain.ids import RunId


class _RunLog:
    __slots__ = ("changed", "entries", "fragments")

    def __init__(self) -> None:
        self.entries: list[tuple[int, LoggedEvent]] = []
        self.changed: asyncio.Event | None = None  # made by the first reader that waits
        self.fragments = False  # whether fragments of a step not yet logged are among the entries


class InMemoryRunEventLog(RunEventLog):
    """Events numbered `0-1`, `0-2`, ... in the order appended; the newest `max_runs` runs' logs are kept.

    Args:
        max_len: Events kept per run (the oldest go first), as the Redis log trims.
        max_runs: Runs whose logs are kept; past it the run whose log was written longest ago is forgotten.
    """

    def __init__(self, *, max_len: int = 10_000, max_runs: int = 1_000) -> None:
        self._max_len = max_len
        self._max_runs = max_runs
        self._logs: OrderedDict[RunId, _RunLog] = OrderedDict()
        self._next = 1

    def append(self, run_id: RunId, event: RunEvent) -> None:
        """Add the event and wake the run's readers; a step's fragments go once the step is logged."""
        log = self._log(run_id)
        self._logs.move_to_end(run_id)
        if type(event) is DeltaEvent:
            log.fragments = True
        elif log.fragments and type(event) is StepEvent:
            step_no = event.step.step_no
            log.entries = [
                entry
                for entry in log.entries
                if type(entry[1].event) is not DeltaEvent or entry[1].event.step_no != step_no
            ]
            log.fragments = any(type(entry[1].event) is DeltaEvent for entry in log.entries)
        log.entries.append((self._next, LoggedEvent(id=EventId(f"0-{self._next}"), event=event)))
        self._next += 1
        if len(log.entries) > self._max_len:
            del log.entries[: len(log.entries) - self._max_len]
        if log.changed is not None:
            log.changed.set()
            log.changed = None

    async def read(
        self, run_id: RunId, *, after: EventId | None, block_s: float, limit: int = 100
    ) -> list[LoggedEvent]:
        """The events after `after`, waiting up to `block_s` for one."""
        position = _sequence(after)
        found = self._after(run_id, position, limit)
        if found or block_s <= 0:
            return found
        log = self._log(run_id)
        if log.changed is None:
            log.changed = asyncio.Event()
        changed = log.changed
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(block_s):
                await changed.wait()
        return self._after(run_id, position, limit)

    def forget(self, run_id: RunId) -> None:
        """Drop the run's log (its repository forgot the run)."""
        self._logs.pop(run_id, None)

    async def aclose(self) -> None:
        """Nothing is held back."""

    def _log(self, run_id: RunId) -> _RunLog:
        log = self._logs.get(run_id)
        if log is None:
            log = self._logs[run_id] = _RunLog()
            while len(self._logs) > self._max_runs:
                self._logs.popitem(last=False)
        return log

    def _after(self, run_id: RunId, position: int, limit: int) -> list[LoggedEvent]:
        log = self._logs.get(run_id)
        if log is None:
            return []
        start = bisect.bisect_right(log.entries, position, key=lambda entry: entry[0])
        return [event for _, event in log.entries[start : start + limit]]


def _sequence(event_id: EventId | None) -> int:
    """Where `event_id` is in this log's numbering; an id this log did not give (Redis's) is past its end."""
    key = None if event_id is None else event_key(event_id)
    if key is None:
        return 0
    return key[1] if key[0] == 0 else 2**63
