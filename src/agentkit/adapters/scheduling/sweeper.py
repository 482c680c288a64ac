"""LeaseSweeper: ends the runs whose executor died, a pass every half lease, beside the scheduler."""

import asyncio
import contextlib

import structlog

from agentkit.application.runs.expire_runs import ExpireLapsedRuns

logger = structlog.get_logger(__name__)


class LeaseSweeper:
    """Runs `ExpireLapsedRuns` every `interval_s` while it is started; a failed pass is logged and retried.

    Args:
        expire: The use-case that ends lapsed runs.
        interval_s: The pause between passes (half the lease: a dead executor's runs end within 1.5 leases).
    """

    def __init__(self, expire: ExpireLapsedRuns, *, interval_s: float) -> None:
        self._expire = expire
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

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            try:
                await self._expire.execute()
            except Exception as exc:
                logger.warning("sweep_failed", error=str(exc))
