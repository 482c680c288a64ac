"""SubmitRun: accept a run, start it in the background, and wait a while for it to end."""

import msgspec

from agentkit.application.errors import RateLimited, ShuttingDown
from agentkit.application.ports.rate_limiter import RateLimiter
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.create_run import CreateRun, CreateRunInput
from agentkit.domain.run import Run


class SubmitRunResult(msgspec.Struct, frozen=True, kw_only=True):
    """The run as it stands when the wait ended.

    Attributes:
        run: The run (terminal if it finished within the wait).
        replayed: The request repeated an earlier one with the same idempotency key.
    """

    run: Run
    replayed: bool = False


class SubmitRun:
    """Store a run (committed before anyone hears of it), start it, and wait up to `wait_s`.

    Rules:
    - Each owner may create `limit_per_min` runs a minute (sliding window); past it, RateLimited.
    - A replayed request (same idempotency key and body) starts nothing: no second LLM call.
    - The wait never cancels the run; a run still going after the wait keeps running.
    - A process that is shutting down takes no new runs (ShuttingDown), and ends its waits at once.
    """

    def __init__(
        self,
        *,
        create: CreateRun,
        scheduler: RunScheduler,
        runs: RunRepository,
        limiter: RateLimiter,
        limit_per_min: int,
    ) -> None:
        self._create = create
        self._scheduler = scheduler
        self._runs = runs
        self._limiter = limiter
        self._limit_per_min = limit_per_min

    async def execute(self, inp: CreateRunInput, *, wait_s: float) -> SubmitRunResult:
        """Accept the run; return it finished, or as it stands after `wait_s` seconds."""
        if not self._scheduler.accepting:
            raise ShuttingDown("the server is shutting down; retry the request")
        decision = await self._limiter.hit(f"runs:{inp.owner}", limit=self._limit_per_min, window_s=60.0)
        if not decision.allowed:
            raise RateLimited(decision.retry_after_s)
        created = await self._create.execute(inp)
        run = created.run
        if not created.replayed:
            self._scheduler.submit(run)
        if created.replayed or (wait_s > 0 and not run.is_terminal):
            waited = await self._scheduler.wait(run.id, wait_s) if wait_s > 0 else None
            if waited is not None and waited.run is not None:
                return SubmitRunResult(run=waited.run, replayed=created.replayed)
            latest = await self._runs.get(run.id)  # still going, or going elsewhere: how it stands now
            run = latest or run
        return SubmitRunResult(run=run, replayed=created.replayed)
