"""The loop policy: what comes after each LLM response."""

from typing import Any

import pytest

from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall, Usage
from agentkit.domain.policy import CallTools, Decision, Finish, LoopLimits, LoopState, Remind, Stop, decide
from agentkit.domain.run import RunStatus


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=ToolCallId(f"call-{name}"), name=name, arguments=arguments)


def calls(*tool_calls: ToolCall, tokens: int = 0) -> LLMResponse:
    return LLMResponse(tool_calls=tool_calls, usage=Usage(input_tokens=tokens))


def answer(text: str, tokens: int = 0) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(output_tokens=tokens))


def play(responses: list[LLMResponse], limits: LoopLimits | None = None) -> list[Decision]:
    """Feed responses in order, as the loop does, and return every decision."""
    state, decisions = LoopState(), []
    for response in responses:
        decision, state = decide(state, response, limits or LoopLimits())
        decisions.append(decision)
    return decisions


def test_tool_calls_then_an_answer_finishes() -> None:
    lookup = call("weather", city="Paris")
    first, second = play([calls(lookup), answer("It is sunny.")])
    assert first == CallTools(calls=(lookup,))
    assert second == Finish(answer="It is sunny.")


def test_state_counts_turns_and_tokens() -> None:
    _, state = decide(LoopState(), calls(call("a"), tokens=7), LoopLimits())
    _, state = decide(state, answer("done", tokens=5), LoopLimits())
    assert (state.turns, state.tokens) == (2, 12)


def test_refusal_stops_as_refused_even_with_tool_calls() -> None:
    response = LLMResponse(tool_calls=(call("a"),), refusal="I cannot help with that")
    (decision,) = play([response])
    assert isinstance(decision, Stop)
    assert decision.status is RunStatus.REFUSED
    assert "I cannot help with that" in decision.reason


def test_token_budget_exceeded_fails() -> None:
    limits = LoopLimits(token_budget=100)
    first, second = play([calls(call("a"), tokens=60), answer("done", tokens=41)], limits)
    assert isinstance(first, CallTools)
    assert isinstance(second, Stop)
    assert second.status is RunStatus.FAILED
    assert "101 tokens spent, the budget is 100" in second.reason


def test_spending_exactly_the_budget_is_fine() -> None:
    (decision,) = play([answer("done", tokens=100)], LoopLimits(token_budget=100))
    assert decision == Finish(answer="done")


@pytest.mark.parametrize("text", ["", "  \n "], ids=["empty", "whitespace"])
def test_no_answer_and_no_tool_call_fails(text: str) -> None:
    (decision,) = play([answer(text)])
    assert isinstance(decision, Stop)
    assert decision.status is RunStatus.FAILED


def test_still_calling_tools_on_the_last_step_exceeds_max_steps() -> None:
    limits = LoopLimits(max_steps=3)
    decisions = play([calls(call("a", n=1)), calls(call("a", n=2)), calls(call("a", n=3))], limits)
    assert [type(d) for d in decisions] == [CallTools, CallTools, Stop]
    last = decisions[-1]
    assert isinstance(last, Stop)
    assert last.status is RunStatus.MAX_STEPS_EXCEEDED
    assert last.reason == "the model still wanted to call tools after 3 steps (max_steps)"


def test_the_max_steps_reason_counts_one_step_in_the_singular() -> None:
    (decision,) = play([calls(call("a", n=1))], LoopLimits(max_steps=1))
    assert isinstance(decision, Stop)
    assert decision.reason == "the model still wanted to call tools after 1 step (max_steps)"


def test_an_answer_on_the_last_step_is_fine() -> None:
    limits = LoopLimits(max_steps=3)
    decisions = play([calls(call("a", n=1)), calls(call("a", n=2)), answer("done")], limits)
    assert decisions[-1] == Finish(answer="done")


def test_three_identical_calls_in_a_row_fail() -> None:
    same = call("search", q="x")
    decisions = play([calls(same), calls(same), calls(same)])
    assert [type(d) for d in decisions] == [CallTools, CallTools, Stop]
    last = decisions[-1]
    assert isinstance(last, Stop)
    assert last.status is RunStatus.FAILED
    assert "'search'" in last.reason
    assert "3 times in a row" in last.reason


def test_argument_key_order_does_not_hide_a_repeat() -> None:
    decisions = play([calls(call("f", a=1, b=2)), calls(call("f", b=2, a=1)), calls(call("f", a=1, b=2))])
    assert isinstance(decisions[-1], Stop)


