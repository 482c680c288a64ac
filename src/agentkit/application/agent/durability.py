"""The writes a run's outcome depends on (its start, its trace, its final status), retried through an outage.

Each write is retried with backoff while the store is unavailable, up to a deadline, with the run's
lease renewed meanwhile by the lease keeper; StaleAttempt (a newer attempt owns the run) stops at once.
"""

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from datetime import timedelta
from typing import Any, TypeVar

import msgspec
import structlog

from agentkit.application.agent.deps import LoopDeps
from agentkit.application.agent.recorder import StepRecorder
from agentkit.application.backoff import until_stored
from agentkit.application.errors import StaleAttempt, StoreUnavailable
from agentkit.domain import run as runs
from agentkit.domain.ids import ToolCallId
from agentkit.domain.run import Run, RunStatus

logger = structlog.get_logger(__name__)
T = TypeVar("T")

# After the process was told to stop (the task cancelled), one more try to store what the run has, for
# at most this long: shutdown must not wait on a store that is down.
LAST_SAVE_S = 3.0


def retried(deps: LoopDeps, write: Callable[[], Awaitable[T]], what: str, deadline: float) -> Awaitable[T]:
    """`write`, retried through a store outage until `deadline` (`clock.monotonic()`)."""
    pacing = deps.pacing
    return until_stored(
        write, what=what, deadline=deadline, clock=deps.clock, sleep=pacing.sleep, backoff=pacing.backoff
    )


async def store_start(deps: LoopDeps, run: Run) -> Run:
    """Claim the run for this executor under a new attempt and a lease (start it, or resume it).

    Raises:
        StaleAttempt: another executor claimed it first, or it ended meanwhile.
        StoreUnavailable: the store stayed down for `store_retry_s`. The run was not taken: once its
            lease lapses the sweeper hands it to another executor (or ends it after MAX_RUN_ATTEMPTS).
    """
    clock, config = deps.clock, deps.config

    async def write() -> Run:
        now = clock.now()
        taken = await deps.runs.claim(
            run.id, attempt=run.attempt, now=now, until=now + timedelta(seconds=config.lease_s)
        )
        if taken is None:
            raise StaleAttempt(
                f"run {run.id} was taken by another executor, or ended, before attempt {run.attempt + 1}"
            )
        return taken

    try:
        return await retried(deps, write, "run_start", clock.monotonic() + config.store_retry_s)
    except StoreUnavailable:
        logger.error("run_start_abandoned", retried_s=config.store_retry_s)
        raise


async def store_calling(deps: LoopDeps, recorder: StepRecorder, run: Run, calls: tuple[ToolCallId, ...]) -> Run:
    """Store the trace so far, then the run with the non-idempotent calls it is about to make and a fresh
    lease; return the run as stored.

    The trace first: a resumed run must find the results of the calls before these, or it could
    not tell these calls' missing results from theirs. A trace the sink already refused steps of is
    not waited for: that run cannot end `succeeded` whatever happens (its trace has a gap). Nor is
    a trace kept in this process's memory: a run is resumed from it only in this process, whose
    readers deliver the pipeline's queue first, and the queue dies with the process as it does.

    The lease goes with it: the run as the executor holds it carries its claim's, long past on a
    run that went on for more than a lease, and the save would hand it to the sweeper. The save is
    fenced, so it renews the lease only while this attempt holds it.

    Raises:
        StoreUnavailable: not stored within `store_retry_s`; the calls are not made.
        StaleAttempt: another executor owns the run now.
    """
    clock, leases = deps.clock, deps.leases
    if not deps.pipeline.trace.local:  # a trace in this process's memory dies with it as the queue does
        deadline = clock.monotonic() + deps.config.store_retry_s
        await deps.pipeline.deliver()  # the run's steps so far reach the trace (and its refusals are counted)
        if not recorder.gaps:
            await retried(deps, lambda: recorder.flush_durable(deadline), "trace", deadline)
    since, now = clock.monotonic(), clock.now()
    leased = msgspec.structs.replace(run, calling=calls, heartbeat_at=now, expires_at=now + leases.lease)
    try:
        await deps.runs.save(leased)  # the common case: stored at the first try, no retry loop set up
    except StoreUnavailable:
        leased = await retried(
            deps, lambda: _store_leased(deps, run, calls), "run_calling", clock.monotonic() + deps.config.store_retry_s
        )
    leases.stored(leased, since=since)
    return leased


async def _store_leased(deps: LoopDeps, run: Run, calls: tuple[ToolCallId, ...]) -> Run:
    now = deps.clock.now()
    leased = msgspec.structs.replace(run, calling=calls, heartbeat_at=now, expires_at=now + deps.leases.lease)
    await deps.runs.save(leased)
    return leased


async def keep_lease(deps: LoopDeps, run: Run) -> None:
    """Before a call that must not be made twice (a model call): make sure this executor still holds the run.

    Free while the lease keeper knows the lease is held with a margin to spare (a comparison of
    times). Otherwise (the loop stalled, renewals came late or failed) the lease is renewed and the
    run read back, retried through an outage like the writes: an executor whose run another attempt
    took stops here instead of asking the model for a turn the other will ask for too.

    Raises:
        StaleAttempt: another attempt holds the run now, or it ended.
        StoreUnavailable: the store stayed down for `store_retry_s`.
    """
    leases = deps.leases
    if leases.fresh(run):
        return
    clock = deps.clock
    started = clock.monotonic()
    await retried(deps, lambda: leases.confirm(run), "lease", started + deps.config.store_retry_s)
    logger.info("lease_confirmed", attempt=run.attempt, took_ms=round((clock.monotonic() - started) * 1000, 1))


