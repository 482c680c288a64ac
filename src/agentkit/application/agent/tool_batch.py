"""ToolBatch: the calls of one model turn, made at once (bounded), their results fed back in the model's order."""

import asyncio
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from agentkit.application.agent.answers import answered_result
from agentkit.domain import run as runs
from agentkit.domain.actions import Decision
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import Message, ToolCall
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.tools import ToolResult

if TYPE_CHECKING:
    from agentkit.application.agent.execution import RunExecution

STOPPED = "stopped: the run was cancelled while this call ran"


class ToolBatch:
    """The calls of one turn of a run, made as a batch.

    Rules:
    - Barriers cut the turn into groups: a call of a `sequential` tool, or of a terminal tool, runs
      alone, once the calls before it have ended, and the calls after it wait for it. The calls of
      a group run at once: at most `tool_concurrency` of the run's (AgentConfig), and at most the
      process's bound over all its runs (the registry's slots). Each has its own time limit.
    - Each call is a step of its own, recorded as it ends (step numbers follow the order the calls
      ended; their start and end times show how they overlapped). The model reads the results in
      the order it asked for the calls.
    - Before a group starts, the non-idempotent calls it is about to make are recorded on the run,
      in one write. A resumed turn makes only the calls without a stored result; if one of those
      may have started and is not idempotent, the run fails naming it.
    - Answered calls (the turn paused until every answer came): an approved call runs once with the
      others, a rejected one is a tool error for that call only, a client tool's output is its result.
    - A cancel that arrives while calls run stops every one of them: async tools are cancelled,
      worker processes killed (a sync tool in a thread runs on, unheard). Each stopped call is a step
      saying so, and the run ends `cancelled`.
    - A terminal tool's successful call ends the run: the calls after it are not made.
    """

    __slots__ = ("_calls", "_execution", "_inside", "_results", "_stopped")

    def __init__(
        self, execution: "RunExecution", calls: Sequence[ToolCall], stored: Mapping[ToolCallId, ToolResult]
    ) -> None:
        self._execution = execution
        self._calls = calls
        self._results: list[ToolResult | None] = [stored.get(call.id) for call in calls]
        self._stopped = False  # the run's cancel arrived while calls ran
        self._inside: set[asyncio.Task[None]] = set()  # the tasks in the middle of a call now

    async def run(self) -> Run | None:
        """Make the calls; the run's end if the batch ended it (a cancel, a side effect not to repeat, an answer)."""
        execution = self._execution
        for group in self._groups():
            if execution.cancel_requested():
                return self._cancelled()
            ended = await self._run_group(group)
            if ended is not None:
                return ended
            if self._stopped:
                return self._cancelled()
        self._feed_back("")
        if execution.run.action is not None:
            execution.run = runs.action_done(execution.run)  # stored with the run's next write
        return None

    def _groups(self) -> Iterator[list[int]]:
        """The calls' indexes, cut at the barriers."""
        tools = self._execution.tools
        group: list[int] = []
        for index, call in enumerate(self._calls):
            if tools.is_barrier(call.name):
                if group:
                    yield group
                    group = []
                yield [index]
            else:
                group.append(index)
        if group:
            yield group

    async def _run_group(self, group: list[int]) -> Run | None:
        execution = self._execution
        calls, results = self._calls, self._results
        action = execution.run.action
        to_make: list[int] = []
        for index in group:
            if results[index] is not None:
                continue  # stored before the run was resumed
            answer = None if action is None else action.answer_of(calls[index].id)
            if answer is not None and answer.decision is not Decision.APPROVE:
                result = results[index] = answered_result(calls[index], answer, execution.tools)
                await execution.recorder.record(execution.tool_step(calls[index], result, execution.deps.clock.now()))
            else:
                to_make.append(index)
        if to_make:
            interrupted = await execution.before_calls([calls[index] for index in to_make])
            if interrupted is not None:
                self._feed_back("skipped: the run could not go on")
                return execution.end(RunStatus.FAILED, interrupted)
            await self._at_once(to_make)
            if execution.run.calling:
                execution.run = runs.mark_calling(execution.run, ())  # stored with the run's next write
        for index in group:
            ended = results[index]
            item = execution.tools.get(calls[index].name)
            if ended is not None and ended.ok and item is not None and item.terminal:
                self._feed_back("skipped: the task already ended", upto=index + 1)
                return await execution.succeed_with(ended)
        return None

    async def _at_once(self, indexes: list[int]) -> None:
        """Make these calls at once, at most `tool_concurrency` at a time; a cancel stops them all."""
        execution = self._execution
        leases, run_id = execution.deps.leases, execution.run.id
        leases.on_cancel(run_id, self._stop)
        try:
            if execution.cancel_requested():  # it came while the calls were being recorded
                self._stopped = True
                return
            pending = iter(indexes)
            async with asyncio.TaskGroup() as group:
                for _ in range(min(len(indexes), execution.deps.config.tool_concurrency)):
                    group.create_task(self._make_calls(pending))
        except BaseExceptionGroup as failed:
            raise failed.exceptions[0] from None  # a bug in the loop: the run ends as any crash does
        finally:
            leases.on_cancel(run_id, None)

    async def _make_calls(self, pending: Iterator[int]) -> None:
        """One lane of the batch: the next call not yet taken, until none is left (or the run is cancelled)."""
        for index in pending:
            if self._stopped:
                return
            await self._make(index)

    async def _make(self, index: int) -> None:
        execution = self._execution
        call = self._calls[index]
        clock = execution.deps.clock
        started_at: datetime = clock.now()
        started = clock.monotonic()
        task = asyncio.current_task()
        assert task is not None  # noqa: S101 - a lane is a task
        self._inside.add(task)
        try:
            result = await execution.tools.execute(call, execution.context)
        except asyncio.CancelledError:
            # stopped by the run's cancel: a step that says so; cancelled from outside (the run's
            # timeout, the process stopping): that cancel goes on
            if not self._stopped or task.uncancel() > 0:
                raise
            result = ToolResult(ok=False, error=STOPPED, latency_ms=(clock.monotonic() - started) * 1000)
        finally:
            self._inside.discard(task)
        self._results[index] = result
        await execution.recorder.record(execution.tool_step(call, result, started_at))

    def _stop(self) -> None:
        """The run's cancel arrived: every call in progress is cancelled, none more starts."""
        self._stopped = True
        for task in self._inside:
            task.cancel()

    def _cancelled(self) -> Run:
        self._feed_back("skipped: the run was cancelled")
        return self._execution.end(RunStatus.CANCELLED, "cancelled on request")

    def _feed_back(self, missing: str, *, upto: int | None = None) -> None:
        """The turn's results as tool messages, in the model's order; `missing` for calls not made (or after `upto`)."""
        messages = self._execution.messages
        for index, call in enumerate(self._calls):
            result = self._results[index] if upto is None or index < upto else None
            content = missing if result is None else result.model_text()
            failed = result is not None and not result.ok
            messages.append(
                Message(role="tool", content=content, tool_call_id=call.id, name=call.name, is_error=failed)
            )


def interrupted_reason(calls: Sequence[ToolCall]) -> str:
    """Why a resumed run fails rather than make again calls that may have run (their tools are not idempotent)."""
    if len(calls) == 1:
        call = calls[0]
        return (
            f"the run was interrupted while the tool {call.name!r} (call {call.id}) ran; it is not "
            "idempotent, so it was not run again (mark it @tool(idempotent=True) if repeating it is safe)"
        )
    named = ", ".join(f"{call.name!r} (call {call.id})" for call in calls)
    return (
        f"the run was interrupted while the tools {named} ran; they are not idempotent, so they were not "
        "run again (mark a tool @tool(idempotent=True) if repeating it is safe)"
    )
