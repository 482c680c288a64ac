"""Waiting for a run's end: one way, whatever process or worker executes the run."""

import asyncio

from agentkit.application.errors import StoreUnavailable
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.access import load_owned
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run

# Events may be lost (a broker restart): a waiter reads the run again this often all the same.
REREAD_S = 5.0
# The last read, once the wait is over, may take this long at most: the wait's bound holds while the
# store hangs (the run as last read is the answer then).
READ_BOUND_S = 0.5


async def until_ended(
    run_id: RunId,
    owner: OwnerId | None,
    *,
    wait_s: float,
    runs: RunRepository,
    events: RunEvents,
    scheduler: RunScheduler,
    clock: Clock,
    known: Run | None = None,
) -> Run:
    """The run once it is at rest (ended, or paused on its client), or as last read when `wait_s` is over.

    The waiter is opened before the run is read, so an end published in between is not missed; the
    run is read again on word of its end (unless the event carried it), and every REREAD_S, and once
    more when the wait is over, that read bounded by READ_BOUND_S: the wait's bound holds even while
    the store hangs. A read the store cannot answer leaves the run as last read (it was accepted; the
    caller is told where it stands, not an outage). The wait also ends when the process begins to stop.
    Another owner's run is not found (RunNotFound).

    Args:
        run_id: The run.
        owner: Its owner (None: any).
        wait_s: How long to wait at most.
        runs: Where the run is read.
        events: Where word of its end comes from.
        scheduler: Says whether the process is stopping (waits end at once then).
        clock: Paces the wait.
        known: The run as the caller already has it (saves the first read).
    """
    deadline = clock.monotonic() + wait_s
    with events.watch_end(run_id) as waiter:
        run = known if known is not None else await load_owned(runs, run_id, owner)
        while not run.is_at_rest and scheduler.accepting:
            remaining = deadline - clock.monotonic()
            if remaining <= 0:
                break
            await waiter.wait(min(remaining, REREAD_S))
            ended = waiter.run
            if ended is not None and ended.is_at_rest:
                return ended
            bound = READ_BOUND_S if clock.monotonic() >= deadline else None
            run = await _read_again(runs, run_id, owner, run, bound=bound)
    return run


async def _read_again(
    runs: RunRepository, run_id: RunId, owner: OwnerId | None, known: Run, *, bound: float | None
) -> Run:
    """The run as stored now; as `known` when the store cannot say (down, or slower than `bound`).

    The run was read once already: a store that fails now costs the waiter freshness, not an answer.
    """
    try:
        async with asyncio.timeout(bound):
            return await load_owned(runs, run_id, owner)
    except (StoreUnavailable, TimeoutError):
        return known
