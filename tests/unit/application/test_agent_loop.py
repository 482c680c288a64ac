"""The agent loop, driven end to end with a scripted LLM and in-memory adapters."""

import asyncio
import time
from collections.abc import Sequence
from datetime import datetime

import msgspec
import pytest

from agentkit.adapters.memory import FailingTraceSink, InMemoryRunRepository, InMemorySessionStore
from agentkit.adapters.memory.loop import memory_loop_deps
from agentkit.application.agent import AgentConfig, AgentLoop
from agentkit.application.agent.config import STRUCTURED_OUTPUT_REMINDER
from agentkit.application.errors import StoreUnavailable
from agentkit.application.runs.create_run import CreateRunInput
from agentkit.application.tools import ToolContext, tool
from agentkit.domain.errors import InvalidGoal
from agentkit.domain.ids import OwnerId, RunId, SessionId
from agentkit.domain.messages import LLMResponse, Message
from agentkit.domain.run import RunStatus
from agentkit.domain.steps import LLMStep, ToolStep
from tests.sample_tools import add, lookup
from tests.unit.application.harness import OWNER, Harness, answer, call, calls


async def test_a_tool_call_then_an_answer_succeeds_and_records_every_step() -> None:
    h = Harness([calls(call("add", a=2, b=3), tokens=100), answer("2 + 3 = 5", tokens=40)], [add])

    run = await h.run("what is 2+3?")

    assert run.status is RunStatus.SUCCEEDED
    assert run.answer == "2 + 3 = 5"
    assert (run.input_tokens, run.output_tokens) == (140, 70)
    assert await h.runs.get(run.id) == run
    steps = await h.steps(run)
    assert [type(s).__name__ for s in steps] == ["LLMStep", "ToolStep", "LLMStep"]
    assert [s.step_no for s in steps] == [1, 2, 3]
    tool_step = steps[1]
    assert isinstance(tool_step, ToolStep)
    assert tool_step.tool_name == "add"
    assert tool_step.arguments == {"a": 2, "b": 3}
    assert tool_step.result.ok
    assert tool_step.result.output == "5.0"
    assert sum(s.usage.total_tokens for s in steps if isinstance(s, LLMStep)) == 210


async def test_tool_output_reaches_the_model_only_as_a_tool_message() -> None:
    h = Harness([calls(call("add", call_id="call-7", a=1, b=1)), answer("2")], [add])

    await h.run("add one and one")

    second_request, tools = h.llm.requests[1]
    assert [m.role for m in second_request] == ["system", "user", "assistant", "tool"]
    system, _, assistant, result = second_request
    assert "untrusted" in system.content
    assert "2.0" not in system.content
    assert assistant.tool_calls[0].id == "call-7"
    assert (result.tool_call_id, result.name, result.content) == ("call-7", "add", "2.0")
    assert [t.name for t in tools] == ["add"]


async def test_a_failing_tool_is_reported_to_the_model_which_recovers() -> None:
    script = [calls(call("lookup", city="Lyon")), calls(call("lookup", call_id="c2", city="Paris")), answer("Sunny")]
    h = Harness(script, [lookup])

    run = await h.run("weather?")

    assert run.status is RunStatus.SUCCEEDED
    first_result = h.llm.requests[1][0][-1]
    assert first_result.content == "ERROR: no weather station in 'Lyon'; try 'Paris'"
    tool_steps = [s for s in await h.steps(run) if isinstance(s, ToolStep)]
    assert [s.result.ok for s in tool_steps] == [False, True]


async def test_invalid_arguments_and_unknown_tools_become_errors_the_model_can_read() -> None:
    script = [calls(call("add", a="two", b=3)), calls(call("subtract", call_id="c2", a=1)), answer("gave up")]
    h = Harness(script, [add])

    run = await h.run("add")

    assert run.status is RunStatus.SUCCEEDED
    errors = [m.content for m in h.llm.requests[2][0] if m.role == "tool"]
    assert errors[0].startswith("ERROR: invalid arguments for 'add'")
    assert "$.a" in errors[0]
    assert errors[1] == "ERROR: unknown tool 'subtract'; the available tools are: add"


