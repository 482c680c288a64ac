"""The agent loop: ask the model, run the tools it asks for, feed the results back, repeat."""

import asyncio
from collections.abc import Coroutine, Sequence
from datetime import datetime, timedelta
from typing import Any

import structlog

from agentkit.application.agent.config import STRUCTURED_OUTPUT_PROMPT, STRUCTURED_OUTPUT_REMINDER, AgentConfig
from agentkit.application.agent.lease import LeaseKeeper
from agentkit.application.errors import LLMError, StaleAttempt, StoreUnavailable
from agentkit.application.ports.clock import Clock
from agentkit.application.ports.llm_client import LLMClient
from agentkit.application.ports.run_repository import RunRepository
from agentkit.application.ports.session_store import SessionStore
from agentkit.application.ports.trace_sink import TraceSink
from agentkit.application.tools.context import ToolContext
from agentkit.application.tools.final_result import final_result_tool
from agentkit.application.tools.registry import ToolRegistry
from agentkit.domain import run as runs
from agentkit.domain.ids import RunId
from agentkit.domain.messages import LLMResponse, Message, ToolCall
from agentkit.domain.policy import CallTools, Finish, LoopLimits, LoopState, Remind, Stop, decide
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, Step, ToolStep
from agentkit.domain.tools import ToolSchema

logger = structlog.get_logger(__name__)


class AgentLoop:
    """Runs one agent run from `pending` to a terminal status.

    Rules:
    - The conversation is the system prompt, the session's history, then the goal; tool output
      goes only into tool-role messages, never into the system prompt.
    - Tool calls of one turn run one after another, in the order the model gave them.
    - Every LLM call and every tool call is recorded as a step; a failing trace sink is logged
      and the run goes on.
    - Limits: max steps, repeated calls and token budget (the pure policy), the run timeout, each
      tool's timeout (the registry), and cancel, honoured at every step boundary.
    - The final status is always persisted, whatever happens, also when the task is cancelled.
    """

    def __init__(
        self,
        *,
        llm: LLMClient,
        tools: ToolRegistry,
        runs: RunRepository,
        trace: TraceSink,
        sessions: SessionStore,
        clock: Clock,
        config: AgentConfig,
        observers: Sequence[TraceSink] = (),
    ) -> None:
        self._llm = llm
        self._tools = tools
        self._runs = runs
        self._sinks = (trace, *observers)
        self._sessions = sessions
        self._clock = clock
        self._config = config
        self._leases = LeaseKeeper(runs=runs, clock=clock, lease_s=config.lease_s)

    def request_cancel(self, run_id: RunId) -> None:
        """Tell a run executing here to cancel at its next step boundary."""
        self._leases.mark_cancelled(run_id)

    def run(self, run: Run) -> Coroutine[Any, Any, Run]:
        """Execute a pending run and return it in its terminal status (also persisted).

        A plain function returning the coroutine: one frame less for every run in flight.
        """
        return _Execution(self, run).go()


