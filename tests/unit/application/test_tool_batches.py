"""The calls of one model turn: at once (bounded), barriers, answers, a resume, a cancel, all in the model's order."""

import asyncio
import threading
from collections import Counter
from datetime import datetime
from typing import Any

import pytest

from agentkit.adapters.memory import FixedClock
from agentkit.application.agent import AgentConfig
from agentkit.application.runs.answer_run import AnswerRun, RunAnswer
from agentkit.application.runs.waiting import until_ended
from agentkit.application.tools import Tool, tool
from agentkit.application.tools.slots import CallSlots
from agentkit.domain.actions import Decision
from agentkit.domain.ids import RunId
from agentkit.domain.messages import Message
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import ToolStep
from tests.unit.application.harness import OWNER, Harness, answer, call, calls
from tests.unit.application.store_doubles import eventually

RUN_1 = RunId("run-1")


class TickingClock(FixedClock):
    """A clock that moves a millisecond each time it is read: every instant it gives is later than the last."""

    def now(self) -> datetime:
        self.advance(0.001)
        return super().now()


def tool_messages(messages: list[Message]) -> list[tuple[str | None, str]]:
    """The tool results a model read, as (call id, text), in the order it read them."""
    return [(m.tool_call_id, m.content) for m in messages if m.role == "tool"]


async def tool_steps(h: Harness, run: Run) -> list[ToolStep]:
    return [step for step in await h.steps(run) if isinstance(step, ToolStep)]


async def interrupt(h: Harness, task: "asyncio.Task[Run]") -> Run:
    """Cancel the run's task (the process stopping): it hands the run back; return it as stored."""
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    handed = await h.runs.get(RUN_1)
    assert handed is not None
    return handed


async def test_the_calls_of_a_turn_run_at_once_and_the_model_reads_their_results_in_its_order() -> None:
    everyone_in = asyncio.Event()
    arrived: list[str] = []
    done = {name: asyncio.Event() for name in "abc"}

    @tool(idempotent=True)
    async def meet(who: str, after: str = "") -> str:
        """Wait until all three calls started, then end after `after` (c first, then b, then a)."""
        arrived.append(who)
        if len(arrived) == 3:
            everyone_in.set()
        await everyone_in.wait()  # made one after another, the first call would wait here until its timeout
        if after:
            await done[after].wait()
        done[who].set()
        return f"met {who}"

    script = [
        calls(call("meet", "a", who="a", after="b"), call("meet", "b", who="b", after="c"), call("meet", "c", who="c")),
        answer("done"),
    ]
    h = Harness(script, [meet], clock=TickingClock())

    run = await h.run("meet")

    assert run.status is RunStatus.SUCCEEDED
    assert tool_messages(h.llm.requests[1][0]) == [("a", "met a"), ("b", "met b"), ("c", "met c")]
    steps = await tool_steps(h, run)
    # a step each, numbered in the order the calls ended; their times overlap
    assert [(step.step_no, step.call_id) for step in steps] == [(2, "c"), (3, "b"), (4, "a")]
    starts = [step.started_at for step in steps]
    assert all(start is not None for start in starts)
    assert max(start for start in starts if start is not None) <= min(step.created_at for step in steps)


async def test_sync_tools_of_a_turn_run_at_once_in_threads() -> None:
    barrier = threading.Barrier(3, timeout=20)

    @tool(idempotent=True)
    def gather(who: str) -> str:
        """Wait in a thread until the three calls are all in (one after another, they never would be)."""
        barrier.wait()
        return who

    h = Harness([calls(*(call("gather", who, who=who) for who in "xyz")), answer("done")], [gather], tool_timeout_s=30)

    run = await h.run("gather")

    assert run.status is RunStatus.SUCCEEDED
    assert tool_messages(h.llm.requests[1][0]) == [("x", "x"), ("y", "y"), ("z", "z")]


class Gauge:
    """Counts the calls running at once, and the most there ever were."""

    def __init__(self) -> None:
        self.running = self.peak = self.calls = 0

        @tool(idempotent=True)
        async def busy(n: int) -> int:
            """Stay busy a moment.

            Args:
                n: Which call.
            """
            self.running += 1
            self.calls += 1
            self.peak = max(self.peak, self.running)
            await asyncio.sleep(0.01)
            self.running -= 1
            return n

        self.tool = busy


async def test_no_more_calls_of_a_run_run_at_once_than_tool_concurrency() -> None:
    gauge = Gauge()
    script = [calls(*(call("busy", f"c{n}", n=n) for n in range(5))), answer("done")]
    h = Harness(script, [gauge.tool], config=AgentConfig(tool_concurrency=2))

    run = await h.run("five calls")

    assert run.status is RunStatus.SUCCEEDED
    assert (gauge.calls, gauge.peak) == (5, 2)
    assert tool_messages(h.llm.requests[1][0]) == [(f"c{n}", str(n)) for n in range(5)]