async def test_a_model_that_keeps_calling_tools_stops_at_max_steps() -> None:
    script = [calls(call("add", call_id=f"c{i}", a=i, b=1)) for i in range(5)]
    h = Harness(script, [add], max_steps=3)

    run = await h.run("loop forever")

    assert run.status is RunStatus.MAX_STEPS_EXCEEDED
    assert run.failure_reason == "the model still wanted to call tools after 3 steps (max_steps)"
    tool_steps = [s for s in await h.steps(run) if isinstance(s, ToolStep)]
    assert len(tool_steps) == 2  # the third turn's calls are not run
    assert h.llm.remaining == 2


async def test_a_run_may_ask_for_fewer_steps_but_not_more() -> None:
    script = [calls(call("add", call_id=f"c{i}", a=i, b=1)) for i in range(5)]
    h = Harness(script, [add], max_steps=3)

    fewer = await h.run("x", max_steps=1)
    assert fewer.max_steps == 1
    assert fewer.status is RunStatus.MAX_STEPS_EXCEEDED
    more = await h.create.execute(CreateRunInput(owner=OWNER, goal="x", max_steps=50))
    assert more.run.max_steps == 3


async def test_the_same_call_three_times_in_a_row_stops_the_run() -> None:
    script = [calls(call("add", call_id=f"c{i}", a=1, b=1)) for i in range(5)]
    h = Harness(script, [add])

    run = await h.run("repeat")

    assert run.status is RunStatus.FAILED
    assert run.failure_reason == "repeated call: 'add' with the same arguments 3 times in a row"
    assert len([s for s in await h.steps(run) if isinstance(s, ToolStep)]) == 2


async def test_two_calls_alternating_stop_the_run() -> None:
    script = [
        calls(call("add", call_id="c1", a=1, b=1)),
        calls(call("lookup", call_id="c2", city="Paris")),
        calls(call("add", call_id="c3", a=1, b=1)),
        calls(call("lookup", call_id="c4", city="Paris")),
        answer("never"),
    ]
    h = Harness(script, [add, lookup])

    run = await h.run("ping-pong")

    assert run.status is RunStatus.FAILED
    assert run.failure_reason is not None
    assert "alternating" in run.failure_reason


async def test_a_token_budget_stops_a_run_that_spends_too_much() -> None:
    h = Harness(
        [calls(call("add", a=1, b=2), tokens=600), answer("3", tokens=600)],
        [add],
        token_budget=1000,
    )

    run = await h.run("cheap please")

    assert run.status is RunStatus.FAILED
    assert run.failure_reason == "token budget exceeded: 1800 tokens spent, the budget is 1000"


async def test_a_refusal_ends_the_run_as_refused() -> None:
    h = Harness([LLMResponse(refusal="I can't help with that.")])

    run = await h.run("something bad")

    assert run.status is RunStatus.REFUSED
    assert run.failure_reason == "the model refused: I can't help with that."


async def test_a_script_that_runs_out_fails_the_run_with_a_clear_reason() -> None:
    h = Harness([calls(call("add", a=1, b=2))], [add])

    run = await h.run("x")

    assert run.status is RunStatus.FAILED
    assert run.failure_reason == "the LLM call failed: the LLM script ran out after 1 response"
    last = (await h.steps(run))[-1]
    assert isinstance(last, LLMStep)
    assert last.error == "the LLM script ran out after 1 response"


async def test_the_run_timeout_ends_a_slow_run_as_timed_out() -> None:
    @tool
    async def slow() -> str:
        """Take a long time."""
        await asyncio.sleep(10)
        return "done"

    h = Harness([calls(call("slow")), answer("x")], [slow], config=AgentConfig(run_timeout_s=0.05))

    run = await h.run("wait")

    assert run.status is RunStatus.TIMED_OUT
    assert run.failure_reason == "the run took longer than 0.05 s"
    assert (await h.runs.get(run.id)) == run


