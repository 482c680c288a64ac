"""RunExecution: one run while it executes: its conversation, its limits, and the turns of the loop."""

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

import msgspec
import structlog

from agentkit.application.agent.agent_tools import HANDOFF_TOOL_PREFIX, child_run_id
from agentkit.application.agent.answers import answered_result
from agentkit.application.agent.config import STRUCTURED_OUTPUT_PROMPT, STRUCTURED_OUTPUT_REMINDER
from agentkit.application.agent.deps import AgentChooser, LoopDeps
from agentkit.application.agent.durability import (
    hand_back,
    keep_lease,
    last_save,
    persist_final,
    store_calling,
    store_start,
)
from agentkit.application.agent.recorder import StepRecorder
from agentkit.application.agent.replay import Answered, replay
from agentkit.application.agent.tool_batch import ToolBatch, interrupted_reason
from agentkit.application.errors import LLMError, LLMUnavailable, StaleAttempt, StoreUnavailable
from agentkit.application.pipeline.entries import DeltaEntry
from agentkit.application.ports.llm_client import stream_of
from agentkit.application.tools.context import ToolContext
from agentkit.application.tools.final_result import final_result_tool
from agentkit.application.tools.registry import ToolRegistry
from agentkit.application.tools.within import TimeLimitPassed, call_within
from agentkit.domain import run as runs
from agentkit.domain.actions import ActionKind, Decision, PendingCall, call_digest
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, Message, ToolCall
from agentkit.domain.policy import CallTools, Finish, LoopLimits, LoopState, Remind, Stop, decide
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, Step, ToolStep
from agentkit.domain.tools import ToolResult, ToolSchema

logger = structlog.get_logger(__name__)
_NONE: frozenset[str] = frozenset()
_NO_CALLS: frozenset[ToolCallId] = frozenset()
_NO_AGENTS: dict[str, str] = {}


