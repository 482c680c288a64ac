"""A message as it was sent to the model, and its place in a run's conversation."""

from typing import Any, Literal

import msgspec

from agentkit.domain.messages import Message


class ToolCallView(msgspec.Struct, kw_only=True):
    """A tool call the model asked for."""

    id: str
    name: str
    arguments: dict[str, Any]


class MessageView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A message as it was sent to the model (redacted where the server is configured to)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCallView] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class StoredMessageView(msgspec.Struct, kw_only=True):
    """One message of a run's conversation: its place (`seq`, from 1; negative: a system prompt a handoff
    sent in place of message 1), its digest and the message."""

    seq: int
    digest: str
    message: MessageView


def message_view(message: Message) -> MessageView:
    """The wire view of a message."""
    calls = [ToolCallView(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls]
    return MessageView(
        role=message.role,
        content=message.content,
        tool_calls=calls or None,
        tool_call_id=message.tool_call_id,
        name=message.name,
    )