async def test_a_hanging_tool_times_out_and_the_model_is_told() -> None:
    @tool(timeout=0.05)
    def hang() -> str:
        """Never return in time."""
        time.sleep(0.3)
        return "late"

    h = Harness([calls(call("hang")), answer("the tool hung")], [hang])

    run = await h.run("hang")

    assert run.status is RunStatus.SUCCEEDED
    assert h.llm.requests[1][0][-1].content == "ERROR: tool 'hang' timed out after 0.05 s"


async def test_cancel_is_honoured_at_the_next_step_boundary() -> None:
    h_ref: list[Harness] = []

    @tool
    async def cancel_me(ctx: ToolContext) -> str:
        """Ask for the run to be cancelled while it runs."""
        await h_ref[0].cancel.execute(ctx.run_id, ctx.owner)
        return "asked"

    script = [calls(call("cancel_me"), call("add", call_id="c2", a=1, b=1)), answer("never")]
    h = Harness(script, [cancel_me, add])
    h_ref.append(h)

    run = await h.run("cancel yourself")

    assert run.status is RunStatus.CANCELLED
    assert run.failure_reason == "cancelled on request"
    assert [s.tool_name for s in await h.steps(run) if isinstance(s, ToolStep)] == ["cancel_me"]
    assert h.llm.remaining == 1  # no LLM call after the cancel
    again = await h.cancel.execute(run.id, OWNER)
    assert again.status is RunStatus.CANCELLED  # cancelled never flips back


async def test_a_failing_observer_is_logged_and_the_run_goes_on() -> None:
    observer = FailingTraceSink()
    h = Harness([calls(call("add", a=2, b=2)), answer("4")], [add], observers=[observer])

    run = await h.run("2+2")

    assert run.status is RunStatus.SUCCEEDED
    assert observer.attempts == 3
    assert len(await h.steps(run)) == 3  # the durable trace has every step


async def test_a_run_whose_trace_sink_refuses_its_steps_keeps_its_answer_but_does_not_succeed() -> None:
    sink = FailingTraceSink()
    h = Harness([calls(call("add", a=2, b=2)), answer("4")], [add], trace=sink)

    run = await h.run("2+2")

    # "succeeded" promises a complete trace to audit the run by; the answer still reaches the caller
    assert run.status is RunStatus.FAILED
    assert run.answer == "4"
    assert run.failure_reason == "the run finished, but 3 of its 3 steps could not be recorded"
    assert await h.runs.get(run.id) == run
    assert sink.attempts == 3
    assert len(await h.steps(run)) == 3  # the observer still saw every step


async def test_a_session_continues_across_runs() -> None:
    h = Harness([calls(call("add", a=2, b=3)), answer("5"), answer("You asked about 2 + 3.")], [add])

    first = await h.run("what is 2+3?", session="s1")
    second = await h.run("what did I ask?", session="s1")

    assert (first.status, second.status) == (RunStatus.SUCCEEDED, RunStatus.SUCCEEDED)
    sent = h.llm.requests[2][0]
    assert [m.role for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1].content == "what is 2+3?"
    assert sent[-1].content == "what did I ask?"
    assert sum(m.role == "system" for m in sent) == 1