async def test_no_more_calls_of_the_process_run_at_once_than_its_bound() -> None:
    gauge = Gauge()
    script = [calls(*(call("busy", f"c{n}", n=n) for n in range(4))), answer("done")]
    h = Harness(script, [gauge.tool], slots=CallSlots(1))

    run = await h.run("four calls")

    assert run.status is RunStatus.SUCCEEDED
    assert (gauge.calls, gauge.peak) == (4, 1)


async def test_a_sequential_tool_is_a_barrier_among_the_calls_of_its_turn() -> None:
    log: list[str] = []

    async def step_through(name: str) -> str:
        log.append(f"start {name}")
        for _ in range(3):
            await asyncio.sleep(0)
        log.append(f"end {name}")
        return name

    @tool(idempotent=True)
    async def work(who: str) -> str:
        """Work a little."""
        return await step_through(who)

    @tool(idempotent=True, sequential=True)
    async def fence(who: str) -> str:
        """Work alone."""
        return await step_through(who)

    script = [
        calls(
            call("work", "1", who="a1"),
            call("work", "2", who="a2"),
            call("fence", "3", who="s"),
            call("work", "4", who="b1"),
            call("work", "5", who="b2"),
        ),
        answer("done"),
    ]
    h = Harness(script, [work, fence])

    run = await h.run("fenced")

    assert run.status is RunStatus.SUCCEEDED
    at = log.index
    assert at("start a2") < at("end a1")  # the calls before the barrier ran at once
    assert max(at("end a1"), at("end a2")) < at("start s") < at("end s") < min(at("start b1"), at("start b2"))
    assert at("start b2") < at("end b1")  # and so did those after it
    assert [text for _, text in tool_messages(h.llm.requests[1][0])] == ["a1", "a2", "s", "b1", "b2"]


async def test_a_terminal_call_runs_after_the_calls_before_it_and_the_calls_after_it_are_not_made() -> None:
    made: list[str] = []

    @tool(idempotent=True)
    async def note(text: str) -> str:
        """Note something."""
        await asyncio.sleep(0)
        made.append(text)
        return text

    schema = {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}
    script = [
        calls(call("note", "1", text="before"), call("final_result", "2", total=3), call("note", "3", text="after"))
    ]
    h = Harness(script, [note])

    run = await h.run("total?", output_schema=schema)

    assert (run.status, run.output) == (RunStatus.SUCCEEDED, {"total": 3})
    assert made == ["before"]
    assert [step.call_id for step in await tool_steps(h, run)] == ["1", "2"]


async def test_a_batch_with_approvals_runs_each_call_once_and_a_rejection_is_an_error_for_its_call_only() -> None:
    ran: Counter[str] = Counter()

    @tool(requires_approval=True)
    def transfer(amount: int) -> str:
        """Send money (needs a person's approval)."""
        ran[f"transfer {amount}"] += 1
        return f"sent {amount}"

    @tool
    async def note(text: str) -> str:
        """Note something (no approval needed, but it waits for the turn's approvals too)."""
        ran[f"note {text}"] += 1
        return f"noted {text}"

    script = [
        calls(call("transfer", "c1", amount=5), call("note", "c2", text="hi"), call("transfer", "c3", amount=7)),
        answer("done"),
    ]
    h = Harness(script, [transfer, note])
    paused = await h.run("pay")
    assert paused.status is RunStatus.REQUIRES_ACTION
    assert paused.action is not None
    assert [waiting.call_id for waiting in paused.action.calls] == ["c1", "c3"]
    assert ran == Counter()  # none of the turn runs until every answer came

    answering = AnswerRun(runs=h.runs, scheduler=h.scheduler, clock=h.clock)
    by_id = {str(waiting.call_id): waiting for waiting in paused.action.calls}
    await answering.execute(
        RunAnswer(
            run_id=paused.id,
            owner=OWNER,
            call_id=by_id["c1"].call_id,
            decision=Decision.APPROVE,
            digest=by_id["c1"].digest,
        )
    )
    running = await answering.execute(
        RunAnswer(
            run_id=paused.id,
            owner=OWNER,
            call_id=by_id["c3"].call_id,
            decision=Decision.REJECT,
            digest=by_id["c3"].digest,
            reason="too much",
        )
    )
    ended = await until_ended(
        running.id, None, wait_s=60, runs=h.runs, events=h.events, scheduler=h.scheduler, clock=h.clock
    )

    assert ended.status is RunStatus.SUCCEEDED
    assert ran == Counter({"transfer 5": 1, "note hi": 1})
    assert tool_messages(h.llm.requests[-1][0]) == [
        ("c1", "sent 5"),
        ("c2", "noted hi"),
        ("c3", "ERROR: a reviewer rejected this call of 'transfer': too much"),
    ]