class RunExecution:
    """The state of one run while it executes (slotted: a thousand runs in flight hold a thousand).

    It reads its dependencies from `deps` and writes only its own state.
    """

    __slots__ = (
        "agent_tools",
        "agents",
        "approval_names",
        "claimed_from",
        "client_tool_names",
        "context",
        "deps",
        "handoffs",
        "limits",
        "messages",
        "named",
        "recorder",
        "resumed",
        "resumed_stream",
        "run",
        "schemas",
        "system_prompt",
        "tools",
        "turn_step",
    )

    def __init__(
        self,
        deps: LoopDeps,
        run: Run,
        *,
        claimed_from: RunStatus | None = None,
        agents: AgentChooser | None = None,
    ) -> None:
        self.run = run
        # set when the caller already claimed the run (from this status): the start is stored
        self.claimed_from = claimed_from
        self.agents = agents
        self.recorder = StepRecorder(deps)
        self._equip(deps)
        # LLM steps name their agent in runs that can hand off (or did): the trace says who asked
        self.named = bool(self.handoffs)
        # most runs have neither: they share one empty set instead of holding two (216 B each)
        self.client_tool_names = frozenset(schema.name for schema in run.client_tools) if run.client_tools else _NONE
        self.approval_names = frozenset(run.approval_required) if run.approval_required else _NONE
        self.context = ToolContext(run_id=run.id, owner=run.owner, session_id=run.session_id)
        self.limits = LoopLimits(
            # the steps its child runs took count too (the tree's max_steps)
            max_steps=run.max_steps - run.children_turns,
            repeat_limit=deps.config.repeat_limit,
            token_budget=run.token_budget,  # set when the run was created (CreateRun caps it)
            # what its child runs cost counts too (their tokens join the policy's count in `_open`)
            cost_budget=None if run.cost_budget is None else run.cost_budget - (run.children_cost_usd or 0.0),
            output_required=run.output_schema is not None,
        )
        self.messages: list[Message] = []
        # the calls a resumed run found without a stored result (some may have been started)
        self.resumed: frozenset[ToolCallId] = _NO_CALLS
        # the step number of the LLM step whose calls are being made (a pause names it)
        self.turn_step = 0
        # a resumed run's first streamed call says so first: an earlier attempt may have streamed part of it
        self.resumed_stream = False

    def _equip(self, deps: LoopDeps) -> None:
        """Take the model, tools and configuration of `deps` (the run's agent; another one's after a handoff)."""
        run = self.run
        self.deps = deps
        self.recorder.deps = deps
        self.tools: ToolRegistry = deps.tools
        self.system_prompt = deps.config.system_prompt
        if run.output_schema is not None:
            self.tools = self.tools.with_tools([final_result_tool(run.output_schema)])
            self.system_prompt = f"{self.system_prompt}\n{STRUCTURED_OUTPUT_PROMPT}"
        # the client's own tools are offered like any other, but never run here: a call pauses the run
        self.schemas: Sequence[ToolSchema] = (
            (*self.tools.schemas(), *run.client_tools) if run.client_tools else self.tools.schemas()
        )
        # other agents, as tools (a call pauses the run on a child run) and as handoffs: most agents have none
        config = deps.config
        agent_tools, handoffs = config.agent_tools, config.handoff_tools
        self.agent_tools = {item.name: item.agent for item in agent_tools} if agent_tools else _NO_AGENTS
        self.handoffs = {item.name: item.agent for item in handoffs} if handoffs else _NO_AGENTS
        if agent_tools or handoffs:
            self.schemas = (*self.schemas, *(item.schema for item in (*agent_tools, *handoffs)))

    async def go(self) -> Run:
        """Execute the run to its end and store that; return the run as stored."""
        # every log line of the run, adapters' included, carries its run_id
        log_context = structlog.contextvars.bind_contextvars(run_id=self.run.id)
        attempt_before = self.run.attempt if self.claimed_from is None else self.run.attempt - 1
        leases = self.deps.leases
        # held from the start: the lease stays renewed while a write is retried through an outage
        leases.hold(self.run.id)
        try:
            try:
                final = await self._execute()
            except asyncio.CancelledError:
                if self.run.status is RunStatus.RUNNING:
                    # the process is stopping: another executor resumes the run from its stored steps
                    await hand_back(self.deps, self.recorder, self.run)
                raise
            try:
                return await persist_final(self.deps, self.recorder, self.run, final)
            except asyncio.CancelledError:
                await last_save(self.deps, self.recorder, self.run, final)  # stopping while the store is down
                raise
        except StaleAttempt:
            if self.run.status is RunStatus.RUNNING and self.run.attempt > attempt_before:
                logger.warning("run_lost_lease")
            else:  # not claimed: another executor took it first, or it ended (a duplicate job, say)
                logger.info("run_not_claimed", attempt=attempt_before)
            raise
        finally:
            leases.release(self.run.id)
            structlog.contextvars.reset_contextvars(**log_context)

    async def _execute(self) -> Run:
        """Claim the run and drive it to its outcome (not yet stored)."""
        config = self.deps.config
        if self.claimed_from is None:
            resuming = self.run.status is RunStatus.RUNNING
            self.run = await store_start(self.deps, self.run)
        else:
            resuming = self.claimed_from is RunStatus.RUNNING
        if resuming:
            logger.info("run_resumed", attempt=self.run.attempt)
        else:
            logger.info("run_started", goal_chars=len(self.run.goal), max_steps=self.run.max_steps)
        try:
            # a timer only once the run waits on something: one that never does (a scripted model) arms none
            return await call_within(self._to_the_end(resuming), config.run_timeout_s)
        except TimeLimitPassed:
            return self.end(RunStatus.TIMED_OUT, f"the run took longer than {config.run_timeout_s:g} s")
        except LLMError as exc:
            return self.end(RunStatus.FAILED, f"the LLM call failed: {exc}")
        except StoreUnavailable as exc:
            return self.end(RunStatus.FAILED, str(exc))
        except StaleAttempt:
            raise
        except Exception as exc:
            logger.exception("run_crashed")
            return self.end(RunStatus.FAILED, f"internal error: {type(exc).__name__}")

    async def _to_the_end(self, resuming: bool) -> Run:
        state = await self._open(resuming)
        if isinstance(state, Run):
            return state
        return await self._turns(state)

    async def _open(self, resuming: bool) -> LoopState | Run:
        """The conversation to go on with and the policy's state; or the run's end, if its steps decided it."""
        run = self.run
        history = [] if run.session_id is None else await self.deps.sessions.load(run.owner, run.session_id)
        opening = [Message(role="system", content=self.system_prompt), *history, Message(role="user", content=run.goal)]
        if not resuming:
            self.messages = opening
            return LoopState()
        self.resumed_stream = True
        await self.deps.pipeline.deliver()  # steps this process recorded reach the trace before it is read
        steps = await self.deps.reader.steps(run.id)
        if not self.named:  # a run handed to this agent names the agent of each step from then on
            self.named = any(isinstance(step, LLMStep) and step.agent for step in steps)
        if self.named:
            opening[0] = self._after_stored_handoff(steps, opening[0])
        point = replay(opening, steps, self.limits, self.tools)
        self.messages = point.messages
        self.recorder.step_no = point.last_step_no
        self.run = msgspec.structs.replace(
            runs.with_usage(
                self.run,
                input_tokens=point.usage.input_tokens,
                output_tokens=point.usage.output_tokens,
                turns=point.state.turns,
            ),
            cost_usd=point.cost_usd,
        )
        if isinstance(point.outcome, Answered):
            await self._remember_session()
            return runs.succeed(
                self.run, now=self.deps.clock.now(), answer=point.outcome.answer, output=point.outcome.output
            )
        if point.outcome is not None:
            return self.end(point.outcome.status, point.outcome.reason)
        if self.run.action is not None and (not point.pending or self.run.action.turn_step != point.pending_turn_step):
            self.run = runs.action_done(self.run)  # answers for a turn that is over: they hold for no other
        state = point.state
        children = self.run.children_input_tokens + self.run.children_output_tokens
        if children:
            # one budget for the tree: what its child runs spent counts as the run's own
            state = msgspec.structs.replace(state, tokens=state.tokens + children)
            budget = self.limits.token_budget
            if budget is not None and state.tokens > budget:
                return self.end(
                    RunStatus.FAILED,
                    f"token budget exceeded: {state.tokens} tokens spent by this run and its child runs, "
                    f"the budget is {budget}",
                )
        if self.run.children_turns and point.state.turns >= self.limits.max_steps:
            return self.end(
                RunStatus.MAX_STEPS_EXCEEDED,
                f"max_steps exceeded: {point.state.turns + self.run.children_turns} steps taken by this run and "
                f"its child runs, max_steps is {self.run.max_steps}",
            )
        if point.pending:
            self.resumed = frozenset(call.id for call in point.pending)
            self.turn_step = point.pending_turn_step
            finished = await self._call_tools(point.turn, point.stored)
            if finished is not None:
                return finished
        return state

    async def _turns(self, state: LoopState) -> Run:
        """The loop: ask the model, act on the policy's decision, until the run ends."""
        while True:
            if self.cancel_requested():
                return self.end(RunStatus.CANCELLED, "cancelled on request")
            response = await self._ask_model()
            decision, state = decide(state, response, self.limits, spent_usd=self.run.cost_usd)
            self.messages.append(response.to_message())
            if isinstance(decision, Finish):
                await self._remember_session()
                return runs.succeed(self.run, now=self.deps.clock.now(), answer=decision.answer)
            if isinstance(decision, Stop):
                return self.end(decision.status, decision.reason)
            if isinstance(decision, Remind):
                logger.info("structured_output_reminder", reminder_no=decision.reminder_no)
                self.messages.append(Message(role="user", content=STRUCTURED_OUTPUT_REMINDER))
                continue
            assert isinstance(decision, CallTools)  # noqa: S101 - the Decision union has four members
            finished = await self._call_tools(decision.calls)
            if finished is not None:
                return finished

    async def _ask_model(self) -> LLMResponse:
        # a stalled loop may have lost the run to another attempt: it must not ask for this turn too
        await keep_lease(self.deps, self.run)
        clock = self.deps.clock
        recorder = self.recorder
        prompt, sent = recorder.prompt_of(self.messages, self.schemas)
        started = clock.monotonic()
        failure: LLMError | None = None
        try:
            if self.run.stream or self.deps.followed.followed(self.run.id):
                response = await self._streamed()
            else:
                response = await self.deps.llm.chat(self.messages, self.schemas)
        except LLMError as exc:
            # the failed call is a step too: the trace shows what it cost and why it failed
            failure, response = exc, LLMResponse(attempts=exc.attempts)
        cost = recorder.cost_of(response.usage)
        self.run = runs.add_spend(self.run, response.usage, cost)
        await recorder.record(
            LLMStep(
                run_id=self.run.id,
                step_no=self._turn_step(),
                created_at=clock.now(),
                latency_ms=(clock.monotonic() - started) * 1000,
                usage=response.usage,
                text=response.text,
                tool_calls=response.tool_calls,
                finish_reason=None if failure else response.finish_reason,
                attempts=response.attempts,
                error=None if failure is None else str(failure),
                refusal=response.refusal,
                provider_data=response.provider_data,
                error_type=None if failure is None else type(failure).__name__,
                prompt=prompt,
                response_id=response.response_id,
                response_model=response.response_model,
                provider_finish_reason=response.provider_finish_reason,
                cost_usd=cost,
                agent=self.run.agent if self.named else None,
            ),
            sent,
        )
        if failure is not None:
            raise failure
        return response

    async def _streamed(self) -> LLMResponse:
        """The model's answer through its stream, each fragment handed to the run's followers as it comes."""
        run_id, step_no = self.run.id, self.recorder.step_no + 1
        pipeline = self.deps.pipeline
        if self.resumed_stream:
            # an earlier attempt may have streamed part of this step before it died: followers drop it
            self.resumed_stream = False
            pipeline.put_delta(DeltaEntry(run_id, step_no, None))
        answer = stream_of(self.deps.llm, self.messages, self.schemas)
        try:
            async for item in answer:
                if isinstance(item, LLMResponse):
                    return item
                if not pipeline.put_delta(DeltaEntry(run_id, step_no, item)):
                    await pipeline.room()
        finally:
            close = getattr(answer, "aclose", None)
            if close is not None:  # the provider's stream is let go at once, not when collected
                await close()
        raise LLMUnavailable("the model's stream ended without its response")

    async def _call_tools(
        self, calls: Sequence[ToolCall], stored: Mapping[ToolCallId, ToolResult] | None = None
    ) -> Run | None:
        """Make a turn's calls (those without a `stored` result) and feed the results back in the model's order.

        One call is made right here (most turns: no task, no batch); several run as a `ToolBatch`,
        at once. So does one call in a worker process: a cancel must be able to kill it.
        """
        if self.handoffs:
            handoff = next((call for call in calls if call.name in self.handoffs), None)
            if handoff is not None:
                return await self._hand_off(calls, handoff, stored or {})
        waiting = self._waiting(calls, stored)
        if waiting:
            await self.deps.pipeline.deliver()  # the writer tells whether a step was stored redacted
            return self._pause(waiting)
        if len(calls) > 1 or stored or self.tools.runs_in_process(calls[0].name):
            return await ToolBatch(self, calls, stored or {}).run()
        call = calls[0]
        clock = self.deps.clock
        answered = None if self.run.action is None else self.run.action.answer_of(call.id)
        if answered is not None and answered.decision is not Decision.APPROVE:
            started_at = clock.now()
            result = answered_result(call, answered, self.tools)
        else:
            interrupted = await self._before_call(call)
            if interrupted is not None:
                self.skip(calls, "skipped: the run could not go on")
                return self.end(RunStatus.FAILED, interrupted)
            started_at = clock.now()
            result = await self.tools.execute(call, self.context)
        await self.recorder.record(self.tool_step(call, result, started_at))
        if self.run.calling:
            self.run = runs.mark_calling(self.run, ())  # stored with the run's next write
        self.messages.append(
            Message(
                role="tool", content=result.model_text(), tool_call_id=call.id, name=call.name, is_error=not result.ok
            )
        )
        item = self.tools.get(call.name)
        if result.ok and item is not None and item.terminal:
            return await self.succeed_with(result)
        if self.run.action is not None:
            self.run = runs.action_done(self.run)  # stored with the run's next write
        return None

    async def _hand_off(
        self, calls: Sequence[ToolCall], handoff: ToolCall, stored: Mapping[ToolCallId, ToolResult]
    ) -> Run | None:
        """The model handed the run to another agent: the conversation goes on with that agent's everything.

        Only the turn's first handoff counts; the turn's other calls are not made (their results say
        so, so the conversation stays whole). The trace is stored, then the run as the new agent's
        (fenced, like a call about to start): a resumed run goes on as the agent it names.
        """
        source, target = self.run.agent, self.handoffs[handoff.name]
        if self.agents is None:
            return self.end(RunStatus.FAILED, f"it cannot hand off to {target!r}: this process has no agents")
        for call in calls:
            result = stored.get(call.id)
            if result is None:
                started_at = self.deps.clock.now()
                if call is handoff:
                    result = ToolResult(ok=True, output=f"Handed off from {source!r} to {target!r}.")
                else:
                    result = ToolResult(ok=False, error=f"not run: the conversation was handed to {target!r}")
                await self.recorder.record(self.tool_step(call, result, started_at))
            self.messages.append(
                Message(
                    role="tool",
                    content=result.model_text(),
                    tool_call_id=call.id,
                    name=call.name,
                    is_error=not result.ok,
                )
            )
        logger.info("run_handed_off", source=source, target=target)
        self.run = runs.hand_off(self.run, agent=target, agent_version=self.agents.version_of(target))
        self.named = True
        self._equip(self.agents.deps_for(self.deps, target))
        self.messages[0] = Message(role="system", content=self.system_prompt)
        self.run = await store_calling(self.deps, self.recorder, self.run, ())
        return None

    def _after_stored_handoff(self, steps: Sequence[Step], system: Message) -> Message:
        """The system message to go on with: the agent's the trace last handed the run to, should the run
        not have been saved as that agent's (its executor died between the two writes)."""
        target = None
        for step in steps:
            if isinstance(step, ToolStep) and step.result.ok and step.tool_name.startswith(HANDOFF_TOOL_PREFIX):
                target = step.tool_name.removeprefix(HANDOFF_TOOL_PREFIX)
        if target is not None:  # the trace's message 1 is the first agent's prompt, not this one's
            self.recorder.prompts.handed_off()
        if target is None or target == self.run.agent or self.agents is None:
            return system
        logger.info("run_handoff_resumed", target=target)
        self.run = runs.hand_off(self.run, agent=target, agent_version=self.agents.version_of(target))
        self._equip(self.agents.deps_for(self.deps, target))
        return Message(role="system", content=self.system_prompt)

    def tool_step(self, call: ToolCall, result: ToolResult, started_at: datetime) -> ToolStep:
        """The trace's step of a call that just ended (numbered now: steps are numbered as they end)."""
        return ToolStep(
            run_id=self.run.id,
            step_no=self.recorder.next_step(),
            created_at=self.deps.clock.now(),
            latency_ms=result.latency_ms,
            call_id=call.id,
            tool_name=call.name,
            arguments=call.arguments,
            result=result,
            started_at=started_at,
        )

    async def succeed_with(self, result: ToolResult) -> Run:
        """A terminal tool's call succeeded: the run ends with its value as the answer."""
        await self._remember_session()
        self.run = runs.action_done(self.run)
        return runs.succeed(self.run, now=self.deps.clock.now(), answer=result.output, output=result.value)

    def _waiting(
        self, calls: Sequence[ToolCall], stored: Mapping[ToolCallId, ToolResult] | None
    ) -> tuple[PendingCall, ...]:
        """The calls of this turn that need an answer no one gave yet: an approval, or a client tool's output."""
        waiting = []
        action = self.run.action
        for call in calls:
            if stored and call.id in stored:
                continue
            callee = self.agent_tools.get(call.name) if self.agent_tools else None
            if callee is not None:
                kind = ActionKind.CHILD_RUN
            elif call.name in self.client_tool_names:
                kind = ActionKind.CLIENT_TOOL
            elif call.name in self.approval_names or self.tools.requires_approval(call.name):
                kind = ActionKind.APPROVAL
            else:
                continue
            if action is not None and action.answer_of(call.id) is not None:
                continue
            digest = call_digest(call.name, call.arguments)
            child = None if callee is None else child_run_id(self.run.id, self.turn_step, call.id)
            waiting.append(
                PendingCall(
                    call_id=call.id,
                    name=call.name,
                    arguments=call.arguments,
                    digest=digest,
                    kind=kind,
                    child_run_id=child,
                    agent=callee,
                )
            )
        return tuple(waiting)

    def _pause(self, waiting: tuple[PendingCall, ...]) -> Run:
        """The run paused on these calls: no tool of the turn runs until every one is answered.

        A paused run goes on from its stored steps: one whose steps were stored redacted could not, so
        it ends now, saying why, rather than after someone answered.
        """
        if self.recorder.redacted:
            names = ", ".join(sorted({call.name for call in waiting}))
            return self.end(
                RunStatus.FAILED,
                f"its calls of {names} need an answer, but it cannot pause: its steps were stored redacted "
                "(TRACE_PAYLOADS=false or TRACE_REDACT_FIELDS), so it could not go on from them",
            )
        now = self.deps.clock.now()
        config = self.deps.config
        # a client has until APPROVAL_TTL_S to answer; child runs end by their own limits, and the
        # sweeper looks at a waiting run's children once a lease has passed (an end not passed on)
        client_owes = any(call.kind is not ActionKind.CHILD_RUN for call in waiting)
        until = now + timedelta(seconds=config.approval_ttl_s if client_owes else config.lease_s)
        logger.info("run_paused", calls=[call.call_id for call in waiting], kinds=[call.kind for call in waiting])
        return runs.pause(self.run, waiting, now=now, until=until, turn_step=self.turn_step)

    def _turn_step(self) -> int:
        """The number of the LLM step about to be recorded; its calls, if any, belong to it."""
        self.turn_step = self.recorder.next_step()
        return self.turn_step

    async def _before_call(self, call: ToolCall) -> str | None:
        """Make a call safe to start: say why it must not be (a side effect that may have happened), or record it.

        `before_calls` for one call, without its lists: the path of most turns.
        """
        if self.tools.is_idempotent(call.name):
            return None
        if call.id in self.resumed and call.id in self.run.calling:
            return interrupted_reason((call,))
        self.run = await store_calling(self.deps, self.recorder, self.run, (call.id,))
        return None

    async def before_calls(self, calls: Sequence[ToolCall]) -> str | None:
        """Make calls safe to start at once: say why they must not (side effects that may have run), or record them.

        Idempotent tools need nothing. Non-idempotent ones are recorded on the run (`calling`), all
        in one write, before any starts; a resumed run that finds a pending call recorded so cannot
        know whether it ran, and does not run it again.
        """
        tools = self.tools
        risky = [call for call in calls if not tools.is_idempotent(call.name)]
        if not risky:
            return None
        calling = self.run.calling
        interrupted = [call for call in risky if call.id in self.resumed and call.id in calling]
        if interrupted:
            return interrupted_reason(interrupted)
        self.run = await store_calling(self.deps, self.recorder, self.run, tuple(call.id for call in risky))
        return None

    def skip(self, calls: Sequence[ToolCall], reason: str) -> None:
        """Answer calls that will not be made (the model's turn must stay whole for the provider)."""
        for call in calls:
            self.messages.append(Message(role="tool", content=reason, tool_call_id=call.id, name=call.name))

    def cancel_requested(self) -> bool:
        """Whether the run is to cancel (at this step boundary)."""
        # no read per step: a cancel reaches the lease keeper (at once from this process, with the
        # next lease renewal from another)
        return self.run.cancel_requested or self.deps.leases.is_cancelled(self.run.id)

    async def _remember_session(self) -> None:
        run = self.run
        if run.session_id is None:
            return
        conversation = [m for m in self.messages if m.role != "system"]
        try:
            await self.deps.sessions.save(run.owner, run.session_id, conversation)
        except Exception:
            logger.warning("session_save_failed", exc_info=True)

    def end(self, status: RunStatus, reason: str) -> Run:
        """The run ended with this status, for this reason (not yet stored)."""
        return runs.end(self.run, status, now=self.deps.clock.now(), reason=reason)