async def test_typed_output_ends_the_run_through_final_result() -> None:
    schema = {
        "type": "object",
        "properties": {"total": {"type": "number"}, "currency": {"enum": ["EUR", "USD"]}},
        "required": ["total", "currency"],
    }
    script = [
        calls(call("final_result", total="lots")),
        calls(call("final_result", call_id="c2", total=12.5, currency="EUR")),
    ]
    h = Harness(script, [add])

    run = await h.run("how much?", output_schema=schema)

    assert run.status is RunStatus.SUCCEEDED
    assert run.output == {"total": 12.5, "currency": "EUR"}
    assert msgspec.json.decode(run.answer or "") == {"total": 12.5, "currency": "EUR"}
    first_tools = h.llm.requests[0][1]
    assert [t.name for t in first_tools] == ["add", "final_result"]
    assert first_tools[1].parameters["required"] == ["total", "currency"]
    assert "final_result" in h.llm.requests[0][0][0].content
    assert h.llm.requests[1][0][-1].content.startswith("ERROR: invalid arguments for 'final_result'")


async def test_a_typed_output_run_reminds_a_model_that_answers_in_text_then_succeeds() -> None:
    schema = {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}
    h = Harness([answer("The total is 12.5."), calls(call("final_result", total=12.5))])

    run = await h.run("how much?", output_schema=schema)

    assert (run.status, run.output) == (RunStatus.SUCCEEDED, {"total": 12.5})
    second_request = h.llm.requests[1][0]
    assert [m.role for m in second_request[-2:]] == ["assistant", "user"]
    assert second_request[-1].content == STRUCTURED_OUTPUT_REMINDER
    assert [type(step).__name__ for step in await h.steps(run)] == ["LLMStep", "LLMStep", "ToolStep"]


async def test_a_typed_output_run_never_succeeds_without_its_output() -> None:
    schema = {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}
    h = Harness([answer("12.5"), answer("It is 12.5"), answer("Really, 12.5."), answer("unused")])

    run = await h.run("how much?", output_schema=schema)

    assert run.status is RunStatus.FAILED
    assert run.output is None
    assert run.failure_reason == (
        "the model answered in plain text instead of giving the required structured output (reminded 2 times)"
    )
    assert h.llm.remaining == 1  # two reminders, then it stopped asking
    assert await h.runs.get(run.id) == run


