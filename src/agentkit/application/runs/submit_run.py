"""SubmitRun: accept a run, start it in the background, and wait a while for it to end."""

import contextlib
from collections.abc import AsyncIterator

import msgspec
import structlog

from agentkit.application.errors import ApplicationError, Overloaded, RateLimited, ShuttingDown
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.rate_limiter import RateLimiter
from agentkit.application.ports.run_admission import RunAdmission
from agentkit.application.ports.run_events import RunEvents
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.run_scheduler import RunScheduler
from agentkit.application.runs.create_run import CreateRun, CreateRunInput, HandOver, ValidRunRequest
from agentkit.application.runs.waiting import until_ended
from agentkit.domain.run import Run

# What a refused client is told to wait: about as long as a run takes here at the cap, so a retry
# finds places freed by the runs that were in flight when it was refused.
OVERLOADED_RETRY_AFTER_S = 1.0
RATE_WINDOW_S = 60.0
logger = structlog.get_logger(__name__)


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

    Rules, in the order they apply (the cheap refusals first, and nothing counted that is not accepted):
    - An invalid request is refused (InvalidGoal, InvalidCallbackURL) before anything is read, counted or stored.
    - A replayed request (same idempotency key and body) returns the earlier run: it starts nothing,
      needs no place and spends none of the owner's quota (no second LLM call either).
    - A new run needs a place among the runs in flight in this process; with none free it is refused
      at once (Overloaded, before it is stored), so overload costs a refusal, not everyone's latency.
    - Each owner may create `limit_per_min` runs a minute (sliding window); past it, RateLimited. The
      quota is counted before the run is stored (check and count are one atomic step, so concurrent
      requests cannot overshoot) and refunded if storing fails: only accepted runs count.
    - The wait never cancels the run; a run still going after the wait keeps running.
    - A process that is shutting down takes no new runs (ShuttingDown), and ends its waits at once.
    """

    def __init__(
        self,
        *,
        create: CreateRun,
        scheduler: RunScheduler,
        admission: RunAdmission,
        runs: RunRepository,
        events: RunEvents,
        clock: Clock,
        limiter: RateLimiter,
        limit_per_min: int,
    ) -> None:
        self._create = create
        self._scheduler = scheduler
        self._admission = admission
        self._runs = runs
        self._events = events
        self._clock = clock
        self._limiter = limiter
        self._limit_per_min = limit_per_min

    async def execute(self, inp: CreateRunInput, *, wait_s: float) -> SubmitRunResult:
        """Accept the run; return it finished, or as it stands after `wait_s` seconds."""
        created = await self._create.execute(inp, admission=self._admitted)
        return await self._settle(created.run, wait_s, replayed=created.replayed)

    @contextlib.asynccontextmanager
    async def _admitted(self, valid: ValidRunRequest) -> AsyncIterator[HandOver]:
        """A place among the runs in flight and the owner's quota, taken for a valid, new request.

        The place is held until the run's executor has it (the hand-over); the quota is given back
        if the run was not stored after all (an outage, a concurrent request with the same key, a
        cancel); if that fails too, the request stays counted until the window slides.
        """
        if not self._scheduler.accepting:
            raise ShuttingDown("the server is shutting down; retry the request")
        if not self._admission.try_reserve():
            raise Overloaded(OVERLOADED_RETRY_AFTER_S)
        try:
            key = f"runs:{valid.request.owner}"
            decision = await self._limiter.hit(key, limit=self._limit_per_min, window_s=RATE_WINDOW_S)
            if not decision.allowed:
                raise RateLimited(decision.retry_after_s)
            try:
                yield self._submit  # from there the run's executor holds its place until the run ends
            except BaseException:
                if decision.receipt is not None:
                    with contextlib.suppress(ApplicationError):
                        await self._limiter.refund(key, decision.receipt)
                raise
        finally:
            self._admission.release()

    async def _submit(self, run: Run) -> None:
        try:
            await self._scheduler.submit(run)
        except ApplicationError:
            # stored but not handed over (the queue is down): the sweeper hands it over once its
            # lease lapses, so the run is accepted all the same
            logger.warning("run_submit_deferred", run_id=run.id, exc_info=True)

    async def _settle(self, run: Run, wait_s: float, *, replayed: bool) -> SubmitRunResult:
        if replayed or (wait_s > 0 and not run.is_at_rest):
            run = await until_ended(
                run.id,
                run.owner,
                wait_s=wait_s,
                runs=self._runs,
                events=self._events,
                scheduler=self._scheduler,
                clock=self._clock,
                known=None if replayed else run,
            )
        return SubmitRunResult(run=run, replayed=replayed)
