"""RecoverLapsedRuns: hand the runs whose executor died to another one, or end them after too many tries."""

from datetime import timedelta

import msgspec
import structlog

from agentkit.application.ports.clock import Clock
from agentkit.application.ports.run_repository import RunRepository, cursor_of
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.run_tree import RunTree

logger = structlog.get_logger(__name__)

WORKER_LOST = "worker_lost"
UNANSWERED = "unanswered: nobody approved, rejected or answered its pending calls within APPROVAL_TTL_S"


def lapse_grace_s(lease_s: float) -> float:
    """How long past its expiry a lease is left alone: a sixth of it, at most a second.

    Room for the clocks of two machines to differ, and for a renewal sent just in time to land.
    """
    return min(1.0, lease_s / 6)


class RecoveryPass(msgspec.Struct, frozen=True, kw_only=True):
    """What one pass did.

    Attributes:
        expired: Runs ended `expired` (their executors lost MAX_RUN_ATTEMPTS times, or paused runs
            nobody answered in time).
        resumed: Runs handed to an executor to resume (or, pending, to start).
        deferred: Lapsed runs left for the next pass (no room for them now).
    """

    expired: int = 0
    resumed: int = 0
    deferred: int = 0


class RecoverLapsedRuns:
    """Resume or expire the pending or running runs whose lease lapsed.

    Rules:
    - Every accepted run reaches a terminal status, even when the process running it died.
    - A lapsed run taken fewer than `max_attempts` times is resumed by another executor (which goes on
      from its last stored step); one taken `max_attempts` times is ended `expired` (worker_lost).
      Attempts that ended in a pause (`requires_action`) are not counted: their executors were not lost.
    - A paused run whose pending calls were not all answered before its deadline ends `expired`
      (unanswered); a child run's such end answers its parent at once (its children, if its turn
      also called agents, were never started: they start once the client answered).
    - A run whose lease a live executor renewed meanwhile is left alone (the repository's changes are
      atomic: an expiry skips it, a claim fails on its attempt).
    - A lease counts as lapsed only `grace_s` after its expiry (`lapse_grace_s`): another machine's
      clock may run ahead, and a renewal sent in time may land a little late. An expired run's end
      time is the moment it lapsed by that much.
    - A run waiting on its child runs past its check time is rechecked (`RunTree.recheck`): an end
      its child's executor did not pass on (it died between the writes) answers it now.
    - A pass reads the lapsed runs a page at a time by keyset, each once, so thousands are handled
      in one pass; runs there is no room for now are left for the next pass.
    """

    def __init__(
        self,
        *,
        runs: RunRepository,
        scheduler: RunScheduler,
        clock: Clock,
        max_attempts: int,
        page: int = 500,
        grace_s: float = 0.0,
        tree: RunTree | None = None,
    ) -> None:
        self._runs = runs
        self._scheduler = scheduler
        self._clock = clock
        self._max_attempts = max_attempts
        self._page = page
        self._grace = timedelta(seconds=grace_s)
        self._tree = tree

    async def execute(self) -> RecoveryPass:
        """One pass over the runs lapsed now."""
        now = self._clock.now()
        expired = 0
        while True:
            unanswered = await self._runs.expire_unanswered(now, reason=UNANSWERED, limit=self._page)
            for run in unanswered:
                logger.info("run_expired", run_id=run.id, reason="unanswered")
                if self._tree is not None and run.parent_run_id is not None:
                    await self._tree.settle(run, self._scheduler)  # its end answers its parent
            expired += len(unanswered)
            if len(unanswered) < self._page:
                break
        cutoff = now - self._grace  # leases lapsed by the grace, no fewer
        while True:
            ended = await self._runs.expire_lapsed(
                cutoff, reason=WORKER_LOST, limit=self._page, min_attempt=self._max_attempts
            )
            for run in ended:
                logger.warning("run_expired", run_id=run.id, reason=WORKER_LOST, attempts=run.attempt)
                if self._tree is not None and run.parent_run_id is not None:
                    await self._tree.settle(run, self._scheduler)  # its end answers its parent
            expired += len(ended)
            if len(ended) < self._page:
                break
        if self._tree is not None:
            for waiting in await self._runs.stalled_waits(cutoff, limit=self._page):
                await self._tree.recheck(waiting, self._scheduler)
        resumed = deferred = 0
        page = await self._runs.lapsed(cutoff, limit=self._page)
        while page:
            for run in page:
                if deferred or not await self._scheduler.resume(run):
                    deferred += 1
                    continue
                resumed += 1
            if deferred:
                break  # no room: the rest wait for the next pass
            page = await self._runs.lapsed(cutoff, limit=self._page, after=cursor_of(page[-1]))
        if resumed or deferred:
            logger.info("lapsed_runs_recovered", resumed=resumed, deferred=deferred, expired=expired)
        return RecoveryPass(expired=expired, resumed=resumed, deferred=deferred)