class _Execution:
    """The state of one run while it executes (slotted: a thousand runs in flight hold a thousand)."""

    __slots__ = (
        "context",
        "history",
        "limits",
        "loop",
        "messages",
        "run",
        "schemas",
        "step_no",
        "system_prompt",
        "tools",
    )

    def __init__(self, loop: AgentLoop, run: Run) -> None:
        self.loop = loop
        self.run = run
        self.step_no = 0
        self.tools = loop._tools
        self.system_prompt = loop._config.system_prompt
        if run.output_schema is not None:
            self.tools = self.tools.with_tools([final_result_tool(run.output_schema)])
            self.system_prompt = f"{self.system_prompt}\n{STRUCTURED_OUTPUT_PROMPT}"
        self.schemas: Sequence[ToolSchema] = self.tools.schemas()
        self.context = ToolContext(run_id=run.id, owner=run.owner, session_id=run.session_id)
        self.limits = LoopLimits(
            max_steps=run.max_steps,
            repeat_limit=loop._config.repeat_limit,
            token_budget=run.token_budget,  # set when the run was created (CreateRun caps it)
            output_required=run.output_schema is not None,
        )
        self.history: list[Message] = []
        self.messages: list[Message] = []

    async def go(self) -> Run:
        clock, config = self.loop._clock, self.loop._config
        # every log line of the run, adapters' included, carries its run_id
        log_context = structlog.contextvars.bind_contextvars(run_id=self.run.id)
        leases = self.loop._leases
        try:
            self.run = runs.start(self.run, now=clock.now(), lease_until=self._lease_until())
            await self.loop._runs.save(self.run)
            leases.hold(self.run.id)
            logger.info("run_started", goal_chars=len(self.run.goal), max_steps=self.run.max_steps)
            async with asyncio.timeout(config.run_timeout_s):
                final = await self._loop()
        except TimeoutError:
            final = self._end(RunStatus.TIMED_OUT, f"the run took longer than {config.run_timeout_s:g} s")
        except LLMError as exc:
            final = self._end(RunStatus.FAILED, f"the LLM call failed: {exc}")
        except asyncio.CancelledError:
            final = self._end(RunStatus.FAILED, "interrupted: the process running it stopped")
            await asyncio.shield(self._persist_final(final))
            leases.release(self.run.id)
            structlog.contextvars.reset_contextvars(**log_context)
            raise
        except StaleAttempt:
            logger.warning("run_lost_lease")
            leases.release(self.run.id)
            structlog.contextvars.reset_contextvars(**log_context)
            raise
        except StoreUnavailable as exc:
            final = self._end(RunStatus.FAILED, str(exc))
        except Exception as exc:
            logger.exception("run_crashed")
            final = self._end(RunStatus.FAILED, f"internal error: {type(exc).__name__}")
        try:
            await self._persist_final(final)
        finally:
            leases.release(self.run.id)
            structlog.contextvars.reset_contextvars(**log_context)
        return final

    async def _loop(self) -> Run:
        run = self.run
        if run.session_id is not None:
            self.history = await self.loop._sessions.load(run.owner, run.session_id)
        self.messages = [
            Message(role="system", content=self.system_prompt),
            *self.history,
            Message(role="user", content=run.goal),
        ]
        state = LoopState()
        while True:
            if await self._cancel_requested():
                return self._end(RunStatus.CANCELLED, "cancelled on request")
            response = await self._ask_model()
            decision, state = decide(state, response, self.limits)
            self.messages.append(response.to_message())
            if isinstance(decision, Finish):
                await self._remember_session()
                return runs.succeed(self.run, now=self.loop._clock.now(), answer=decision.answer)
            if isinstance(decision, Stop):
                return self._end(decision.status, decision.reason)
            if isinstance(decision, Remind):
                logger.info("structured_output_reminder", reminder_no=decision.reminder_no)
                self.messages.append(Message(role="user", content=STRUCTURED_OUTPUT_REMINDER))
                continue
            assert isinstance(decision, CallTools)  # noqa: S101 - the Decision union has three members
            finished = await self._call_tools(decision.calls)
            if finished is not None:
                return finished

    async def _ask_model(self) -> LLMResponse:
        clock = self.loop._clock
        started = clock.monotonic()
        failure: LLMError | None = None
        try:
            response = await self.loop._llm.chat(self.messages, self.schemas)
        except LLMError as exc:
            # the failed call is a step too: the trace shows what it cost and why it failed
            failure, response = exc, LLMResponse(attempts=exc.attempts)
        self.run = runs.add_usage(self.run, response.usage)
        await self._record(
            LLMStep(
                run_id=self.run.id,
                step_no=self._next_step(),
                created_at=clock.now(),
                latency_ms=(clock.monotonic() - started) * 1000,
                usage=response.usage,
                text=response.text,
                tool_calls=response.tool_calls,
                finish_reason=None if failure else response.finish_reason,
                attempts=response.attempts,
                error=None if failure is None else str(failure),
            )
        )
        if failure is not None:
            raise failure
        return response

    async def _call_tools(self, calls: Sequence[ToolCall]) -> Run | None:
        for index, call in enumerate(calls):
            if index and await self._cancel_requested():
                # the model's turn must stay whole for the provider: answer the skipped calls
                self._skip(calls[index:], "skipped: the run was cancelled")
                return self._end(RunStatus.CANCELLED, "cancelled on request")
            result = await self.tools.execute(call, self.context)
            await self._record(
                ToolStep(
                    run_id=self.run.id,
                    step_no=self._next_step(),
                    created_at=self.loop._clock.now(),
                    latency_ms=result.latency_ms,
                    call_id=call.id,
                    tool_name=call.name,
                    arguments=call.arguments,
                    result=result,
                )
            )
            self.messages.append(
                Message(role="tool", content=result.model_text(), tool_call_id=call.id, name=call.name)
            )
            item = self.tools.get(call.name)
            if result.ok and item is not None and item.terminal:
                self._skip(calls[index + 1 :], "skipped: the task already ended")
                await self._remember_session()
                return runs.succeed(self.run, now=self.loop._clock.now(), answer=result.output, output=result.value)
        return None

    def _skip(self, calls: Sequence[ToolCall], reason: str) -> None:
        for call in calls:
            self.messages.append(Message(role="tool", content=reason, tool_call_id=call.id, name=call.name))

    async def _cancel_requested(self) -> bool:
        # no read per step: a cancel reaches the lease keeper (at once from this process, with the
        # next lease renewal from another)
        return self.run.cancel_requested or self.loop._leases.is_cancelled(self.run.id)

    async def _remember_session(self) -> None:
        run = self.run
        if run.session_id is None:
            return
        conversation = [m for m in self.messages if m.role != "system"]
        try:
            await self.loop._sessions.save(run.owner, run.session_id, conversation)
        except Exception:
            logger.warning("session_save_failed", exc_info=True)

    async def _record(self, step: Step) -> None:
        for sink in self.loop._sinks:
            try:
                await sink.record(step)
            except Exception as exc:
                logger.warning("trace_write_failed", step_no=step.step_no, sink=type(sink).__name__, error=str(exc))

    async def _persist_final(self, final: Run) -> None:
        # the trace is complete before the run is seen to end
        for sink in self.loop._sinks:
            try:
                await sink.flush()
            except Exception as exc:
                logger.warning("trace_flush_failed", sink=type(sink).__name__, error=str(exc))
        await self.loop._runs.save(final)
        logger.info(
            "run_finished",
            status=final.status.value,
            reason=final.failure_reason,
            steps=self.step_no,
            input_tokens=final.input_tokens,
            output_tokens=final.output_tokens,
        )

    def _end(self, status: RunStatus, reason: str) -> Run:
        return runs.end(self.run, status, now=self.loop._clock.now(), reason=reason)

    def _next_step(self) -> int:
        self.step_no += 1
        return self.step_no

    def _lease_until(self) -> datetime:
        return self.loop._clock.now() + timedelta(seconds=self.loop._config.lease_s)
