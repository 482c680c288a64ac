"""Replay: rebuild a run's conversation and the policy's state from its stored steps, to resume it.

A run whose executor died is taken over by another one, which must go on exactly where the trace
ends: no LLM call whose response is stored is made again, no tool call whose result is stored is
run again. Replaying each stored response through the same pure policy gives back the decisions
the dead executor took (reminders included), so the rebuilt conversation is the one it had.

The calls of one turn run at once, so any of them may lack a stored result when the executor died:
the resumed run finishes that turn, making only the calls without one (`pending`), and feeds the
model every result in the order it asked for them.
"""

from collections.abc import Sequence

import msgspec

from agentkit.application.agent.config import STRUCTURED_OUTPUT_REMINDER
from agentkit.application.tools.registry import ToolRegistry
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import Message, ToolCall, Usage
from agentkit.domain.policy import CallTools, Finish, LoopLimits, LoopState, Remind, Stop, decide
from agentkit.domain.run import RunStatus
from agentkit.domain.steps import Step, ToolStep
from agentkit.domain.tools import ToolResult


class Answered(msgspec.Struct, frozen=True, kw_only=True):
    """The stored trace already holds the run's answer: it succeeds without another call.

    Attributes:
        answer: The final text.
        output: The structured output (a terminal tool's value), if any.
    """

    answer: str
    output: object = None


class ResumePoint(msgspec.Struct, kw_only=True):
    """Where a resumed run goes on.

    Attributes:
        messages: The conversation as the last executor had it after its last stored step.
        state: The policy's state after the stored responses.
        last_step_no: The number of the last stored step (the next one is numbered after it).
        usage: Tokens spent by the stored LLM calls.
        cost_usd: What the stored LLM calls cost (None: no price known for any).
        pending: The calls of the last stored turn that have no stored result, in order.
        turn: Every call of that turn, in order (set with `pending`): the turn to finish.
        stored: The stored results of that turn's other calls, by call id.
        pending_turn_step: The step number of the LLM step that made the pending calls.
        outcome: Set when the stored steps already decided the run's end (an answer, or a stop).
    """

    messages: list[Message]
    state: LoopState
    last_step_no: int = 0
    usage: Usage = Usage()
    pending: tuple[ToolCall, ...] = ()
    turn: tuple[ToolCall, ...] = ()
    stored: dict[ToolCallId, ToolResult] = {}
    pending_turn_step: int = 0
    outcome: Answered | Stop | None = None
    cost_usd: float | None = None


def replay(opening: Sequence[Message], steps: Sequence[Step], limits: LoopLimits, tools: ToolRegistry) -> ResumePoint:
    """The point a run resumes from, given its opening messages (system, history, goal) and stored steps.

    A failed LLM call (a step with an error) stored no response: it is made again. Steps come ordered
    by step number; a turn's tool steps follow its LLM step (call ids are matched within the turn,
    since some servers reuse them across turns). The calls of the last turn without a stored
    result are `pending`.
    """
    point = ResumePoint(messages=list(opening), state=LoopState())
    if any(step.redacted for step in steps):
        # the trace holds what the redaction settings let it keep, not what the model saw: going on
        # from it would feed the model (and the tools) something else
        point.outcome = Stop(
            status=RunStatus.FAILED,
            reason=(
                "its executor stopped, and it cannot resume: its stored steps were redacted "
                "(TRACE_PAYLOADS=false or TRACE_REDACT_FIELDS), so they do not hold the conversation"
            ),
        )
        return point
    input_tokens = output_tokens = 0
    cost = 0.0
    priced = False
    turn: CallTools | None = None
    turn_step = 0
    results: dict[str, ToolStep] = {}
    for step in steps:
        point.last_step_no = max(point.last_step_no, step.step_no)
        if isinstance(step, ToolStep):
            results[step.call_id] = step
            continue
        if turn is not None:
            _replay_calls(point, turn, results, tools)
            turn, results = None, {}
            if point.outcome is not None or point.pending:
                point.pending_turn_step = turn_step
                break
        input_tokens += step.usage.input_tokens
        output_tokens += step.usage.output_tokens
        if step.cost_usd is not None:
            cost, priced = cost + step.cost_usd, True
        if step.error is not None:
            continue
        response = step.response()
        decision, point.state = decide(point.state, response, limits)
        point.messages.append(response.to_message())
        if isinstance(decision, Finish):
            point.outcome = Answered(answer=decision.answer)
        elif isinstance(decision, Stop):
            point.outcome = decision
        elif isinstance(decision, Remind):
            point.messages.append(Message(role="user", content=STRUCTURED_OUTPUT_REMINDER))
        else:
            turn, turn_step = decision, step.step_no
        if point.outcome is not None:
            break
    else:
        if turn is not None:
            _replay_calls(point, turn, results, tools)
            point.pending_turn_step = turn_step
    point.usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    point.cost_usd = cost if priced else None
    return point


def _replay_calls(point: ResumePoint, turn: CallTools, results: dict[str, ToolStep], tools: ToolRegistry) -> None:
    """Append the stored results of a turn's calls in the model's order; or, when some have none, leave the turn open.

    A successful call of a terminal tool answers the run (it runs alone, after the calls before
    it: those have their results). Otherwise the calls without a stored result are pending, and
    the turn's results go to the conversation once the resumed run has them all.
    """
    for index, call in enumerate(turn.calls):
        step = results.get(call.id)
        item = tools.get(call.name)
        if step is not None and step.result.ok and item is not None and item.terminal:
            _append_results(point, turn.calls[: index + 1], results)
            point.outcome = Answered(answer=step.result.output, output=step.result.value)
            return
    pending = tuple(call for call in turn.calls if call.id not in results)
    if pending:
        point.pending, point.turn = pending, turn.calls
        point.stored = {call.id: results[call.id].result for call in turn.calls if call.id in results}
        return
    _append_results(point, turn.calls, results)


def _append_results(point: ResumePoint, calls: Sequence[ToolCall], results: dict[str, ToolStep]) -> None:
    for call in calls:
        step = results.get(call.id)
        if step is not None:
            text = step.result.model_text()
            point.messages.append(
                Message(role="tool", content=text, tool_call_id=call.id, name=call.name, is_error=not step.result.ok)
            )
