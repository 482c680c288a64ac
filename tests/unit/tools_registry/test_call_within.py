"""call_within: a tool's coroutine awaited under its time limit, the timer armed only when the tool waits."""

import asyncio
import contextvars
import time

import pytest

from agentkit.application.tools.within import TimeLimitPassed, call_within

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


async def answers_at_once() -> str:
    return "ok"


async def waits_then_answers(gate: asyncio.Event) -> str:
    await gate.wait()
    await asyncio.sleep(0)  # a bare yield too
    return "after the gate"


async def test_a_tool_that_never_waits_answers_without_a_timer() -> None:
    loop = asyncio.get_running_loop()
    timers_before = len(loop._scheduled)  # type: ignore[attr-defined]

    assert await call_within(answers_at_once(), 1.0) == "ok"

    assert len(loop._scheduled) == timers_before  # type: ignore[attr-defined]


async def test_a_tool_that_waits_goes_on_under_the_limit_and_answers() -> None:
    gate = asyncio.Event()
    call = asyncio.create_task(call_within(waits_then_answers(gate), 60.0))
    await asyncio.sleep(0)
    assert not call.done()

    gate.set()

    assert await call == "after the gate"


async def test_a_tool_past_its_limit_is_cancelled_and_says_so() -> None:
    seen: list[str] = []

    async def hangs() -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "never"

    with pytest.raises(TimeLimitPassed, match=r"within 0\.01 s"):
        await call_within(hangs(), 0.01)
    assert seen == ["cancelled"]


async def test_the_first_step_counts_towards_the_limit() -> None:
    async def busy_then_waits() -> str:
        time.sleep(0.05)  # noqa: ASYNC251 - a tool that holds the loop before its first await
        await asyncio.sleep(10)
        return "never"

    started = time.monotonic()
    with pytest.raises(TimeLimitPassed):
        await call_within(busy_then_waits(), 0.04)
    assert time.monotonic() - started < 5  # cancelled at its first await, not after its 10 s sleep


async def test_the_tools_own_errors_come_out_as_they_would_from_await() -> None:
    async def fails_at_once() -> str:
        raise ValueError("bad input")

    async def fails_after_waiting() -> str:
        await asyncio.sleep(0)
        raise KeyError("gone")

    async def its_own_timeout() -> str:
        async with asyncio.timeout(0.001):
            await asyncio.sleep(10)
        return "never"

    with pytest.raises(ValueError, match="bad input"):
        await call_within(fails_at_once(), 1.0)
    with pytest.raises(KeyError, match="gone"):
        await call_within(fails_after_waiting(), 1.0)
    with pytest.raises(TimeoutError):  # the tool's own limit, not ours: not TimeLimitPassed
        await call_within(its_own_timeout(), 60.0)


async def test_a_cancel_from_outside_reaches_the_tool_and_the_caller() -> None:
    gate, seen = asyncio.Event(), []

    async def waits() -> str:
        try:
            await gate.wait()
        finally:
            seen.append("cleaned up")
        return "never"

    call = asyncio.create_task(call_within(waits(), 60.0))
    await asyncio.sleep(0)
    call.cancel()

    with pytest.raises(asyncio.CancelledError):
        await call
    assert seen == ["cleaned up"]


async def test_the_tool_runs_in_the_callers_task_and_context() -> None:
    WHO.set("the run")
    outer = asyncio.current_task()

    async def where() -> tuple[bool, str, bool]:
        before = asyncio.current_task() is outer
        await asyncio.sleep(0)
        return before, WHO.get(), asyncio.current_task() is outer

    assert await call_within(where(), 1.0) == (True, "the run", True)