class Fetcher:
    """`fetch` (idempotent) counts its calls by key; `slow` hangs on its first call; `charge` is a side effect."""

    def __init__(self) -> None:
        self.ran: Counter[str] = Counter()
        self.hanging = 0

        @tool(idempotent=True)
        async def fetch(key: str) -> str:
            """Read something (safe to repeat)."""
            self.ran[key] += 1
            if key == "slow" and self.ran[key] == 1:
                await self._hang()
            return f"got {key}"

        @tool
        async def charge(amount: int) -> str:
            """Charge an amount (a side effect: never repeated)."""
            self.ran[f"charge {amount}"] += 1
            await self._hang()
            return f"charged {amount}"

        self.tools: list[Tool[..., Any]] = [fetch, charge]

    async def _hang(self) -> None:
        self.hanging += 1
        await asyncio.sleep(3600)


async def test_a_resumed_batch_makes_only_the_calls_without_a_stored_result() -> None:
    fetcher = Fetcher()
    script = [
        calls(call("fetch", "c1", key="a"), call("fetch", "c2", key="slow"), call("fetch", "c3", key="b")),
        answer("done"),
    ]
    h = Harness(script, fetcher.tools)
    task = asyncio.create_task(h.run("fetch three"))
    await eventually(lambda: fetcher.hanging == 1 and fetcher.ran["a"] == fetcher.ran["b"] == 1)

    resumed = await h.loop.run(await interrupt(h, task))

    assert resumed.status is RunStatus.SUCCEEDED
    assert fetcher.ran == Counter({"a": 1, "b": 1, "slow": 2})  # only the call without a result, again
    assert len(h.llm.requests) == 2  # the stored turn was not asked for again
    assert tool_messages(h.llm.requests[1][0]) == [("c1", "got a"), ("c2", "got slow"), ("c3", "got b")]


async def test_a_resumed_batch_whose_side_effects_may_have_run_fails_naming_them() -> None:
    fetcher = Fetcher()
    script = [
        calls(call("fetch", "c1", key="a"), call("charge", "c2", amount=5), call("charge", "c3", amount=7)),
        answer("done"),
    ]
    h = Harness(script, fetcher.tools)
    task = asyncio.create_task(h.run("fetch and charge"))
    await eventually(lambda: fetcher.hanging == 2 and fetcher.ran["a"] == 1)
    handed = await interrupt(h, task)
    assert handed.calling == ("c2", "c3")  # both recorded, in one write, before either started

    resumed = await h.loop.run(handed)

    assert resumed.status is RunStatus.FAILED
    assert resumed.failure_reason == (
        "the run was interrupted while the tools 'charge' (call c2), 'charge' (call c3) ran; they are not "
        "idempotent, so they were not run again (mark a tool @tool(idempotent=True) if repeating it is safe)"
    )
    assert fetcher.ran == Counter({"a": 1, "charge 5": 1, "charge 7": 1})


async def test_the_side_effects_of_a_batch_are_recorded_before_any_of_its_calls_starts() -> None:
    seen: dict[str, tuple[str, ...]] = {}
    h: Harness

    @tool
    async def send(to: str) -> str:
        """Send a message (a side effect)."""
        stored = await h.runs.get(RUN_1)
        assert stored is not None
        seen[to] = stored.calling
        return f"sent to {to}"

    @tool(idempotent=True)
    async def peek() -> str:
        """Read only."""
        return "peeked"

    h = Harness(
        [calls(call("send", "c1", to="ann"), call("peek", "c2"), call("send", "c3", to="bob")), answer("ok")],
        [send, peek],
    )

    run = await h.run("send two")

    assert run.status is RunStatus.SUCCEEDED
    assert seen == {"ann": ("c1", "c3"), "bob": ("c1", "c3")}


async def test_a_cancel_mid_batch_stops_every_call_of_it() -> None:
    stopped: list[str] = []
    started: list[str] = []

    @tool(idempotent=True)
    async def wait(who: str) -> str:
        """Wait for a very long time."""
        started.append(who)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            stopped.append(who)
            raise
        return who

    @tool(idempotent=True)
    async def quick() -> str:
        """Answer at once."""
        return "quick"

    h = Harness(
        [calls(call("quick", "c1"), call("wait", "c2", who="a"), call("wait", "c3", who="b")), answer("no")],
        [wait, quick],
        tool_timeout_s=600,
    )
    task = asyncio.create_task(h.run("wait"))
    await eventually(lambda: len(started) == 2)

    await h.cancel.execute(RUN_1, OWNER)
    run = await task

    assert run.status is RunStatus.CANCELLED
    assert sorted(stopped) == ["a", "b"]
    errors = {step.call_id: step.result.error for step in await tool_steps(h, run)}
    assert errors == {
        "c1": None,
        "c2": "stopped: the run was cancelled while this call ran",
        "c3": "stopped: the run was cancelled while this call ran",
    }
    assert len(h.llm.requests) == 1
