"""LeaseSweeper: resumes or ends the runs whose executor died, a pass every half lease, beside the scheduler."""

import asyncio
import contextlib

import structlog

from agentkit.application.runs.recover_runs import RecoverLapsedRuns, RecoveryPass

logger = structlog.get_logger(__name__)

# The pause before the next pass while lapsed runs wait for a free place here.
BACKLOG_PAUSE_S = 0.2


class LeaseSweeper:
    """Runs `RecoverLapsedRuns` every `interval_s` while it is started; a failed pass is logged and retried.

    Args:
        recover: The use-case that resumes or expires lapsed runs.
        interval_s: The pause between passes (half the lease: a dead executor's runs are taken over
            within 1.5 leases).
    """

    def __init__(self, recover: RecoverLapsedRuns, *, interval_s: float) -> None:
        self._recover = recover
        self._interval_s = interval_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start sweeping in the background (once)."""
        if self._task is None:
            self._task = asyncio.create_task(self._sweep(), name="agentkit-sweeper")

    async def stop(self) -> None:
        """Stop sweeping."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _pass(self) -> RecoveryPass | None:
        """One pass; None if it failed (logged). The first comes at start: runs handed back resume at once."""
        try:
            return await self._recover.execute()
        except Exception as exc:
            logger.warning("sweep_failed", error=str(exc))
            return None

    async def _sweep(self) -> None:
        while True:
            done = await self._pass()
            # runs left for want of room are taken as places free up, not a whole interval later
            backlog = done is not None and done.deferred > 0
            await asyncio.sleep(min(BACKLOG_PAUSE_S, self._interval_s) if backlog else self._interval_s)
