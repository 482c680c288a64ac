"""Paused runs in the loop: what waits, what an answer lets run, and that an answer holds for its turn only."""

from datetime import timedelta
from typing import Any

import msgspec

from agentkit.application.runs.answer_run import AnswerRun, RunAnswer
from agentkit.application.runs.waiting import until_ended
from agentkit.application.tools import Tool, tool
from agentkit.domain.actions import Decision
from agentkit.domain.ids import ToolCallId
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import ToolStep
from agentkit.domain.tools import ToolSchema
from tests.unit.application.harness import Harness, answer, call, calls


class Ledger:
    """`transfer` needs an approval; the ledger counts what it sent."""

    def __init__(self) -> None:
        self.sent: list[int] = []

        @tool(requires_approval=True)
        def transfer(amount: int) -> str:
            """Send money.

            Args:
                amount: Euros.
            """
            self.sent.append(amount)
            return f"sent {amount}"

        self.tool: Tool[..., Any] = transfer


async def approve(h: Harness, run: Run) -> Run:
    assert run.action is not None
    [waiting] = run.action.calls
    answer_run = AnswerRun(runs=h.runs, scheduler=h.scheduler, clock=h.clock)
    return await answer_run.execute(
        RunAnswer(
            run_id=run.id, owner=run.owner, call_id=waiting.call_id, decision=Decision.APPROVE, digest=waiting.digest
        )
    )


async def test_a_paused_run_records_no_tool_step_until_it_is_answered() -> None:
    ledger = Ledger()
    h = Harness([calls(call("transfer", amount=5)), answer("sent")], [ledger.tool])

    paused = await h.run("pay 5")

    assert paused.status is RunStatus.REQUIRES_ACTION
    assert [type(step).__name__ for step in await h.steps(paused)] == ["LLMStep"]
    assert paused.action is not None
    assert paused.action.turn_step == 1
    assert paused.expires_at == paused.action.expires_at == h.clock.now() + timedelta(seconds=h.config.approval_ttl_s)
    assert ledger.sent == []


async def test_an_answer_left_on_a_run_whose_turn_is_over_does_not_approve_a_later_call_with_the_same_id() -> None:
    # the provider reuses call ids; the executor stored the approved turn and the next LLM step, then
    # died before it could store the run without the answers
    ledger = Ledger()
    same = call("transfer", "c1", amount=5)
    h = Harness([calls(same), calls(same), answer("done")], [ledger.tool])
    first_pause = await h.run("pay 5, twice")
    running = await approve(h, first_pause)  # the scheduler resumes it: it runs the call, then pauses again
    second_pause = await until_ended(
        running.id, None, wait_s=60, runs=h.runs, events=h.events, scheduler=h.scheduler, clock=h.clock
    )
    assert second_pause.status is RunStatus.REQUIRES_ACTION
    assert ledger.sent == [5]
    stale = msgspec.structs.replace(
        second_pause, status=RunStatus.RUNNING, action=running.action, expires_at=h.clock.now()
    )
    await h.runs.save(stale)

    resumed = await h.loop.run(stale)

    assert resumed.status is RunStatus.REQUIRES_ACTION  # the second call waits for its own approval
    assert resumed.action is not None
    assert resumed.action.turn_step == 3
    assert resumed.action.calls[0].answer is None
    assert ledger.sent == [5]
    tool_steps = [step for step in await h.steps(resumed) if isinstance(step, ToolStep)]
    assert [step.call_id for step in tool_steps] == [ToolCallId("c1")]


async def test_a_client_tools_output_is_cut_to_the_limit_of_any_tools_output() -> None:
    h = Harness([calls(call("pick", "p1")), answer("picked")], [])  # the harness's limit: 200 characters
    paused = await h.run(
        "pick one", client_tools=(ToolSchema(name="pick", description="Pick", parameters={"type": "object"}),)
    )
    assert paused.status is RunStatus.REQUIRES_ACTION
    answer_run = AnswerRun(runs=h.runs, scheduler=h.scheduler, clock=h.clock)

    await answer_run.execute(
        RunAnswer(
            run_id=paused.id, owner=paused.owner, call_id=ToolCallId("p1"), decision=Decision.OUTPUT, output="x" * 500
        )
    )
    done = await until_ended(
        paused.id, None, wait_s=60, runs=h.runs, events=h.events, scheduler=h.scheduler, clock=h.clock
    )

    assert done.status is RunStatus.SUCCEEDED
    [fed_back] = [message for message in h.llm.requests[1][0] if message.role == "tool"]
    assert fed_back.content == "x" * 200 + "\n[output truncated]"