async def hand_back(deps: LoopDeps, recorder: StepRecorder, run: Run) -> None:
    """The process is stopping: store the trace and give the run's lease up, so another executor resumes it.

    Shielded (a second cancel does not cut it off) and bounded by LAST_SAVE_S each: what cannot be
    stored in time is resumed from the last stored step once the lease lapses as it would anyway.
    """
    clock = deps.clock

    async def store() -> None:
        deadline = clock.monotonic() + LAST_SAVE_S
        await recorder.flush_observers()
        await retried(deps, lambda: recorder.flush_durable(deadline), "trace", deadline)
        handed = runs.hand_back(run, now=clock.now())
        await retried(deps, lambda: deps.runs.save(handed), "run_hand_back", clock.monotonic() + LAST_SAVE_S)
        logger.info("run_handed_back", steps=recorder.step_no)

    try:
        async with asyncio.timeout(3 * LAST_SAVE_S):
            await asyncio.shield(_left_to_finish(store()))
    except (StoreUnavailable, TimeoutError) as exc:
        logger.warning("run_hand_back_failed", error=str(exc) or "timed out")
    except StaleAttempt:
        logger.warning("run_lost_lease")


async def persist_final(
    deps: LoopDeps, recorder: StepRecorder, running: Run, final: Run, *, budget_s: float | None = None
) -> Run:
    """Store the trace, then the final status, retrying both through an outage; return the run stored.

    Args:
        deps: The loop's ports.
        recorder: The run's trace.
        running: The run as it was before it ended (what a success without its trace fails from).
        final: The run as it ended.
        budget_s: How long to keep retrying (default `store_retry_s`); the status gets at least
            LAST_SAVE_S of its own after the trace.

    Raises:
        StoreUnavailable: the store stayed unavailable all along. The final status was not written;
            the run stays `running` until its lease lapses and the sweeper ends it `expired` (worker_lost).
        StaleAttempt: a newer attempt (or the sweeper) owns the run now.
    """
    clock = deps.clock
    deadline = clock.monotonic() + (deps.config.store_retry_s if budget_s is None else budget_s)
    final = await _with_stored_trace(deps, recorder, running, final, deadline)
    deadline = max(deadline, clock.monotonic() + LAST_SAVE_S)
    try:
        await retried(deps, lambda: deps.runs.save(final), "run_final", deadline)
    except StoreUnavailable as exc:
        logger.error("run_final_save_abandoned", status=final.status.value, error=str(exc))
        raise
    logger.info(
        "run_paused" if final.status is RunStatus.REQUIRES_ACTION else "run_finished",
        status=final.status.value,
        reason=final.failure_reason,
        steps=recorder.step_no,
        input_tokens=final.input_tokens,
        output_tokens=final.output_tokens,
    )
    return final


async def last_save(deps: LoopDeps, recorder: StepRecorder, running: Run, final: Run) -> None:
    """A short, bounded try to store the run's trace and status when the process is stopping."""
    try:
        # shielded: a second cancel does not cut the write off halfway; bounded: shutdown never
        # waits on a store that is down for longer than this
        async with asyncio.timeout(2 * LAST_SAVE_S):
            await asyncio.shield(_left_to_finish(persist_final(deps, recorder, running, final, budget_s=LAST_SAVE_S)))
    except StoreUnavailable:
        pass  # logged as abandoned; the sweeper ends the run `expired` once its lease lapses
    except TimeoutError:
        logger.error("run_final_save_abandoned", status=final.status.value, error="timed out at shutdown")
    except StaleAttempt:
        logger.warning("run_lost_lease")


def _left_to_finish(write: Coroutine[Any, Any, T]) -> "asyncio.Task[T]":
    """The write as a task whose outcome is consumed even when nobody waits for it any more.

    A shielded write goes on after its caller's bound passed; should it then fail, its error (logged
    where it happens) must not reach the event loop's "exception was never retrieved" handler.
    """
    task: asyncio.Task[T] = asyncio.ensure_future(write)
    task.add_done_callback(_consume)
    return task


def _consume(task: "asyncio.Task[Any]") -> None:
    if not task.cancelled():
        task.exception()


async def _with_stored_trace(deps: LoopDeps, recorder: StepRecorder, running: Run, final: Run, deadline: float) -> Run:
    """Wait until the run's steps are stored; the run as it may end, given what the trace holds."""
    await deps.pipeline.deliver()  # every consumer has the run's steps; the durable trace's refusals are counted
    await recorder.flush_observers()
    missing = f"{recorder.gaps} of its {recorder.step_no} steps could not be recorded" if recorder.gaps else None
    if missing is None:
        try:
            await retried(deps, lambda: recorder.flush_durable(deadline), "trace", deadline)
        except StoreUnavailable as exc:
            missing = f"its steps could not be stored ({exc})"
    if missing is None:
        return final
    logger.error("trace_incomplete", status=final.status.value, reason=missing)
    if final.status is RunStatus.REQUIRES_ACTION:
        # a paused run goes on from its stored steps: with some missing it could not
        return runs.end(running, RunStatus.FAILED, now=deps.clock.now(), reason=f"it could not pause: {missing}")
    if final.status is not RunStatus.SUCCEEDED:
        return final
    # Success means the whole trace is there to audit it; the answer is kept for the caller all the same.
    reason = f"the run finished, but {missing}"
    return runs.end(running, RunStatus.FAILED, now=deps.clock.now(), reason=reason, answer=final.answer)
