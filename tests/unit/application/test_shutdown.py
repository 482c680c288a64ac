"""Shutdown: waits end at once with the run as it stands, new runs are refused, runs get their grace."""

import asyncio
from typing import Any

import pytest

from agentkit.adapters.memory import InMemoryRateLimiter
from agentkit.adapters.scheduling import InlineRunScheduler, Recovery
from agentkit.application.errors import ShuttingDown
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.runs.submit_run import SubmitRun
from agentkit.application.runs.wait_for_run import WaitForRun
from agentkit.application.tools import Tool, tool
from agentkit.domain.run import RunStatus
from tests.unit.application.harness import OWNER, Harness, answer, call, calls


class Gate:
    """Holds a tool call until the test opens it."""

    def __init__(self, *, idempotent: bool = False) -> None:
        self.entered = asyncio.Event()
        self.opened = asyncio.Event()
        self.idempotent = idempotent

    def tool(self) -> Tool[..., Any]:
        @tool(idempotent=self.idempotent)
        async def wait_for_gate() -> str:
            """Wait until the test opens the gate."""
            self.entered.set()
            await self.opened.wait()
            return "through"

        return wait_for_gate


def gated(gate: Gate) -> Harness:
    return Harness([calls(call("wait_for_gate")), answer("done")], [gate.tool()])


def submitter(h: Harness) -> SubmitRun:
    limiter = InMemoryRateLimiter(h.clock)
    return SubmitRun(
        create=h.create,
        scheduler=h.scheduler,
        admission=h.scheduler,
        runs=h.runs,
        events=h.events,
        clock=h.clock,
        limiter=limiter,
        limit_per_min=100,
    )


async def test_a_sync_submit_answers_at_once_with_the_running_run_when_shutdown_begins() -> None:
    gate = Gate()
    h = gated(gate)
    waiting = asyncio.create_task(submitter(h).execute(CreateRunInput(owner=OWNER, goal="x"), wait_s=3600))
    await asyncio.wait_for(gate.entered.wait(), 30)

    h.scheduler.begin_shutdown(grace_s=3600)
    result = await asyncio.wait_for(waiting, 30)

    assert result.run.status is RunStatus.RUNNING
    gate.opened.set()
    await h.scheduler.shutdown(grace_s=3600)


async def test_a_long_poll_answers_at_once_when_shutdown_begins() -> None:
    gate = Gate()
    h = gated(gate)
    accepted = await submitter(h).execute(CreateRunInput(owner=OWNER, goal="x"), wait_s=0)
    await asyncio.wait_for(gate.entered.wait(), 30)
    poll = asyncio.create_task(
        WaitForRun(runs=h.runs, events=h.events, scheduler=h.scheduler, clock=h.clock).execute(
            accepted.run.id, OWNER, wait_s=3600
        )
    )
    await asyncio.sleep(0)

    h.scheduler.begin_shutdown(grace_s=3600)
    run = await asyncio.wait_for(poll, 30)

    assert run.status is RunStatus.RUNNING
    gate.opened.set()
    await h.scheduler.shutdown(grace_s=3600)


async def test_no_run_is_taken_once_shutdown_began() -> None:
    h = Harness([answer("never")])
    h.scheduler.begin_shutdown(grace_s=1)

    with pytest.raises(ShuttingDown, match="shutting down"):
        await submitter(h).execute(CreateRunInput(owner=OWNER, goal="x"), wait_s=0)
    assert h.llm.requests == []
    assert await h.runs.lapsed(h.clock.now().replace(year=2100)) == []  # nothing was stored


async def test_a_run_that_ends_within_its_grace_succeeds() -> None:
    gate = Gate()
    h = gated(gate)
    accepted = await submitter(h).execute(CreateRunInput(owner=OWNER, goal="x"), wait_s=0)
    await asyncio.wait_for(gate.entered.wait(), 30)

    h.scheduler.begin_shutdown(grace_s=3600)
    gate.opened.set()
    await h.scheduler.shutdown(grace_s=3600)

    stored = await h.runs.get(accepted.run.id)
    assert stored is not None
    assert (stored.status, stored.answer) == (RunStatus.SUCCEEDED, "done")


async def test_a_run_still_going_after_its_grace_is_handed_back_and_resumed_after_a_restart() -> None:
    gate = Gate(idempotent=True)
    h = gated(gate)
    accepted = await submitter(h).execute(CreateRunInput(owner=OWNER, goal="x"), wait_s=0)
    await asyncio.wait_for(gate.entered.wait(), 30)

    await h.scheduler.shutdown(grace_s=0)

    handed = await h.runs.get(accepted.run.id)
    assert handed is not None
    assert (handed.status, handed.expires_at) == (RunStatus.RUNNING, h.clock.now())
    # the service starts again: its sweeper finds the run at once and resumes it
    gate.opened.set()
    restarted = InlineRunScheduler(
        h.loop, events=h.events, recovery=Recovery(runs=h.runs, clock=h.clock, max_attempts=3, interval_s=3600)
    )
    h.clock.advance(1)
    await restarted.start()
    run = await WaitForRun(runs=h.runs, events=h.events, scheduler=restarted, clock=h.clock).execute(
        accepted.run.id, OWNER, wait_s=30
    )
    await restarted.shutdown(grace_s=30)

    assert (run.status, run.answer, run.attempt) == (RunStatus.SUCCEEDED, "done", 2)
    assert len(h.llm.requests) == 2
