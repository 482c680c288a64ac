"""Waiting for a run's end: one way, whatever process or worker executes the run."""

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.access import load_owned
from agentkit.domain.ids import OwnerId, RunId
from agentkit.domain.run import Run

# Events may be lost (a broker restart): a waiter reads the run again this often all the same.
REREAD_S = 5.0


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
    """The run once it ended, or as it stands when `wait_s` is over (or the process begins to stop).

    The waiter is opened before the run is read, so an end published in between is not missed; the
    run is read again on word of its end (unless the event carried it), and every REREAD_S.
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
        while not run.is_terminal and scheduler.accepting:
            remaining = deadline - clock.monotonic()
            if remaining <= 0:
                break
            await waiter.wait(min(remaining, REREAD_S))
            ended = waiter.run
            if ended is not None and ended.is_terminal:
                return ended
            run = await load_owned(runs, run_id, owner)
    return run