async def test_a_cancelled_task_hands_its_run_back_and_a_resume_never_repeats_a_side_effect() -> None:
    started = asyncio.Event()

    @tool
    async def block() -> str:
        """Block until cancelled (a tool with side effects: not idempotent)."""
        started.set()
        await asyncio.sleep(10)
        return "never"

    h = Harness([calls(call("block")), answer("x")], [block])
    task = asyncio.create_task(h.run("block"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    handed = await h.runs.get(RunId("run-1"))
    assert handed is not None
    # handed back: still running, its lease given up so the next executor takes it at once
    assert (handed.status, handed.expires_at, handed.calling) == (RunStatus.RUNNING, h.clock.now(), ("c1",))
    assert [step.step_no for step in await h.steps(handed)] == [1]

    resumed = await h.loop.run(handed)

    assert resumed.status is RunStatus.FAILED
    assert resumed.failure_reason is not None
    assert "interrupted while the tool 'block' (call c1) ran; it is not idempotent" in resumed.failure_reason
    assert len(h.llm.requests) == 1  # the stored response was not asked for again
    assert resumed.attempt == 2


async def test_a_resumed_run_repeats_an_idempotent_call_and_goes_on_from_its_stored_steps() -> None:
    started = asyncio.Event()
    ran: list[int] = []

    @tool(idempotent=True)
    async def double(n: int) -> int:
        """Double a number (reading only: safe to repeat)."""
        ran.append(n)
        if len(ran) == 1:
            started.set()
            await asyncio.sleep(10)
        return n * 2

    h = Harness([calls(call("add", a=1, b=2)), calls(call("double", "c2", n=4)), answer("8")], [add, double])
    task = asyncio.create_task(h.run("look it up"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    handed = await h.runs.get(RunId("run-1"))
    assert handed is not None

    resumed = await h.loop.run(handed)

    assert (resumed.status, resumed.answer) == (RunStatus.SUCCEEDED, "8")
    assert ran == [4, 4]
    assert len(h.llm.requests) == 3  # one per stored response, none twice
    last_messages = h.llm.requests[-1][0]
    assert [m.role for m in last_messages] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert [m.content for m in last_messages if m.role == "tool"] == ["3.0", "8"]
    steps = await h.steps(resumed)
    assert [(s.step_no, type(s).__name__) for s in steps] == [
        (1, "LLMStep"),
        (2, "ToolStep"),
        (3, "LLMStep"),
        (4, "ToolStep"),
        (5, "LLMStep"),
    ]
    assert (resumed.input_tokens, resumed.output_tokens) == (30, 15)  # all three calls, counted once


async def test_an_empty_goal_is_refused_before_anything_runs() -> None:
    h = Harness([answer("x")])
    with pytest.raises(InvalidGoal, match="the goal is empty"):
        await h.run("   ")
    with pytest.raises(InvalidGoal, match="the limit is 1000"):
        await h.run("x" * 1001)
    assert h.llm.requests == []


class CancelWatchingRepository(InMemoryRunRepository):
    """Tells the test when a lease renewal brought a cancel back to the executor."""

    def __init__(self) -> None:
        super().__init__()
        self.cancel_renewed = asyncio.Event()

    async def renew_leases(self, run_ids: Sequence[RunId], *, now: datetime, until: datetime) -> set[RunId]:
        cancelled = await super().renew_leases(run_ids, now=now, until=until)
        if cancelled:
            self.cancel_renewed.set()
        return cancelled


async def test_a_cancel_made_in_another_process_arrives_with_the_lease_renewal() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def slow_step(i: int) -> str:
        """Take a while.

        Args:
            i: A counter.
        """
        started.set()
        await release.wait()
        return "ok"

    script = [calls(call("slow_step", call_id=f"c{i}", i=i)) for i in range(50)]
    runs = CancelWatchingRepository()
    h = Harness(script, [slow_step], config=AgentConfig(lease_s=0.15), runs=runs, max_steps=100)
    task = asyncio.create_task(h.run("keep going"))
    await asyncio.wait_for(started.wait(), 60)

    # another process stores the cancel flag; this process's scheduler is not told
    await h.runs.request_cancel(RunId("run-1"))
    await asyncio.wait_for(runs.cancel_renewed.wait(), 60)
    release.set()
    run = await asyncio.wait_for(task, 60)

    assert run.status is RunStatus.CANCELLED
    assert h.llm.remaining == 49  # it stopped at the first step boundary after the renewal


class UnavailableSessionStore(InMemorySessionStore):
    """A session store whose server is down."""

    async def load(self, owner: OwnerId, session_id: SessionId) -> list[Message]:
        raise StoreUnavailable("Redis is unavailable (ConnectionError)")


async def test_a_session_store_outage_fails_the_run_with_a_clear_reason() -> None:
    h = Harness([answer("never")])
    h.loop = AgentLoop(
        memory_loop_deps(
            h.llm,
            h.registry,
            runs=h.runs,
            trace=h.store,
            sessions=UnavailableSessionStore(h.clock),
            clock=h.clock,
            config=h.config,
        )
    )

    run = await h.run("hello", session="s1")

    assert run.status is RunStatus.FAILED
    assert run.failure_reason == "Redis is unavailable (ConnectionError)"
    assert await h.runs.get(run.id) == run


async def test_a_run_may_bring_its_own_token_budget_but_not_raise_the_configured_one() -> None:
    h = Harness([calls(call("add", a=1, b=2), tokens=600), answer("3", tokens=600)], [add], token_budget=5000)

    run = await h.run("cheap please", token_budget=1000)
    capped = await h.create.execute(CreateRunInput(owner=OWNER, goal="x", token_budget=9000))

    assert run.token_budget == 1000
    assert run.status is RunStatus.FAILED
    assert run.failure_reason == "token budget exceeded: 1800 tokens spent, the budget is 1000"
    assert capped.run.token_budget == 5000
