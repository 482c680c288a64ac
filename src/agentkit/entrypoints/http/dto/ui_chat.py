"""POST /v1/chat as the Vercel AI SDK's `useChat` sends it (its DefaultChatTransport): the chat's id and messages.

How a turn maps: the chat's `id` is the session (AgentKit keeps the conversation there, so the
messages before the newest user message are not sent to the model again: the session has them);
the newest user message's text parts, joined by a line break, are the turn's message. Every user
message needs a text part that is not blank (files and other parts alone are not a turn AgentKit
can take) and no U+0000 in its text; other roles' parts are not read.
"""

from typing import Annotated, Any, Literal, cast

import msgspec

from agentkit.entrypoints.http.dto.fields import GOAL_PATTERN, NO_NUL_PATTERN, SessionIdText, agent_name_type


class UIMessageIn(msgspec.Struct, kw_only=True):
    """A message of the chat (the AI SDK's UIMessage); its other fields are the client's own."""

    id: str
    role: Literal["system", "user", "assistant"]
    parts: list[dict[str, Any]]
    metadata: Any = None


class UIChatRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, rename={"message_id": "messageId"}):
    """What `useChat` posts: the chat's id (its session here), its messages (the newest user message is the
    turn), why it asks (`trigger`), and the `agent` to answer (in the transport's `body`), if not `default`.

    The server decodes a subclass made for its settings (`ui_chat_type`).
    """

    id: Annotated[SessionIdText, msgspec.Meta(description="The chat's id: the AgentKit session of its turns.")]
    messages: Annotated[list[UIMessageIn], msgspec.Meta(min_length=1)]
    trigger: Literal["submit-message", "regenerate-message"] | None = None
    message_id: str | None = None
    agent: str | None = None


def _messages_schema(max_goal_chars: int) -> dict[str, Any]:
    """The messages as JSON Schema: every user message has text, and there is one (what `chat_body` checks)."""
    user = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "role": {"const": "user"},
            "parts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string"},
                        "text": {"type": "string", "maxLength": max_goal_chars, "pattern": NO_NUL_PATTERN},
                    },
                    "required": ["type"],
                },
                "contains": {
                    "type": "object",
                    "properties": {"type": {"const": "text"}, "text": {"type": "string", "pattern": GOAL_PATTERN}},
                    "required": ["type", "text"],
                },
            },
            "metadata": {},
        },
        "required": ["id", "role", "parts"],
    }
    other = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "role": {"enum": ["system", "assistant"]},
            "parts": {
                "type": "array",
                "items": {"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]},
            },
            "metadata": {},
        },
        "required": ["id", "role", "parts"],
    }
    return {
        "items": {"oneOf": [user, other]},
        "contains": {"type": "object", "properties": {"role": {"const": "user"}}, "required": ["role"]},
    }


def ui_chat_type(max_goal_chars: int, agent_names: tuple[str, ...]) -> type[UIChatRequest]:
    """UIChatRequest with the server's message limit and its agents, so the document and the decoder agree."""
    messages = Annotated[
        list[UIMessageIn],
        msgspec.Meta(
            min_length=1,
            description=(
                "The chat's messages, oldest first. The newest user message's text parts are the turn "
                "(at most MAX_GOAL_CHARS, joined); the session keeps what came before."
            ),
            extra_json_schema={"extra": _messages_schema(max_goal_chars)},
        ),
    ]
    made = cast(
        type[UIChatRequest],
        msgspec.defstruct(
            "UIChatRequest",
            [("messages", messages), ("agent", agent_name_type(agent_names) | None, None)],
            bases=(UIChatRequest,),
            kw_only=True,
            forbid_unknown_fields=True,
            rename={"message_id": "messageId"},
            module=__name__,
        ),
    )
    made.__doc__ = UIChatRequest.__doc__
    return made
