"""The sliding window over a conversation history."""

import pytest

from agentkit.domain.history import window
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import Message, ToolCall

SYSTEM = Message(role="system", content="You are helpful.")


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(text: str) -> Message:
    return Message(role="assistant", content=text)


def asks_for_tools(*ids: str) -> Message:
    return Message(role="assistant", tool_calls=tuple(ToolCall(id=ToolCallId(i), name="lookup") for i in ids))


def tool_result(call_id: str) -> Message:
    return Message(role="tool", content=f"result {call_id}", tool_call_id=ToolCallId(call_id), name="lookup")


# u1 a1 | u2 [a: c1, c2] t1 t2 a2 | u3
CONVERSATION = [
    SYSTEM,
    user("u1"),
    assistant("a1"),
    user("u2"),
    asks_for_tools("c1", "c2"),
    tool_result("c1"),
    tool_result("c2"),
    assistant("a2"),
    user("u3"),
]


@pytest.mark.parametrize("max_messages", [len(CONVERSATION), len(CONVERSATION) + 5])
def test_small_history_is_untouched(max_messages: int) -> None:
    assert window(CONVERSATION, max_messages) == CONVERSATION


def test_keeps_system_messages_and_the_newest() -> None:
    assert window(CONVERSATION, 3) == [SYSTEM, assistant("a2"), user("u3")]


def test_never_starts_with_an_orphan_tool_result() -> None:
    # Room for five non-system messages would start at t1, whose assistant turn is cut off.
    kept = window(CONVERSATION, 5)
    assert kept == [SYSTEM, assistant("a2"), user("u3")]


def test_keeps_an_assistant_tool_call_turn_with_all_its_results() -> None:
    kept = window(CONVERSATION, 6)
    assert kept == [
        SYSTEM,
        asks_for_tools("c1", "c2"),
        tool_result("c1"),
        tool_result("c2"),
        assistant("a2"),
        user("u3"),
    ]


@pytest.mark.parametrize("max_messages", range(1, len(CONVERSATION) + 1))
def test_every_cut_is_a_valid_history(max_messages: int) -> None:
    kept = window(CONVERSATION, max_messages)
    others = [m for m in kept if m.role != "system"]
    assert kept[0] == SYSTEM
    assert len(kept) <= max(max_messages, 1)
    assert others == CONVERSATION[len(CONVERSATION) - len(others) :]  # the newest, in order
    assert not others or others[0].role != "tool"
    answered = {call.id for m in others for call in m.tool_calls}
    assert all(m.tool_call_id in answered for m in others if m.role == "tool")


def test_every_system_message_is_kept_even_when_there_is_no_room() -> None:
    second_system = Message(role="system", content="Answer in French.")
    kept = window([SYSTEM, second_system, user("u1"), assistant("a1")], 2)
    assert kept == [SYSTEM, second_system]