def test_same_tool_with_other_arguments_is_not_a_repeat() -> None:
    decisions = play([calls(call("f", a=1)), calls(call("f", a=2)), calls(call("f", a=3))])
    assert all(isinstance(d, CallTools) for d in decisions)


def test_two_calls_alternating_fail() -> None:
    a, b = call("a", n=1), call("b", n=1)
    decisions = play([calls(a), calls(b), calls(a), calls(b)])
    assert [type(d) for d in decisions] == [CallTools, CallTools, CallTools, Stop]
    last = decisions[-1]
    assert isinstance(last, Stop)
    assert last.status is RunStatus.FAILED
    assert "alternating" in last.reason


@pytest.mark.parametrize(
    "sequence",
    [["a", "a", "b"], ["a", "b", "a"], ["a", "b", "b", "a"], ["a", "a", "b", "b"]],
    ids="-".join,
)
def test_patterns_that_are_not_loops_go_on(sequence: list[str]) -> None:
    decisions = play([calls(call(name)) for name in sequence])
    assert all(isinstance(d, CallTools) for d in decisions)


def test_alternating_with_changing_arguments_is_not_a_loop() -> None:
    decisions = play([calls(call("a", n=1)), calls(call("b")), calls(call("a", n=2)), calls(call("b"))])
    assert all(isinstance(d, CallTools) for d in decisions)


def test_repeats_inside_one_turn_count() -> None:
    same = call("fetch", url="https://example.com")
    (decision,) = play([calls(same, same, same)])
    assert isinstance(decision, Stop)
    assert decision.status is RunStatus.FAILED


def test_repeats_count_across_a_turn_boundary() -> None:
    same = call("fetch", url="https://example.com")
    decisions = play([calls(same, same), calls(same)])
    assert isinstance(decisions[-1], Stop)


def test_custom_repeat_limit_above_the_call_memory() -> None:
    limits = LoopLimits(repeat_limit=6, max_steps=20)
    same = call("poll")
    decisions = play([calls(same) for _ in range(6)], limits)
    assert [type(d) for d in decisions] == [CallTools] * 5 + [Stop]
    last = decisions[-1]
    assert isinstance(last, Stop)
    assert "6 times in a row" in last.reason


def test_a_plain_answer_where_structured_output_is_required_gets_bounded_reminders() -> None:
    limits = LoopLimits(output_required=True, output_reminders=2)

    decisions = play([answer("It is 12.5 EUR."), answer("12.5 EUR"), answer("twelve fifty")], limits)

    assert decisions[:2] == [Remind(reminder_no=1), Remind(reminder_no=2)]
    last = decisions[2]
    assert isinstance(last, Stop)
    assert last.status is RunStatus.FAILED
    assert last.reason == (
        "the model answered in plain text instead of giving the required structured output (reminded 2 times)"
    )


def test_an_empty_answer_where_structured_output_is_required_is_reminded_too() -> None:
    (decision,) = play([answer("")], LoopLimits(output_required=True))
    assert decision == Remind(reminder_no=1)


def test_no_reminder_is_sent_when_no_step_is_left() -> None:
    (decision,) = play([answer("12.5")], LoopLimits(output_required=True, max_steps=1))
    assert isinstance(decision, Stop)
    assert decision.status is RunStatus.FAILED
    assert "no step was left to remind it" in decision.reason


def test_tool_calls_are_still_run_when_structured_output_is_required() -> None:
    lookup = call("weather", city="Paris")
    (decision,) = play([calls(lookup)], LoopLimits(output_required=True))
    assert decision == CallTools(calls=(lookup,))


def test_a_run_over_its_cost_budget_stops() -> None:
    limits = LoopLimits(cost_budget=0.01)

    within, _ = decide(LoopState(), LLMResponse(text="hi"), limits, spent_usd=0.01)
    over, _ = decide(LoopState(), LLMResponse(text="hi"), limits, spent_usd=0.0100001)
    unknown, _ = decide(LoopState(), LLMResponse(text="hi"), limits, spent_usd=None)
    unlimited, _ = decide(LoopState(), LLMResponse(text="hi"), LoopLimits(), spent_usd=None)

    assert not isinstance(within, Stop)
    assert isinstance(over, Stop)
    assert over.reason == "cost budget exceeded: $0.0100001 spent, the budget is $0.01"
    assert isinstance(unknown, Stop)
    assert unknown.reason == "the cost budget cannot be kept: the model's price is unknown"
    assert not isinstance(unlimited, Stop)
