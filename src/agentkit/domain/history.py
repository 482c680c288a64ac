"""The sliding window over a conversation history."""

from collections.abc import Sequence

from agentkit.domain.messages import Message


def window(messages: Sequence[Message], max_messages: int) -> list[Message]:
    """Keep the system messages and the newest others, at most `max_messages` in all.

    The window never starts with a tool result whose assistant turn was cut off (providers reject
    such a history), so the cut moves forward past any leading tool results. An assistant turn
    that asked for tools is always kept with its results, because they follow it.
    """
    system = [m for m in messages if m.role == "system"]
    rest = [m for m in messages if m.role != "system"]
    room = max(max_messages - len(system), 0)
    start = max(len(rest) - room, 0)
    while start < len(rest) and rest[start].role == "tool":
        start += 1
    return [*system, *rest[start:]]
