"""POST /v1/chat: a chat turn's request body (and the subclass the server decodes), and its answer."""

from typing import Annotated, Any, cast

import msgspec

from agentkit.application.runs.chat import ChatResult
from agentkit.entrypoints.http.dto.fields import GOAL_PATTERN, AgentNameText, SessionIdText, StatusText, agent_name_type
from agentkit.entrypoints.http.dto.runs import RunLinks, run_links


class ChatCreate(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """POST /v1/chat: a message, in a session (a new one when none is given), for an agent.

    The server decodes a subclass made for its settings (`chat_create_type`).
    """

    message: Annotated[str, msgspec.Meta(min_length=1, description="What the user says.")]
    session_id: SessionIdText | None = None
    agent: AgentNameText | None = None
    stream: Annotated[
        bool,
        msgspec.Meta(
            description=(
                "Answer with the turn's Server-Sent Events from its start to its end (as `Accept: "
                "text/event-stream` does) instead of JSON; the answer streams as it is written."
            )
        ),
    ] = False


def chat_create_type(max_goal_chars: int, agent_names: tuple[str, ...]) -> type[ChatCreate]:
    """ChatCreate with the server's message limit and its agents, so the document and the decoder agree."""
    message = Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=max_goal_chars,
            description="What the user says: not blank, no U+0000 (at most MAX_GOAL_CHARS).",
            extra_json_schema={"extra": {"pattern": GOAL_PATTERN}},
        ),
    ]
    made = cast(
        type[ChatCreate],
        msgspec.defstruct(
            "ChatCreate",
            [("message", message), ("agent", agent_name_type(agent_names) | None, None)],
            bases=(ChatCreate,),
            kw_only=True,
            forbid_unknown_fields=True,
            module=__name__,
        ),
    )
    made.__doc__ = ChatCreate.__doc__
    return made


class ChatView(msgspec.Struct, kw_only=True):
    """A chat turn's answer: the session to continue, the run that answered, and the answer."""

    session_id: str
    run_id: str
    agent: str
    status: StatusText
    answer: str | None
    output: Any
    failure_reason: str | None
    links: RunLinks


def chat_view(result: ChatResult) -> ChatView:
    """The wire view of a chat turn."""
    run = result.run
    url = f"/v1/runs/{run.id}"
    return ChatView(
        session_id=result.session_id,
        run_id=run.id,
        agent=run.agent,
        status=run.status.value,
        answer=run.answer,
        output=run.output,
        failure_reason=run.failure_reason,
        links=run_links(url),
    )
