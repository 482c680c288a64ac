"""The pure loop policy: given the loop's state and the newest LLM response, decide what comes next.

The application's loop performs the I/O around these decisions; nothing here reads a clock or
touches the world, so every rule is tested with plain values.
"""

from typing import Any

import msgspec

from agentkit.domain.messages import LLMResponse, ToolCall
from agentkit.domain.run import RunStatus

# gc=False below: frozen values that can never refer back to themselves. Untracked by the garbage
# collector, the thousands a busy process makes cost it nothing (and do not bring its passes sooner).


class LoopLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The limits one run obeys.

    Attributes:
        max_steps: LLM turns the run may take; a model still calling tools on the last one stops the run.
        repeat_limit: Identical calls (same tool, same arguments) in a row that stop the run.
        token_budget: Total input plus output tokens the run may spend, if limited.
        cost_budget: US dollars the run may spend, if limited. A run whose model has no known price
            cannot keep to one, and stops after its first call rather than spend without a bound.
        output_required: The run must end with structured output (a terminal tool such as
            `final_result`), so a plain-text answer does not finish it.
        output_reminders: How many times a model that answers in plain text instead is reminded
            before the run fails.
    """

    max_steps: int = 10
    repeat_limit: int = 3
    token_budget: int | None = None
    cost_budget: float | None = None
    output_required: bool = False
    output_reminders: int = 2


class LoopState(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What the policy remembers between turns.

    Attributes:
        turns: LLM responses seen so far.
        tokens: Tokens spent so far.
        recent_calls: Signatures of the latest tool calls, newest last (bounded).
        reminders: Times the model was reminded to give its structured output.
    """

    turns: int = 0
    tokens: int = 0
    recent_calls: tuple[bytes, ...] = ()
    reminders: int = 0


class CallTools(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Run these tool calls, in order, then ask the model again."""

    calls: tuple[ToolCall, ...]


class Finish(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The model answered: the run succeeds with this text."""

    answer: str


class Remind(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The model answered in plain text where structured output is required: tell it so and ask again."""

    reminder_no: int


class Stop(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The run ends without success."""

    status: RunStatus
    reason: str


Decision = CallTools | Finish | Remind | Stop

_CALL_MEMORY = 4  # enough for both the A-A-A and the A-B-A-B patterns


def call_signature(call: ToolCall) -> bytes:
    """A canonical fingerprint of a call: its name and its arguments with sorted keys."""
    return call.name.encode() + b"\x00" + msgspec.json.encode(call.arguments, order="sorted")


def decide(
    state: LoopState, response: LLMResponse, limits: LoopLimits, *, spent_usd: float | None = None
) -> tuple[Decision, LoopState]:
    """Decide the next action after an LLM response and return it with the updated state.

    `spent_usd` is what the run's calls have cost so far, this one included (None: no price known).
    """
    turns, tokens = state.turns + 1, state.tokens + response.usage.total_tokens
    if response.refusal is not None:
        state = msgspec.structs.replace(state, turns=turns, tokens=tokens)
        return Stop(status=RunStatus.REFUSED, reason=f"the model refused: {response.refusal}"), state
    if limits.token_budget is not None and tokens > limits.token_budget:
        state = msgspec.structs.replace(state, turns=turns, tokens=tokens)
        reason = f"token budget exceeded: {tokens} tokens spent, the budget is {limits.token_budget}"
        return Stop(status=RunStatus.FAILED, reason=reason), state
    if limits.cost_budget is not None:
        over = _over_cost_budget(spent_usd, limits.cost_budget)
        if over is not None:
            return Stop(status=RunStatus.FAILED, reason=over), msgspec.structs.replace(
                state, turns=turns, tokens=tokens
            )
    if not response.tool_calls:
        state = msgspec.structs.replace(state, turns=turns, tokens=tokens)
        if limits.output_required:
            return _missing_output(state, limits)
        if not response.text.strip():
            return Stop(status=RunStatus.FAILED, reason="the model returned neither an answer nor a tool call"), state
        return Finish(answer=response.text), state

    recent = state.recent_calls
    memory = max(_CALL_MEMORY, limits.repeat_limit)
    for call in response.tool_calls:
        recent = (*recent, call_signature(call))[-memory:]
        loop_reason = _repetition(recent, call, limits.repeat_limit)
        if loop_reason is not None:
            stopped = msgspec.structs.replace(state, turns=turns, tokens=tokens, recent_calls=recent)
            return Stop(status=RunStatus.FAILED, reason=loop_reason), stopped
    # one new state a turn (this is every turn's path)
    state = msgspec.structs.replace(state, turns=turns, tokens=tokens, recent_calls=recent)
    if turns >= limits.max_steps:
        reason = f"the model still wanted to call tools after {plural(limits.max_steps, 'step')} (max_steps)"
        return Stop(status=RunStatus.MAX_STEPS_EXCEEDED, reason=reason), state
    return CallTools(calls=response.tool_calls), state


def _over_cost_budget(spent_usd: float | None, budget: float) -> str | None:
    if spent_usd is None:
        return "the cost budget cannot be kept: the model's price is unknown"
    if spent_usd > budget:
        return f"cost budget exceeded: ${spent_usd:.6g} spent, the budget is ${budget:.6g}"
    return None


def _missing_output(state: LoopState, limits: LoopLimits) -> tuple[Decision, LoopState]:
    """A run that must end with structured output got a plain answer: remind the model, a bounded number of times."""
    if state.reminders < limits.output_reminders and state.turns < limits.max_steps:
        reminded = msgspec.structs.replace(state, reminders=state.reminders + 1)
        return Remind(reminder_no=reminded.reminders), reminded
    if state.reminders >= limits.output_reminders:
        why = f"reminded {state.reminders} time{'' if state.reminders == 1 else 's'}"
    else:
        why = "no step was left to remind it"
    reason = f"the model answered in plain text instead of giving the required structured output ({why})"
    return Stop(status=RunStatus.FAILED, reason=reason), state


def _repetition(recent: tuple[bytes, ...], call: ToolCall, repeat_limit: int) -> str | None:
    if len(recent) >= repeat_limit and len(set(recent[-repeat_limit:])) == 1:
        return f"repeated call: {call.name!r} with the same arguments {repeat_limit} times in a row"
    if len(recent) >= 4 and recent[-1] == recent[-3] and recent[-2] == recent[-4] and recent[-1] != recent[-2]:
        return f"repeated calls: {call.name!r} and another call alternating with the same arguments"
    return None


def describe_arguments(arguments: dict[str, Any]) -> str:
    """Arguments as compact JSON, for messages and logs."""
    return msgspec.json.encode(arguments, order="sorted").decode()


def plural(count: int, noun: str) -> str:
    """`1 step`, `3 steps`: the count and the noun, in the number it needs."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
