"""The agent loop: ask the model, run the tools it asks for, feed the results back, repeat."""

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

import structlog

from agentkit.application.agent.config import STRUCTURED_OUTPUT_PROMPT, STRUCTURED_OUTPUT_REMINDER, AgentConfig
from agentkit.application.agent.lease import LeaseKeeper
from agentkit.application.backoff import Backoff, Sleep, until_stored
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
T = TypeVar("T")

# After the process was told to stop (the task cancelled), one more try to store what the run has, for
# at most this long: shutdown must not wait on a store that is down.
LAST_SAVE_S = 3.0


class AgentLoop:
    """Runs one agent run from `pending` to a terminal status.

    Rules:
    - The conversation is the system prompt, the session's history, then the goal; tool output
      goes only into tool-role messages, never into the system prompt.
    - Tool calls of one turn run one after another, in the order the model gave them.
    - Every LLM call and every tool call is recorded as a step. A run's final status is written
      only once its trace is stored (the durable sink flushed); a run whose trace could not be
      stored does not end `succeeded` but `failed`, its answer kept. Observers that fail are logged
      and the run goes on.
    - The writes a run's outcome depends on (its start, its trace, its final status) are retried
      through a store outage, with backoff, for up to `store_retry_s`, while the lease keeper keeps
      the run's lease; StaleAttempt stops them at once.
    - Limits: max steps, repeated calls and token budget (the pure policy), the run timeout, each
      tool's timeout (the registry), and cancel, honoured at every step boundary.
    - The final status is persisted whatever happens, also when the task is cancelled (one last
      bounded try, LAST_SAVE_S). A run that cannot store it, the store down past the retry budget or
      at shutdown, says so in the log and is left to the sweeper, which ends it `expired` once its
      lease lapses: every run still reaches a terminal status.
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
        sleep: Sleep = asyncio.sleep,
        backoff: Backoff | None = None,
    ) -> None:
        self._llm = llm
        self._tools = tools
        self._runs = runs
        self._sinks = (trace, *observers)
        self._sessions = sessions
        self._clock = clock
        self._config = config
        self._sleep = sleep
        self._backoff = backoff or Backoff()
        # `sleep` paces the store retries only; leases keep real time (a lease is a promise to other processes)
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
        "trace_gaps",
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
        self.trace_gaps = 0  # steps the durable trace sink refused to take

    async def go(self) -> Run:
        # every log line of the run, adapters' included, carries its run_id
        log_context = structlog.contextvars.bind_contextvars(run_id=self.run.id)
        leases = self.loop._leases
        # held from the start: the lease stays renewed while a write is retried through an outage
        leases.hold(self.run.id)
        try:
            try:
                final = await self._execute()
            except asyncio.CancelledError:
                await self._last_save(self._end(RunStatus.FAILED, "interrupted: the process running it stopped"))
                raise
            try:
                return await self._persist_final(final)
            except asyncio.CancelledError:
                await self._last_save(final)  # stopping while the store is down: one short last try
                raise
        except StaleAttempt:
            logger.warning("run_lost_lease")
            raise
        finally:
            leases.release(self.run.id)
            structlog.contextvars.reset_contextvars(**log_context)

    async def _execute(self) -> Run:
        """Start the run and drive it to its outcome (not yet stored)."""
        config = self.loop._config
        await self._start()
        logger.info("run_started", goal_chars=len(self.run.goal), max_steps=self.run.max_steps)
        try:
            async with asyncio.timeout(config.run_timeout_s):
                return await self._loop()
        except TimeoutError:
            return self._end(RunStatus.TIMED_OUT, f"the run took longer than {config.run_timeout_s:g} s")
        except LLMError as exc:
            return self._end(RunStatus.FAILED, f"the LLM call failed: {exc}")
        except StoreUnavailable as exc:
            return self._end(RunStatus.FAILED, str(exc))
        except StaleAttempt:
            raise
        except Exception as exc:
            logger.exception("run_crashed")
            return self._end(RunStatus.FAILED, f"internal error: {type(exc).__name__}")

    async def _start(self) -> None:
        pending, clock = self.run, self.loop._clock

        async def store_start() -> Run:
            started = runs.start(pending, now=clock.now(), lease_until=self._lease_until())
            await self.loop._runs.save(started)
            return started

        try:
            self.run = await self._until_stored(store_start, "run_start", self._deadline())
        except StoreUnavailable:
            # Never started: the run stays pending in the store; once its lease lapses the sweeper
            # ends it `expired` (worker_lost), so it still reaches a terminal status.
            logger.error("run_start_abandoned", retried_s=self.loop._config.store_retry_s)
            raise

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
        for index, sink in enumerate(self.loop._sinks):
            try:
                await sink.record(step)
            except Exception as exc:
                if index == 0:
                    self.trace_gaps += 1  # the durable trace lacks this step: the run cannot claim success
                logger.warning("trace_write_failed", step_no=step.step_no, sink=type(sink).__name__, error=str(exc))

    async def _persist_final(self, final: Run, *, budget_s: float | None = None) -> Run:
        """Store the trace, then the final status, retrying both through an outage; return the run stored.

        Args:
            final: The run as it ended.
            budget_s: How long to keep retrying (default `store_retry_s`); the status gets at least
                LAST_SAVE_S of its own after the trace.

        Raises:
            StoreUnavailable: the store stayed unavailable all along. The final status was not written;
                the run stays `running` until its lease lapses and the sweeper ends it `expired`
                (worker_lost).
            StaleAttempt: a newer attempt (or the sweeper) owns the run now.
        """
        clock = self.loop._clock
        deadline = clock.monotonic() + (self.loop._config.store_retry_s if budget_s is None else budget_s)
        final = await self._store_trace(final, deadline)
        deadline = max(deadline, clock.monotonic() + LAST_SAVE_S)
        try:
            await self._until_stored(lambda: self.loop._runs.save(final), "run_final", deadline)
        except StoreUnavailable as exc:
            logger.error("run_final_save_abandoned", status=final.status.value, error=str(exc))
            raise
        logger.info(
            "run_finished",
            status=final.status.value,
            reason=final.failure_reason,
            steps=self.step_no,
            input_tokens=final.input_tokens,
            output_tokens=final.output_tokens,
        )
        return final

    async def _store_trace(self, final: Run, deadline: float) -> Run:
        """Wait until the run's steps are stored; the run as it may end, given what the trace holds."""
        durable, *observers = self.loop._sinks
        for sink in observers:
            try:
                await sink.flush()
            except Exception as exc:
                logger.warning("trace_flush_failed", sink=type(sink).__name__, error=str(exc))
        missing = f"{self.trace_gaps} of its {self.step_no} steps could not be recorded" if self.trace_gaps else None
        if missing is None:
            try:
                await self._until_stored(lambda: self._flush(durable, deadline), "trace", deadline)
            except StoreUnavailable as exc:
                missing = f"its steps could not be stored ({exc})"
        if missing is None:
            return final
        logger.error("trace_incomplete", status=final.status.value, reason=missing)
        if final.status is not RunStatus.SUCCEEDED:
            return final
        # Success means the whole trace is there to audit it; the answer is kept for the caller all the same.
        return self._end(RunStatus.FAILED, f"the run finished, but {missing}", answer=final.answer)

    async def _flush(self, sink: TraceSink, deadline: float) -> None:
        # A durable sink's flush waits while it retries its writes; a sink that raises is retried here.
        try:
            async with asyncio.timeout(max(deadline - self.loop._clock.monotonic(), 0)):
                await sink.flush()
        except TimeoutError:
            raise StoreUnavailable("the trace store did not take the steps in time") from None
        except StoreUnavailable:
            raise
        except Exception as exc:
            raise StoreUnavailable(f"the trace store failed: {exc}") from exc

    async def _last_save(self, final: Run) -> None:
        """A short, bounded try to store the run's trace and status when the process is stopping."""
        try:
            # shielded: a second cancel does not cut the write off halfway; bounded: shutdown never
            # waits on a store that is down for longer than this
            async with asyncio.timeout(2 * LAST_SAVE_S):
                await asyncio.shield(self._persist_final(final, budget_s=LAST_SAVE_S))
        except StoreUnavailable:
            pass  # logged as abandoned; the sweeper ends the run `expired` once its lease lapses
        except TimeoutError:
            logger.error("run_final_save_abandoned", status=final.status.value, error="timed out at shutdown")
        except StaleAttempt:
            logger.warning("run_lost_lease")

    def _until_stored(self, write: Callable[[], Awaitable[T]], what: str, deadline: float) -> Awaitable[T]:
        loop = self.loop
        return until_stored(
            write, what=what, deadline=deadline, clock=loop._clock, sleep=loop._sleep, backoff=loop._backoff
        )

    def _deadline(self) -> float:
        return self.loop._clock.monotonic() + self.loop._config.store_retry_s

    def _end(self, status: RunStatus, reason: str, *, answer: str | None = None) -> Run:
        return runs.end(self.run, status, now=self.loop._clock.now(), reason=reason, answer=answer)

    def _next_step(self) -> int:
        self.step_no += 1
        return self.step_no

    def _lease_until(self) -> datetime:
        return self.loop._clock.now() + timedelta(seconds=self.loop._config.lease_s)
